"""CACHE/server/: the files through which runs and the keeper (keeper.py) find the shared server, and their locks.

Every file is guarded by flock (released by the kernel however a process dies, kill -9 included):

    lock        exclusive while a run attaches or a server is stopped: never two keepers, never a stop mid-attach
    alive       held by the keeper for its whole life: free means no keeper (whatever state.json says)
    users       held shared by every run using the server: free means idle
    state.json  the keeper's pid, the server's pid, port and settings, once it is healthy
    key         the server's API key (0600), new for each server; given to runs, never logged
    keep_alive  the keep-alive of the newest run, which the keeper applies when it goes idle
    stop        written by whoever stops the server now (the last run with keep-alive 0, `models stop`)
    server.log  the keeper's and the server's log
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict
from pathlib import Path

from ga.local.provision import Cache
from ga.local.server import ServerOptions


class Folder:
    """The files in CACHE/server/ (see above)."""

    def __init__(self, root: Path):
        self.root = root
        self.lock, self.alive, self.users = root / "lock", root / "alive", root / "users"
        self.state, self.key, self.keep_alive = root / "state.json", root / "key", root / "keep_alive"
        self.stop_request, self.log = root / "stop", root / "server.log"


def options_record(options: ServerOptions) -> dict:
    """The options as state.json records them (JSON: lists, not tuples), to compare with a running server's."""
    return json.loads(json.dumps(asdict(options)))


def folder_of(cache: Cache) -> Folder:
    return Folder(cache.root / "server")


def held(path: Path, mode: int) -> bool:
    """Does someone hold `path` in a way that conflicts with `mode`? (Asked without waiting, and let go at once.)"""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def keeper_alive(folder: Folder) -> bool:
    return held(folder.alive, fcntl.LOCK_SH)


def in_use(folder: Folder) -> bool:
    return held(folder.users, fcntl.LOCK_EX)


class Locked:
    """`with Locked(path):` an exclusive flock, waited for."""

    def __init__(self, path: Path, mode: int = fcntl.LOCK_EX):
        self.path, self.mode, self.fd = path, mode, -1

    def __enter__(self) -> Locked:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, self.mode)
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # closing lets go of the lock


def read_state(folder: Folder) -> dict | None:
    """The running server's state, or None when there is no keeper (a state file left by a killed one is stale)."""
    try:
        state = json.loads(folder.state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state if keeper_alive(folder) else None


def write_atomic(path: Path, text: str, mode: int = 0o600) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
