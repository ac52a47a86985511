"""One llama-server per model and cache folder, shared by the runs that use it and kept warm between them.

The server belongs to a keeper process (keeper.py), never to a run: runs come and go, the keeper stops the server
once no run has held it for the keep-alive time (GA_LOCAL_KEEP_ALIVE, Ollama's keep_alive: 5 minutes by default;
0 stops it with the last run). Here: a run's hold on the server (attach, a Lease), starting a keeper, stopping it,
and what `models` shows. Everything is found through the files in CACHE/server/, guarded by flock
(server_folder.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ga.invocation import invocation
from ga.local.holder import lock_holder
from ga.local.provision import Cache
from ga.local.server import HEALTH_TIMEOUT, STOP_GRACE, ServerError, ServerOptions
from ga.local.server_folder import (
    Folder,
    Locked,
    folder_of,
    in_use,
    keeper_alive,
    options_record,
    read_state,
    write_atomic,
)
from ga.tooling.redact import SECRET_NAME

KEEP_ALIVE_ENV = "GA_LOCAL_KEEP_ALIVE"
DEFAULT_KEEP_ALIVE = 300.0
_DURATION = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(ms|s|m|h)?$")
_UNIT = {None: 1, "ms": 0.001, "s": 1, "m": 60, "h": 3600}
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]
STOP_WAIT = 3 * STOP_GRACE
"""Seconds a keeper asked to stop has to save the prefix and stop its server before it is killed."""


def keep_alive(env: dict[str, str] | None = None) -> float:
    """Seconds to keep an idle server: `300`, `90s`, `5m`, `1h`; 0 stops it with the run; a negative value keeps it
    until `models stop`."""
    raw = (os.environ if env is None else env).get(KEEP_ALIVE_ENV, "").strip()
    if not raw:
        return DEFAULT_KEEP_ALIVE
    found = _DURATION.match(raw)
    if not found:
        raise ServerError(f"{KEEP_ALIVE_ENV}={raw!r}: give seconds or a duration such as 90s, 5m, 1h (0 stops the "
                          f"server with the run, -1 keeps it until `{invocation()} models stop`)")
    seconds = float(found[1]) * _UNIT[found[2]]
    return math.inf if seconds < 0 else seconds


@dataclass
class Lease:
    """A run's hold on the server: `url`, `key`, `window` while it lasts; release() lets go."""

    folder: Folder
    state: dict
    key: str
    keep_alive: float
    started: bool
    """True when this run started the server, False when it found one running."""
    fd: int = -1

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.state['port']}/v1"

    @property
    def window(self) -> int:
        return int(self.state["window"])

    def release(self) -> None:
        """Let go; the last run out with keep-alive 0 stops the server before it returns."""
        if self.fd < 0:
            return
        os.close(self.fd)
        self.fd = -1
        if self.keep_alive == 0:
            with Locked(self.folder.lock):
                if not in_use(self.folder):
                    stop_locked(self.folder)


def attach(cache: Cache, options: ServerOptions, keep: float, *, timeout: float = HEALTH_TIMEOUT,
           meanwhile: Callable[[], object] | None = None) -> Lease:
    """The server for this model and cache folder: the running one, else a new keeper's (started and healthy;
    `meanwhile` runs while it loads)."""
    folder = folder_of(cache)
    folder.root.mkdir(parents=True, exist_ok=True)
    with Locked(folder.lock):
        state = _wait_ready(folder, timeout)  # a keeper whose starter died may still be loading
        other = state and (state["options"] != options_record(options) or state.get("model") != cache.model.sha256)
        if other and not in_use(folder):
            stop_locked(folder)  # idle, and started with other settings or weights: the new ones apply now
            state = None
        started = state is None
        if started:
            state = _start(cache, folder, options, timeout, meanwhile)
        fd = os.open(folder.users, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_SH)
        write_atomic(folder.keep_alive, "-1" if math.isinf(keep) else repr(keep))
        key = folder.key.read_text(encoding="utf-8").strip()
    return Lease(folder=folder, state=state, key=key, keep_alive=keep, started=started, fd=fd)


