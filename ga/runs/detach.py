"""Background runs: `ga "task" --detach` prints the run id and returns at once.

The parent starts `ga run --detached-child ARGS...` (a checkout's run.py, an installed package's `python -m ga`: see
ga/invocation.py) in its own session with stdin closed and waits only until the child has created (and locked) its
run folder: the child then names the run on its stdout and points its stdout and stderr at RUN_DIR/output.log. So
the run id printed is the child's own run, recorded with the child's pid, and an error before the run exists (no
endpoint, bad flags) still reaches the user with its exit code."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import BinaryIO, TextIO

from ga.invocation import child_env, ga_command
from ga.runs.folder import Run

CHILD_FLAG = "--detached-child"
OUTPUT = "output.log"
_MARKER = "ga-detached-run "
START_TIMEOUT = 900.0
"""Seconds a program (`answer`) waits for a child to create its run: --local provisions the model first."""


class DetachFailed(Exception):
    """The background run did not start; the message is what the child said."""

    def __init__(self, message: str, exit_code: int, *, shown: bool = False):
        super().__init__(message)
        self.exit_code = exit_code
        self.shown = shown
        """The child's own words were already shown (spawn's `echo`)."""


def _feed(proc: subprocess.Popen, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the child ended first: it says why on its output
        proc.stdin.write(data)
        proc.stdin.close()


def spawn(args: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
          echo: TextIO | None = None, timeout: float | None = START_TIMEOUT,
          stdin: bytes | BinaryIO | None = None) -> tuple[str, subprocess.Popen]:
    """Start `ga run ARGS` in the background; return its run id (and the process, for callers that reap it). What
    the child says before its run exists (errors, --local's provisioning) is collected, and shown on `echo` as it
    comes; a child that has not made its run within `timeout` seconds is killed (None: wait, as a user can).
    `stdin`: what the child reads (input piped to the parent: bytes, or a file it reads itself), else nothing."""
    command = [*ga_command(), "run", CHILD_FLAG, *args]
    given = subprocess.DEVNULL if stdin is None else subprocess.PIPE if isinstance(stdin, bytes) else stdin
    proc = subprocess.Popen(command, cwd=cwd, env=child_env(env), stdin=given, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
    if isinstance(stdin, bytes):  # written beside the reading below: a large input must not block on a full pipe
        threading.Thread(target=_feed, args=(proc, stdin), daemon=True).start()
    timer = threading.Timer(timeout, proc.kill) if timeout else None
    if timer:
        timer.start()
    said: list[str] = []
    try:
        for raw in proc.stdout:
            line = raw.decode(errors="replace")
            if line.startswith(_MARKER):
                return line[len(_MARKER):].strip(), proc
            said.append(line)
            if echo:
                echo.write(line)
                echo.flush()
    finally:
        if timer:
            timer.cancel()
        proc.stdout.close()
    code = proc.wait()
    message = "".join(said).strip() or f"the background run exited with code {code} before it started"
    raise DetachFailed(message, code if code > 0 else 1, shown=bool(echo and said))


def redirect(run: Run) -> None:
    """In the child, once its run exists: name it to the parent, then write everything into the run folder."""
    fd = os.open(run.folder / OUTPUT, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(1, f"{_MARKER}{run.id}\n".encode())
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
