"""Run ga on a real pseudo-terminal, answer its prompts, and read the screen as a terminal emulator (pyte) shows it."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pyte

ROWS, COLUMNS = 40, 400
"""Wide enough that a hint naming a long checkout path (a CI runner's) is one line, as the tests read it."""
TAKE_TERMINAL = [sys.executable, "-c", "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
                 "os.execv(sys.argv[1], sys.argv[1:])"]
"""Run before the command, in its new session: stdin's pty becomes the controlling terminal (no preexec_fn: the
tests have threads)."""
KEYS = ("\x03", "\x04")
"""Ctrl-C and Ctrl-D: an answer that ends with one is typed without the Enter that follows the others."""


@dataclass(kw_only=True)
class TtyRun:
    returncode: int
    raw: str
    """Everything written to the terminal, escape sequences included."""
    screen: list[str]
    """What a person sees afterwards: the scrollback and the screen, line by line."""
    title: str

    @property
    def text(self) -> str:
        return "\n".join(self.screen)


def render(raw: str) -> tuple[list[str], str]:
    screen = pyte.HistoryScreen(COLUMNS, ROWS, history=5000)
    pyte.Stream(screen).feed(raw)
    rows = ["".join(char.data for char in row.values()).rstrip() for row in screen.history.top]
    rows += [line.rstrip() for line in screen.display]
    while rows and not rows[-1]:
        rows.pop()
    return rows, screen.title


def run_on_tty(command: list[str], *, cwd: Path, env: dict, answers: list[tuple[str, str]] = (),
               timeout: float = 60, controlling: bool = False) -> TtyRun:
    """Run `command` with stdin, stdout and stderr on one pty; when the output since the last answer shows the
    next prompt (answers[i][0]), type answers[i][1] and Enter (none after a KEYS). `controlling`: the pty is the
    command's controlling terminal, as a shell's is, so that Ctrl-C typed ("\x03") sends SIGINT to it."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    command = [*TAKE_TERMINAL, *command] if controlling else command
    proc = subprocess.Popen(command, cwd=cwd, env={**env, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS),
                                                    "LINES": str(ROWS), "PYTHONFAULTHANDLER": "1"},
                            stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    chunks: list[bytes] = []
    pending = list(answers)
    seen_from = 0
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            if pending:
                out = b"".join(chunks).decode("utf-8", "replace")
                if pending[0][0] in out[seen_from:]:
                    seen_from = out.index(pending[0][0], seen_from) + len(pending[0][0])
                    typed = pending.pop(0)[1]
                    os.write(master, (typed if typed.endswith(KEYS) else typed + "\n").encode())
            elif proc.poll() is not None and not ready:
                break
        else:
            raise AssertionError(f"no end within {timeout} s; still waiting for {[p[0] for p in pending]}\n"
                                 + stuck(proc, master, chunks))
    finally:
        os.close(master)
    code = proc.wait(timeout=10)
    raw = b"".join(chunks).decode("utf-8", "replace")
    screen, title = render(raw)
    return TtyRun(returncode=code, raw=raw, screen=screen, title=title)


def stuck(proc: subprocess.Popen, master: int, chunks: list[bytes]) -> str:
    """What a run that never ended was doing: its screen, its processes (state, kernel wait), and every Python
    thread's stack (SIGABRT, which PYTHONFAULTHANDLER turns into a dump); then it is killed."""
    screen, _ = render(b"".join(chunks).decode("utf-8", "replace"))
    try:
        tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
    except psutil.Error:
        tree = []
    rows = []
    for process in tree:
        try:
            waits = [Path(f"/proc/{process.pid}/task/{t.id}/wchan").read_text() for t in process.threads()]
            rows.append(f"{process.pid} {process.status()} {' '.join(process.cmdline())[:160]} waits: {waits}")
        except (psutil.Error, OSError):
            pass
    os.kill(proc.pid, signal.SIGABRT)
    dump, until = [], time.monotonic() + 3
    while time.monotonic() < until and select.select([master], [], [], 0.2)[0]:
        try:
            dump.append(os.read(master, 65536))
        except OSError:
            break
    proc.kill()
    return "\n".join(["screen (last 30 lines):", *screen[-30:], "processes:", *rows, "stacks:",
                      b"".join(dump).decode("utf-8", "replace")[-6000:]])
