"""Which process holds a lock file: `models stop` kills the keeper only when it knows it is the keeper. A pid in
state.json is a claim (the file edited, or the pid gone to another program); the keeper is the process holding the
exclusive flock on its `alive` file: /proc/locks names it, and its open files (/proc/PID/fd) show the very file.
"""

from __future__ import annotations

import os
from pathlib import Path


def lock_holder(path: Path, named: int = 0) -> int:
    """The pid of the process holding a flock on `path` (`named` when it is that one), or 0 when none can be told:
    the lock is free, or /proc does not say."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    holders = _flock_holders(st)
    candidates = ([named] if named in holders else []) + [p for p in holders if p != named]
    return next((pid for pid in candidates if _has_open(pid, st)), 0)


def _flock_holders(st: os.stat_result) -> list[int]:
    """Pids /proc/locks gives for flock locks on the file `st` describes (lines such as
    `1: FLOCK  ADVISORY  WRITE 17651 fe:00:2163601 0 EOF`: major and minor in hex, then the inode)."""
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK":  # a waiter's line reads "N: -> FLOCK ..."
            continue
        try:
            major, minor, inode = fields[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino):
                found.append(int(fields[4]))
        except ValueError:
            continue
    return found


def _has_open(pid: int, st: os.stat_result) -> bool:
    """Whether process `pid` has the file `st` describes open."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            other = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False
