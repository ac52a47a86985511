"""Is a run's process still there, and is it making progress?

A run records the process that drives it (pid and its start time, so a reused pid is not mistaken for it).
A reader that finds that process gone says `crashed`, never `running`. Progress is the newest of the
trajectory's and the heartbeat file's modification times: every event touches the first, streamed text and
tool output touch the second. A live run without progress for a while is `stalled`."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from typing import Any

import psutil

HEARTBEAT = "heartbeat"
BEAT_EVERY = 1.0
"""Seconds between two touches of the heartbeat file (streamed text arrives many times a second)."""
EXIT_CODES = {"done": 0, "failed": 1, "paused": 3, "limit": 4, "interrupted": 130, "crashed": 1}
"""The exit code a status stands for (the CLI's contract); a crash counts as a failure."""
_PROGRESS = frozenset({"text", "live", "notice", "usage", "tool_start", "tool_done"})


def started(pid: int) -> float | None:
    """When the process started (seconds since the epoch), or None if there is no such process."""
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def owner() -> dict:
    """What a run records about the process driving it."""
    return {"pid": os.getpid(), "pid_started": started(os.getpid())}


def process_alive(state: dict, folder: Path | None = None) -> bool:
    """Is the process recorded in `state` still running (and the same process, not a reused pid)? Runs written
    before pids were recorded fall back to the run's lock: held means alive."""
    pid = state.get("pid")
    if not isinstance(pid, int):
        return folder is not None and _locked(folder / "lock")
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        when = state.get("pid_started")
        return when is None or abs(process.create_time() - float(when)) < 1.0
    except psutil.AccessDenied:
        return True  # someone else's process with that pid: it exists, and we cannot tell more
    except psutil.Error:
        return False


def _locked(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def last_progress(folder: Path, state: dict) -> float:
    """Seconds since the epoch of the run's newest sign of progress."""
    times = [float(state.get("updated") or state.get("created") or 0)]
    for name in ("trajectory.jsonl", HEARTBEAT):
        with contextlib.suppress(OSError):
            times.append(os.stat(folder / name).st_mtime)
    return max(times)


def effective_status(folder: Path, state: dict) -> str:
    """The status a reader should believe: a `running` run whose process is gone is `crashed`."""
    status = str(state.get("status") or "crashed")
    return "crashed" if status == "running" and not process_alive(state, folder) else status


def stalled_for(folder: Path, state: dict, after: float, now: float | None = None) -> float | None:
    """Seconds without progress when a live run has made none for `after` seconds, else None."""
    idle = (now or time.time()) - last_progress(folder, state)
    return idle if after and idle >= after else None


class Heartbeat:
    """Wraps the UI the loop talks to: each progress call also touches the run's heartbeat file (throttled);
    everything else passes through unchanged."""

    def __init__(self, ui: Any, folder: Path):
        self._ui = ui
        self._path = folder / HEARTBEAT
        self._last = 0.0
        self.beat()

    def beat(self) -> None:
        now = time.monotonic()
        if now - self._last < BEAT_EVERY:
            return
        self._last = now
        with contextlib.suppress(OSError):  # a heartbeat that cannot be written must not stop the run
            self._path.touch(mode=0o600)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._ui, name)
        if name not in _PROGRESS or not callable(attr):
            return attr

        def progress(*args: Any, **kwargs: Any) -> Any:
            self.beat()
            return attr(*args, **kwargs)

        return progress
