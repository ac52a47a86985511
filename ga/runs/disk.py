"""Writing ga's own files safely: whole or not at all, private to the user, one process at a time.

Run folders, the mailbox, schedules, the configuration and the benchmark's results write through here."""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, text: str, *, sync: bool = False) -> None:
    """Write via a temp file (0600) in the same folder and rename: a reader never sees half a file. `sync` also
    flushes it to disk first, so a crash of the machine leaves the old file or the new one, never an empty one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def hold_lock(path: Path) -> int:
    """An exclusive lock on `path` for this process (its pid written inside); the fd keeps it until closed.
    BlockingIOError carrying the holder's pid when another process has it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise BlockingIOError(holder) from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def private_folder(path: Path) -> Path:
    """Create `path` (and missing parents) readable by the user only; an existing one is narrowed to 0700 too."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o700)
    return path
