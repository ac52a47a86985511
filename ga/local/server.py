"""llama-server as one process: started on a port it binds itself on 127.0.0.1, with an API key, healthy before the
first request, stopped on demand, and never outliving its parent (the keeper, ga/local/keeper.py)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from ga.errors import ConfigError
from ga.local.provision import Cache
from ga.tooling.redact import SECRET_NAME

HEALTH_TIMEOUT = 300.0
"""Seconds to wait for the server to load the model (a few seconds warm; slow disks take longer)."""
STOP_GRACE = 10.0
_PR_SET_PDEATHSIG = 1
_LISTENING = re.compile(rb"HTTP server is listening, hostname: [^,]+, port: (\d+)")


class ServerError(ConfigError):
    """The local server did not come up; the message carries its last log lines."""


def physical_cores() -> int:
    """Cores the process may run on, counting a core's hyper-threads once: llama.cpp is fastest with a thread per
    physical core on an idle machine."""
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
    cores = set()
    for cpu in usable:
        try:
            siblings = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text().strip()
        except OSError:
            siblings = str(cpu)
        cores.add(siblings)
    return max(1, len(cores))


def idle_cores(window: float = 0.5, spare: tuple[int, ...] = ()) -> float | None:
    """Cores no process kept busy during `window` seconds (from /proc/stat), counting the work of the `spare`
    processes as idle (a run importing its modules while its server starts); None where that cannot be read."""
    def sample() -> tuple[int, int]:
        ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
        ours = sum(_cpu_ticks(pid) for pid in spare)
        return sum(ticks), ticks[3] + ticks[4] + ours  # idle, iowait and the spare processes' own time

    try:
        total, idle = sample()
        time.sleep(window)
        total2, idle2 = sample()
    except (OSError, ValueError, IndexError):
        return None
    return (idle2 - idle) / (total2 - total) * (os.cpu_count() or 1) if total2 > total else None


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))


def default_threads(spare: tuple[int, ...] = ()) -> int:
    """A thread per physical core that other work leaves idle, at least one. llama.cpp's threads wait for each other
    at every step, so one more thread than there are free cores makes it several times slower (on 2 busy cores: 0.3
    generated tokens a second with 2 threads, 2 with 1; bench/perf/local_server_bench.py settings)."""
    cores, idle = physical_cores(), idle_cores(spare=spare)
    return cores if idle is None else max(1, min(cores, round(idle)))


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """How llama-server runs; the defaults are the settings that won in bench/perf/local_bench.py on 2 cores."""

    threads: int = 0
    """0: one per physical core left idle by other work when the server starts (default_threads)."""
    context: int = 0
    """Tokens of KV cache; 0: the model's window."""
    batch: int = 2048
    ubatch: int = 512
    flash_attn: bool = False
    cache_reuse: int = 256
    """Reuse cached chunks of at least this many tokens after a changed part of a prompt, by shifting their KV."""
    warmup: bool = True
    """llama-server's empty warm-up decode at start. Skipping it starts the server 0.4 s sooner and the first request
    pays 0.3 s of it back (bench/perf/local_server_bench.py, "t2 b2048 ub512" against "t2 nowarmup"): no gain."""
    extra: tuple[str, ...] = ()
    """GA_LOCAL_SERVER_ARGS: flags appended last, so they win (e.g. `-t 1`, `-c 16384`)."""

    def flags(self, window: int, spare: tuple[int, ...] = ()) -> list[str]:
        """The flags for a server with the model's `window`; `spare`: processes whose work does not count against
        the threads (default_threads)."""
        flags = ["-c", str(self.context or window), "-t", str(self.threads or default_threads(spare)),
                 "-b", str(self.batch), "-ub", str(self.ubatch), "--cache-reuse", str(self.cache_reuse)]
        return [*flags, *(["-fa"] if self.flash_attn else []), *([] if self.warmup else ["--no-warmup"]), *self.extra]

    def window(self, default: int) -> int:
        """The context the server will have: the last -c/--ctx-size given wins, as in llama-server."""
        size = self.context or default
        for flag, value in zip(self.extra, self.extra[1:], strict=False):
            if flag in ("-c", "--ctx-size") and value.isdigit():
                size = int(value)
        return size


try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before any fork: the child only calls it
except (OSError, AttributeError):  # not Linux
    _prctl = None


def _die_with_parent() -> None:
    """In the child between fork and exec: SIGTERM when its parent dies, however it dies (kill -9 included)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class LocalServer:
    """`with LocalServer(cache, log, key_file=...) as url:` — the OpenAI-compatible base URL while the block runs."""

    def __init__(self, cache: Cache, log: Path, *, key_file: Path, options: ServerOptions | None = None,
                 slots: Path | None = None, spare: tuple[int, ...] = ()):
        self.cache, self.log, self.key_file, self.slots, self.spare = cache, log, key_file, slots, spare
        self.options = options or ServerOptions()
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.args: list[str] = []
        """The command it was started with (threads are chosen at that moment)."""

    def flag(self, name: str) -> str:
        """The value of a flag it was started with (the last one given wins), or ""."""
        values = [v for f, v in zip(self.args, self.args[1:], strict=False) if f == name]
        return values[-1] if values else ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """Port 0: the server binds a free port itself (no window for another process to take it); the key is read
        from a file, so it is in no command line that `ps` shows."""
        spec = self.cache.model
        slots = ["--slot-save-path", f"{self.slots}{os.sep}"] if self.slots else []
        return [str(self.cache.server_path), "-m", str(self.cache.model_path), "--alias", spec.name,
                "--host", "127.0.0.1", "--port", "0", "--api-key-file", str(self.key_file), "--jinja", "-np", "1",
                "--slots", "--no-webui", "--temp", "0",  # greedy by default: repeatable runs
                *slots, *self.options.flags(spec.window, self.spare)]

    def start(self, timeout: float = HEALTH_TIMEOUT) -> str:
        env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}  # it needs none of ga's keys
        self.log.parent.mkdir(parents=True, exist_ok=True)
        offset = self.log.stat().st_size if self.log.exists() else 0
        self.args = self.command()
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                                         start_new_session=True,
                                         preexec_fn=_die_with_parent)  # noqa: PLW1509 (prctl only, resolved before)
        try:
            self._wait_healthy(offset, timeout)
        except BaseException:
            self.stop()
            raise
        return self.url

    def _wait_healthy(self, offset: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerError(f"The local model's server exited with code {self.proc.returncode} while "
                                  f"starting. Last lines of {self.log}:\n{self._tail()}")
            if not self.port:
                self.port = self._bound_port(offset)
            elif self._healthy():
                return
            time.sleep(0.1)
        raise ServerError(f"The local model's server was not ready within {timeout:.0f} s. Last lines of "
                          f"{self.log}:\n{self._tail()}")

    def _bound_port(self, offset: int) -> int:
        with open(self.log, "rb") as f:
            f.seek(offset)
            found = _LISTENING.search(f.read())
        return int(found[1]) if found else 0

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.root_url}/health", timeout=2) as reply:
                return reply.status == 200
        except (urllib.error.URLError, OSError):
            return False  # 503 while the model loads

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):  # bounded: a Ctrl-C that landed inside poll() can
                proc.wait(STOP_GRACE)  # leave Popen's lock held, and an unbounded wait() would then hang for ever

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
