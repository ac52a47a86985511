"""The local model's server for one run: llama-server on a free 127.0.0.1 port, healthy before the first request,
stopped when the run ends — on Ctrl-C and crashes too (it gets SIGTERM if ga dies, so no server is orphaned)."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections import deque
from pathlib import Path

from ga.errors import ConfigError
from ga.local.provision import Cache
from ga.redact import SECRET_NAME

HEALTH_TIMEOUT = 300.0
"""Seconds to wait for the server to load the model (a few seconds warm; slow disks take longer)."""
STOP_GRACE = 10.0
_PR_SET_PDEATHSIG = 1


class ServerError(ConfigError):
    """The local server did not come up; the message carries its last log lines."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before any fork: the child only calls it
except (OSError, AttributeError):  # not Linux
    _prctl = None


def _die_with_parent() -> None:
    """In the child between fork and exec: SIGTERM when ga dies, however it dies (kill -9 included)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class LocalServer:
    """`with LocalServer(cache, log) as url:` — the OpenAI-compatible base URL while the block runs."""

    def __init__(self, cache: Cache, log: Path, *, threads: int | None = None, port: int | None = None):
        self.cache, self.log = cache, log
        self.threads = threads or os.cpu_count() or 1
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        spec = self.cache.model
        return [str(self.cache.server_path), "-m", str(self.cache.model_path), "--alias", spec.name,
                "--host", "127.0.0.1", "--port", str(self.port), "--jinja", "-c", str(spec.window), "-np", "1",
                "-t", str(self.threads), "--no-webui", "--temp", "0"]  # greedy by default: repeatable runs

    def start(self, timeout: float = HEALTH_TIMEOUT) -> str:
        env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}  # it needs none of ga's keys
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                                         start_new_session=True,
                                         preexec_fn=_die_with_parent)  # noqa: PLW1509 (prctl only, resolved before)
        self._wait_healthy(timeout)
        return self.url

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerError(f"The local model's server exited with code {self.proc.returncode} while "
                                  f"starting. Last lines of {self.log}:\n{self._tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass  # not listening yet, or 503 while the model loads
            time.sleep(0.2)
        self.stop()
        raise ServerError(f"The local model's server was not ready within {timeout:.0f} s. Last lines of "
                          f"{self.log}:\n{self._tail()}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def _tail(self, lines: int = 12) -> str:
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return "\n".join(line.rstrip() for line in deque(f, maxlen=lines))
        except OSError:
            return "(no log)"

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
