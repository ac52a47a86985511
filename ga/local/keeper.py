"""The keeper: `python -m ga.local.keeper CACHE_ROOT OPTIONS_JSON`, started by the first run that needs the local
server (shared.py). It owns llama-server (which dies with it), restores the saved prefix into it, and stops it when
asked, when it exits, or once no run has held it for the keep-alive time, saving the prefix first."""

from __future__ import annotations

import fcntl
import json
import math
import os
import secrets
import signal
import sys
import time
import urllib.request
from pathlib import Path

from ga.local import prefix
from ga.local.provision import Cache
from ga.local.server import LocalServer, ServerOptions
from ga.local.server_folder import Folder, folder_of, in_use, options_record, write_atomic
from ga.local.shared import DEFAULT_KEEP_ALIVE

POLL = 0.2
"""Seconds between looks at the runs holding the server (a run killed with -9 is noticed this soon)."""
SAVE_TIMEOUT = 10.0
"""Seconds each request to the server may take while restoring or saving the prefix: a server still busy with a
request nobody waits for any more is stopped without saving (the next start re-reads the prefix, no more)."""


class Stopped(Exception):
    """SIGTERM: stop the server and go."""


def say(text: str) -> None:
    print(f"keeper {os.getpid()}: {text}", flush=True)


def idle_limit(folder: Folder) -> float:
    try:
        seconds = float(folder.keep_alive.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return DEFAULT_KEEP_ALIVE
    return math.inf if seconds < 0 else seconds


def watch(folder: Folder, server: LocalServer, lock: int) -> str:
    """Until the server should stop: why. Stopping for idleness takes the lock first (and keeps it until the keeper
    is gone), so a run attaching meanwhile waits and then starts a new server rather than use a dying one."""
    idle_since: float | None = time.monotonic()
    while True:
        if server.proc is None or server.proc.poll() is not None:
            return "the server exited"
        if folder.stop_request.exists():
            return "asked to stop"  # the asker holds the lock and waits for us to go
        now = time.monotonic()
        idle_since = None if in_use(folder) else (idle_since or now)
        if idle_since is not None and now - idle_since >= idle_limit(folder):
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass  # a run is attaching: it will hold the server in a moment
            else:
                if not in_use(folder):
                    return f"idle for {now - idle_since:.0f} s"
                fcntl.flock(lock, fcntl.LOCK_UN)
        time.sleep(POLL)


def serve(cache: Cache, options: ServerOptions, folder: Folder, lock: int) -> None:
    key = secrets.token_urlsafe(32)
    server = LocalServer(cache, folder.log, key_file=folder.key, options=options, slots=prefix.folder(cache),
                         spare=(os.getppid(),))  # the run that started us imports its modules meanwhile

    def call(path: str, body: dict | None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(server.root_url + path, data, {"Content-Type": "application/json",
                                                                         "Authorization": f"Bearer {key}"})
        with urllib.request.urlopen(request, timeout=SAVE_TIMEOUT) as reply:
            return json.loads(reply.read())

    try:
        write_atomic(folder.key, key + "\n")
        started = time.monotonic()
        server.start()
        restored = prefix.restore(cache, options, call)
        state = {"keeper": os.getpid(), "server": server.proc.pid, "port": server.port, "started": time.time(),
                 "model": cache.model.sha256, "threads": server.flag("-t"),
                 "window": options.window(cache.model.window), "options": options_record(options),
                 "prefix_tokens": restored}
        write_atomic(folder.state, json.dumps(state), 0o644)
        say(f"llama-server {server.proc.pid} ready on 127.0.0.1:{server.port} in {time.monotonic() - started:.1f} s "
            f"with {server.flag('-t')} threads; saved prefix restored: {restored} tokens")
        why = watch(folder, server, lock)
        say(f"stopping the server: {why}")
        if server.proc is not None and server.proc.poll() is None:
            _save(cache, options, call)
    except Stopped:
        say("stopping the server: SIGTERM")
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the clean-up short
        folder.state.unlink(missing_ok=True)
        server.stop()
        folder.key.unlink(missing_ok=True)


def _save(cache: Cache, options: ServerOptions, call) -> None:
    try:
        if name := prefix.save(cache, options, call):
            say(f"prefix saved: {name}")
    except (OSError, ValueError, KeyError) as err:  # a prefix not kept costs the next start a re-read, no more
        say(f"prefix not saved: {err}")


def _stop_on_sigterm(*_: object) -> None:
    raise Stopped


def main(argv: list[str]) -> int:
    """The locks taken here are never let go explicitly: the kernel releases them when this process is gone, so a
    free `alive` means no keeper and no server, not one on its way out."""
    root, options_json = Path(argv[0]), json.loads(argv[1])
    options = ServerOptions(**{**options_json, "extra": tuple(options_json.get("extra", ()))})
    cache = Cache(root=root)
    folder = folder_of(cache)
    alive = os.open(folder.alive, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(alive, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        say("another keeper serves this cache folder")
        return 3
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    signal.signal(signal.SIGINT, _stop_on_sigterm)
    lock = os.open(folder.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        serve(cache, options, folder, lock)
    except Exception as err:  # the run that started us reads this log
        say(f"failed: {err}")
        return 1
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)  # at once: the locks go with the process
