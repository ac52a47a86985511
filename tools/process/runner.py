"""Run a program for code_run: its own session, bounded time, merged output captured, tree killing.

Memory and disk stay bounded however much the program prints: only a tail (a few times the model's budget) is kept in
memory, and a bigger output goes to a log file as it arrives (head and tail: output_log.py), redacted as it comes."""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from ga.tooling import screen
from tools.process import lifetime, watchdog
from tools.process.output_log import CappedLog, StreamRedactor
from tools.process.watchdog import MARKER

READ_CHUNK = 64 * 1024
EXIT_GRACE = 2.0
"""Seconds to keep reading after the program exits, while background children still hold the output pipe."""
LIVE_INTERVAL = 0.05
LIVE_MAX_CHARS = 8_000
"""Live terminal output per refresh: a flood is shown as its latest part, not scrolled through in full."""


class OutputCapture:
    """Takes raw output chunks: decodes and cleans them (ga.tooling.screen), keeps a tail, logs, streams live."""

    def __init__(self, log_path: Path, tail_chars: int, live: Callable[[str], None] | None = None):
        self.log_path, self.tail_cap, self._live = log_path, 2 * tail_chars, live
        self.log: CappedLog | None = None
        """Opened once the output outgrows the tail: small outputs never touch the disk."""
        self.tail, self.chars, self.lines, self._closed = "", 0, 0, False
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._screen = screen.CleanStream()
        self._live_redactor = StreamRedactor()
        self._live_text, self._live_cut, self._live_at = "", False, 0.0

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._screen.feed(self._decoder.decode(data, final)) + (self._screen.flush() if final else "")
        if not text:
            return
        if self.log is None and self.chars + len(text) > self.tail_cap:
            self.save()
        if self.log is not None:
            self.log.write(text)
        self.chars += len(text)
        self.lines += text.count("\n")
        self.tail = (self.tail + text)[-self.tail_cap:]
        self._stream(text, final)

    def save(self) -> Path:
        """Start the log file with what came so far (the tail still holds all of it)."""
        if self.log is None:
            self.log = CappedLog(self.log_path)
            self.log.write(self.tail)
            if self._closed:  # saved after the program ended: nothing more will come
                self.log.close()
        return self.log_path

    @property
    def dropped(self) -> int:
        """Characters the log dropped between its head and its tail."""
        return self.log.dropped_chars if self.log is not None else 0

    def close(self) -> None:
        self.feed(b"", final=True)
        self._stream("", True)
        self._closed = True
        if self.log is not None:
            self.log.close()

    @property
    def total_lines(self) -> int:
        return self.lines + (0 if self.tail.endswith("\n") or not self.chars else 1)

    @property
    def tail_is_whole(self) -> bool:
        return self.chars == len(self.tail)

    def _stream(self, text: str, force: bool) -> None:
        if self._live is None:
            return
        self._live_text += self._live_redactor.feed(text, final=force)
        if len(self._live_text) > LIVE_MAX_CHARS:
            self._live_text, self._live_cut = self._live_text[-LIVE_MAX_CHARS:], True
        now = time.monotonic()
        if self._live_text and (force or now - self._live_at >= LIVE_INTERVAL):
            self._live(("…\n" if self._live_cut else "") + self._live_text)
            self._live_text, self._live_cut, self._live_at = "", False, now


@dataclass(kw_only=True)
class Outcome:
    exit_code: int | None
    elapsed: float
    killed: str = ""
    """"" when the program ended by itself; otherwise "timeout" or "interrupted"."""
    survivors: list[int] = field(default_factory=list)
    """Pids still alive after the tree was killed (should be empty)."""
    pipe_left_open: bool = False
    """Background processes kept the output pipe open after the program ended; they were left running."""


def run(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float, capture: OutputCapture) -> Outcome:
    """Run argv in a new session, stdin closed, stdout+stderr merged into `capture`, killed as a tree on timeout."""
    started = time.monotonic()
    argv, tie = lifetime.tie(argv, os.getpid())
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True, bufsize=0,
                            preexec_fn=tie)  # noqa: PLW1509 (only without setpriv: one prctl, no locks)
    killed, open_pipe = "", False
    try:
        killed, open_pipe = _pump(proc, capture, started + timeout)
    except KeyboardInterrupt:  # Ctrl-C stops the program (not the agent): the model hears it was interrupted
        killed = "interrupted"
    finally:
        survivors = kill_tree(proc.pid, env.get(MARKER, "")) if killed else []
        proc.stdout.close()
        capture.close()
    exit_code = proc.wait() if killed or _ended(proc) else None
    return Outcome(exit_code=exit_code, elapsed=time.monotonic() - started, killed=killed,
                   survivors=survivors, pipe_left_open=open_pipe)


def _pump(proc: subprocess.Popen, capture: OutputCapture, deadline: float) -> tuple[str, bool]:
    """Copy output until EOF; returns (why it was killed or "", whether the pipe was left open)."""
    fd = proc.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        exited_at = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                return "timeout", False
            if exited_at is None and _ended(proc):
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                return "", True
            if selector.select(min(deadline - now, 0.1)):
                data = os.read(fd, READ_CHUNK)
                if not data:
                    break
                capture.feed(data)
    return ("" if _wait_exit(proc, deadline) else "timeout"), False


def _wait_exit(proc: subprocess.Popen, deadline: float) -> bool:
    """Wait for the exit until the deadline; False if it is still running (it closed its output but went on)."""
    with contextlib.suppress(OSError):  # a pidfd wakes us the moment it exits; sleeps lose ~1 ms per run
        pidfd = os.pidfd_open(proc.pid)
        with selectors.DefaultSelector() as selector:
            selector.register(pidfd, selectors.EVENT_READ)
            selector.select(max(0.0, deadline - time.monotonic()))
        os.close(pidfd)
    while not _ended(proc) and time.monotonic() < deadline:
        time.sleep(0.01)
    return _ended(proc)


def _ended(proc: subprocess.Popen) -> bool:
    """Whether the program has exited, leaving it to be reaped by proc.wait(). Not Popen.poll: a Ctrl-C landing inside
    it, between its lock's acquire and its try, leaves the lock held and the wait() after the kill hangs for ever."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped already
        return True


def kill_tree(pid: int, marker: str) -> list[int]:
    """SIGKILL the process group, every descendant and every process carrying our marker; returns survivors.
    `pid` itself is only signalled: its caller reaps it (psutil would steal its exit status)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    victims: dict[int, psutil.Process] = {}

    def fresh(killed: set[int]) -> list[int]:  # found again each round: something may fork while we kill
        found: list[psutil.Process] = []
        with contextlib.suppress(psutil.Error):
            found = psutil.Process(pid).children(recursive=True)
        for other in watchdog.marked(marker) if marker else []:
            with contextlib.suppress(psutil.Error):
                found.append(psutil.Process(other))
        for p in found:
            if p.pid != pid:
                victims.setdefault(p.pid, p)
        return [p for p in victims if p not in killed]

    watchdog.kill_rounds(fresh, 3)
    deadline, alive = time.monotonic() + 2, list(victims.values())
    while (alive := [p for p in alive if _running(p)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [p.pid for p in alive]


def _running(p: psutil.Process) -> bool:
    """Alive and not a zombie (orphans killed in a container may stay zombies when pid 1 does not reap)."""
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
