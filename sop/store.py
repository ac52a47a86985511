"""Where SOPs and memory live under GA_HOME, and the two things every write needs: one lock, and atomic replacement.

GA_HOME/
  sop/<name>/SKILL.md        L3: SOPs (Agent Skills folders), helper scripts beside them
  sop/.archived/<name>/      SOPs that kept failing: out of retrieval, never deleted
  memory/index.md            L1: the index in every system prompt (rebuilt in code, size capped)
  memory/facts.md            L2: verified long-lived facts, one per line, each with its run id
  memory/archive/<run>.md    L4: one paragraph per finished run
  memory/.lock               held while anything above is read-modified-written
  cache/                     retrieval tokens by content hash (derived: safe to delete)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

ARCHIVED = ".archived"
PRIVATE_DIR = 0o700
LOCK_TIMEOUT = 30.0
"""Seconds to wait for another ga process's memory write; they take milliseconds, so this means a stuck one."""


def sop_dir(home: Path) -> Path:
    return home / "sop"


def memory_dir(home: Path) -> Path:
    return home / "memory"


def archived_dir(home: Path) -> Path:
    return sop_dir(home) / ARCHIVED


def index_path(home: Path) -> Path:
    return memory_dir(home) / "index.md"


def facts_path(home: Path) -> Path:
    return memory_dir(home) / "facts.md"


def archive_path(home: Path, run_id: str) -> Path:
    return memory_dir(home) / "archive" / f"{run_id}.md"


def private_dir(path: Path) -> Path:
    """Make `path` (and its parents) if needed; the ones made here are 0700: memory is the user's alone."""
    if not path.is_dir():
        path.mkdir(parents=True, mode=PRIVATE_DIR, exist_ok=True)
    return path


class MemoryBusy(RuntimeError):
    """Another ga process held the memory lock for too long."""


@contextlib.contextmanager
def locked(home: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold GA_HOME/memory/.lock: two runs writing memory at once take turns, so neither loses the other's change."""
    fd = os.open(private_dir(memory_dir(home)) / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise MemoryBusy(f"memory is locked by another ga process for over {timeout:g} s "
                                     f"({memory_dir(home)}/.lock); try again later") from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # closing releases the lock


class NotRegular(OSError):
    """A FIFO, a device or a folder where a file was expected."""


def open_regular(path: Path, *, follow: bool = False) -> BinaryIO:
    """A file opened for reading only when it is a regular file: never waiting on a FIFO (one planted in GA_HOME/cache
    hung every run), never through a symbolic link unless `follow`. FileNotFoundError when it is missing, NotRegular
    when it is not a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(f"{path} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


STALE_TEMP_AGE = 600
"""Seconds after which a temp file beside a memory file is the leftover of a crash, not a write in progress."""


def write_text(path: Path, text: str) -> None:
    """Replace `path` atomically and durably (temp file, fsync, rename): a crash leaves the old file whole."""
    private_dir(path.parent)
    _clear_stale_temps(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _clear_stale_temps(path: Path) -> None:
    for leftover in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if time.time() - leftover.stat().st_mtime > STALE_TEMP_AGE:
                leftover.unlink()


def read_text(path: Path) -> str:
    """A memory file's text ('' when missing), never waiting on a FIFO planted in its place (it would hang every run:
    a FIFO, a device or a folder reads as missing)."""
    try:
        with open_regular(path, follow=True) as f:
            return f.read().decode("utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotRegular):
        return ""
