"""Running an agent or a checker: its own session, a hard deadline, output to files, the whole tree killed after."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

TERM_GRACE = 3.0
"""Seconds between SIGTERM and SIGKILL at the deadline: ga saves its run on SIGTERM."""


@dataclass(kw_only=True)
class Finished:
    exit_code: int | None
    """None when the program was killed at its deadline."""
    timed_out: bool = False
    wall_s: float = 0.0
    error: str = ""
    """Why the program could not start, or that it was killed."""


def _kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_program(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float, stdout: Path,
                stderr: Path | None = None, stdin: str | None = None) -> Finished:
    """Run argv to completion or to `timeout` seconds; output is appended to the given files (one trial may run
    a program several times, e.g. a resumed run). What the program left running in its group is killed too."""
    stdout.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(stdout, "ab") as out, open(stderr or stdout, "ab") as err:
        try:
            child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err, start_new_session=True,
                                     stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
        except OSError as e:
            return Finished(exit_code=127, error=f"cannot start {argv[0]}: {e.strerror or e}")
        try:
            if stdin is not None:
                try:
                    child.stdin.write(stdin.encode())
                    child.stdin.close()
                except BrokenPipeError:
                    pass
            child.wait(timeout=max(0.0, timeout))
            return Finished(exit_code=child.returncode, wall_s=round(time.monotonic() - started, 3))
        except subprocess.TimeoutExpired:
            _kill_group(child.pid, signal.SIGTERM)
            try:
                child.wait(timeout=TERM_GRACE)
            except subprocess.TimeoutExpired:
                pass
            return Finished(exit_code=None, timed_out=True, wall_s=round(time.monotonic() - started, 3),
                            error=f"killed after {timeout:.0f} s (the task's time limit)")
        finally:
            _kill_group(child.pid, signal.SIGKILL)  # background children too, and a program at its deadline
            if child.poll() is None:
                child.wait()
