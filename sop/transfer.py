"""Copying skill folders in and out of GA_HOME/sop (memory import / export): regular files and folders only.

A skill folder comes from anywhere (a download, another agent's library), so nothing in it is followed: a
symbolic link (to ~/.ssh/id_rsa, to /dev/zero), a device, a FIFO or a socket is refused rather than copied,
each file and each skill is size-capped, and every entry is opened relative to its parent's descriptor with
O_NOFOLLOW, so a link swapped in after the check is refused too. Problems are collected, not raised one by one,
so a refusal lists them all.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_BYTES = 8 * 1024 * 1024
"""One file of a skill (a helper script, a template, a schema)."""
MAX_SKILL_BYTES = 32 * 1024 * 1024
"""All files of one skill together."""
MAX_SKILL_ENTRIES = 2000
"""Files and folders of one skill together."""
MAX_LIBRARY = 500
"""SOPs GA_HOME/sop may hold after an import (seeds and learned ones count). Every run reads and ranks them all before
its first request, about 0.6 ms each: `memory search` took 0.54 s with the seeds alone, 0.75 s with 200, 1.2 s with
1,500 and 3.4 s with 5,000 (warm, load 3.5 on 2 cores); 1,500 imported made the next run wait 11 s when SOPs were
also encoded."""
_CHUNK = 1024 * 1024
_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass(kw_only=True)
class Copy:
    """What one copy did: bytes and entries so far, and every problem met (empty: the copy is whole)."""

    root: Path
    bytes: int = 0
    entries: int = 0
    problems: list[str] = field(default_factory=list)


def over_capacity(existing: set[str], incoming: list[str]) -> str:
    """Why importing the skills named `incoming` into a library holding `existing` is refused, or ""."""
    total = len(existing | set(incoming))
    if total <= MAX_LIBRARY:
        return ""
    return (f"the library would hold {total:,} SOPs ({len(existing):,} now, {len(set(incoming) - existing):,} new), "
            f"more than the {MAX_LIBRARY} ga keeps: every run reads and ranks them all before it starts. Import the "
            "ones you need (a folder of them), or remove some first (memory rm NAME).")


def copy_skill(source: Path, target: Path) -> Copy:
    """Copy the folder `source` to `target` (which must not exist). Check `.problems` before using `target`: when
    it is not empty the copy is partial and the caller discards it."""
    done = Copy(root=source)
    try:
        fd = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        done.problems.append(f"{source}: {_kind_or_error(source, e)}")
        return done
    try:
        _copy_dir(fd, source, target, done)
    finally:
        os.close(fd)
    return done


def _copy_dir(fd: int, where: Path, target: Path, done: Copy) -> None:
    os.mkdir(target, 0o700)
    with os.scandir(fd) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        path = where / entry.name
        done.entries += 1
        if done.entries > MAX_SKILL_ENTRIES:
            done.problems.append(f"{done.root}: more than {MAX_SKILL_ENTRIES} files and folders")
            return
        mode = entry.stat(follow_symlinks=False).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            done.problems.append(f"{path}: {_kind(mode)}; only regular files and folders are copied")
            continue
        try:
            child = os.open(entry.name, _NOFOLLOW | (os.O_DIRECTORY if stat.S_ISDIR(mode) else 0), dir_fd=fd)
        except OSError as e:
            done.problems.append(f"{path}: {_kind_or_error(path, e)}")
            continue
        try:
            opened = os.fstat(child).st_mode
            if stat.S_IFMT(opened) != stat.S_IFMT(mode):  # swapped since it was listed
                done.problems.append(f"{path}: changed while it was copied ({_kind(opened)})")
            elif stat.S_ISDIR(opened):
                _copy_dir(child, path, target / entry.name, done)
            else:
                _copy_file(child, path, target / entry.name, opened, done)
        finally:
            os.close(child)
        if done.bytes > MAX_SKILL_BYTES:
            return


def _copy_file(fd: int, path: Path, target: Path, mode: int, done: Copy) -> None:
    os.set_blocking(fd, True)
    size = 0
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 | (stat.S_IMODE(mode) & 0o100))
    with os.fdopen(out, "wb") as f:
        while chunk := os.read(fd, _CHUNK):
            size += len(chunk)
            done.bytes += len(chunk)
            if size > MAX_FILE_BYTES:
                done.problems.append(f"{path}: over {_mib(MAX_FILE_BYTES)} (the limit for one file of a skill)")
                return
            if done.bytes > MAX_SKILL_BYTES:
                done.problems.append(f"{done.root}: over {_mib(MAX_SKILL_BYTES)} in all (the limit for one skill)")
                return
            f.write(chunk)


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder"),
             (stat.S_ISREG, "a regular file"))
    return next((name for test, name in kinds if test(mode)), "a special file")


def _kind_or_error(path: Path, error: OSError) -> str:
    with contextlib.suppress(OSError):
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            return "a symbolic link; only regular files and folders are copied"
    return error.strerror or str(error)


def _mib(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB"
