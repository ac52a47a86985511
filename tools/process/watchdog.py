"""Kills what a ga run left running once ga is gone; also imported by ga for the sweeps at exit and at resume.

Started by ga as `python -I -S watchdog.py PREFIX` with a pipe on stdin that only ga holds: when ga ends in any
way (kill -9 included), the pipe reaches end of file and every process whose environment carries
GA_CODE_RUN=PREFIX... is killed. Standard library only, so it starts in a few milliseconds.
"""

from __future__ import annotations

import os
import signal
import sys
import time

MARKER = "GA_CODE_RUN"
"""Environment variable set in every code_run child: RUN_ID/CALL_ID. Its descendants inherit it."""


def marked(prefix: str) -> list[int]:
    """Pids of processes whose environment carries GA_CODE_RUN starting with `prefix` (zombies have none)."""
    needle, me, found = f"\0{MARKER}={prefix}".encode(), os.getpid(), []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = b"\0" + f.read()
        except OSError:  # gone, or not ours to read
            continue
        if needle in environ:
            found.append(int(name))
    return found


def sweep(prefix: str, rounds: int = 5) -> list[int]:
    """SIGKILL every marked process, again while new ones appear (a fork during the sweep); returns the pids."""
    killed: set[int] = set()
    for _ in range(rounds):
        fresh = [p for p in marked(prefix) if p not in killed]
        if not fresh:
            break
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        killed.update(fresh)
        time.sleep(0.02)
    return sorted(killed)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for ga must not end the watch
    sys.stdin.buffer.read()  # returns when ga closes the pipe or dies
    sweep(sys.argv[1])