def _start(cache: Cache, folder: Folder, options: ServerOptions, timeout: float,
           meanwhile: Callable[[], object] | None) -> dict:
    for stale in (folder.state, folder.key, folder.stop_request):
        stale.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PACKAGE_ROOT), env.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "ga.local.keeper", str(cache.root), json.dumps(options_record(options))]
    folder.log.write_bytes(b"")  # a new server, a new log; the keeper and the server both append to it
    with open(folder.log, "ab") as log:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                start_new_session=True, cwd=cache.root)  # not ours: it outlives the run
    try:
        if meanwhile is not None:
            meanwhile()
        state = _wait_ready(folder, timeout, proc)
    except BaseException:
        stop_locked(folder, proc)
        raise
    if state is None:
        raise ServerError(f"The local model's server did not start. Last lines of {folder.log}:\n{tail(folder.log)}")
    return state


def _wait_ready(folder: Folder, timeout: float, proc: subprocess.Popen | None = None) -> dict | None:
    """The state once the keeper's server is healthy; None when there is no keeper (or it went away)."""
    deadline = time.monotonic() + timeout + STOP_GRACE
    while time.monotonic() < deadline:
        if (state := read_state(folder)) is not None:
            return state
        if (proc.poll() is not None) if proc else not keeper_alive(folder):
            return None
        time.sleep(0.05)
    raise ServerError(f"The local model's server was not ready within {timeout:.0f} s. Last lines of "
                      f"{folder.log}:\n{tail(folder.log)}")


def stop_locked(folder: Folder, proc: subprocess.Popen | None = None) -> bool:
    """Stop the keeper and its server now and wait until they are gone (the caller holds the lock, so nobody
    attaches meanwhile): asked first (it saves the prefix), killed if it does not go in time (its server dies with
    it). False when none was running."""
    if not keeper_alive(folder):
        return False
    pid = proc.pid if proc is not None else _keeper_pid(folder)
    write_atomic(folder.stop_request, "stop\n")
    try:
        if not _gone(folder, STOP_WAIT):
            if not pid:
                raise ServerError(f"The local model's keeper did not stop within {STOP_WAIT:.0f} s, and no process "
                                  f"can be told to be it (none holds {folder.alive}): see {folder.log}.")
            os.kill(pid, signal.SIGKILL)
            _gone(folder, STOP_GRACE)
    except ProcessLookupError:
        pass
    finally:
        folder.stop_request.unlink(missing_ok=True)
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):  # bounded: see LocalServer.stop
            proc.wait(STOP_GRACE)
    deadline = time.monotonic() + STOP_GRACE
    while pid and _running(pid) and time.monotonic() < deadline:
        time.sleep(0.01)  # its lock goes a moment before the process does
    return True


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _gone(folder: Folder, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while keeper_alive(folder):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _keeper_pid(folder: Folder) -> int:
    """The keeper's pid: the process holding its `alive` lock (holder.py), state.json's pid only when it is that."""
    try:
        named = int(json.loads(folder.state.read_text(encoding="utf-8"))["keeper"])
    except (OSError, ValueError, KeyError, TypeError):
        named = 0
    return lock_holder(folder.alive, named)


def stop(cache: Cache) -> dict | None:
    """`models stop`: the state of the server that was stopped, or None when none ran."""
    folder = folder_of(cache)
    if not folder.root.is_dir():
        return None
    with Locked(folder.lock):
        state = read_state(folder)
        if state is not None:
            state["in_use"] = in_use(folder)
            stop_locked(folder)
        return state


def status(cache: Cache) -> dict | None:
    """What `models` shows of the running server: pid, port, since when, in use or idle."""
    folder = folder_of(cache)
    state = read_state(folder) if folder.root.is_dir() else None
    if state is None:
        return None
    return {**state, "in_use": in_use(folder), "log": str(folder.log)}


def tail(path: Path, lines: int = 12) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "\n".join(line.rstrip() for line in deque(f, maxlen=lines))
    except OSError:
        return "(no log)"
