"""Kills what a ga run left running once ga is gone; also imported by ga for the sweeps at exit and at resume.

Started by ga as `python -I -S watchdog.py PREFIX [CGROUP]` with a pipe on stdin that only ga holds: when ga ends in
any way (kill -9 included), the pipe reaches end of file and every process whose environment carries
GA_CODE_RUN=PREFIX... is killed, then everything in the run's cgroup (cgroup.py), if any. Standard library only."""

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


def sweep(prefix: str) -> list[int]:
    """SIGKILL every marked process, again while new ones appear (a fork during the sweep); returns the pids."""
    return sorted(kill_rounds(lambda killed: [p for p in marked(prefix) if p not in killed], 5))


def kill_group(folder: str) -> list[int]:
    """SIGKILL everything in the cgroup `folder`, again while new ones appear, then remove it; returns the pids."""
    killed = kill_rounds(lambda killed: _members(folder), 20)
    for _ in range(50):  # the kernel lets go of a killed process a moment after it leaves cgroup.procs
        try:
            os.rmdir(folder)
        except FileNotFoundError:
            break
        except OSError:
            time.sleep(0.02)
        else:
            break
    return sorted(killed)


def _members(folder: str) -> list[int]:
    try:
        with open(os.path.join(folder, "cgroup.procs"), encoding="ascii") as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


def kill_rounds(find, rounds: int) -> set[int]:
    """SIGKILL what `find(killed so far)` returns, round after round, until it returns nothing."""
    killed: set[int] = set()
    for _ in range(rounds):
        fresh = find(killed)
        if not fresh:
            break
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        killed.update(fresh)
        time.sleep(0.02)
    return killed


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for ga must not end the watch
    sys.stdin.buffer.read()  # returns when ga closes the pipe or dies
    sweep(sys.argv[1])
    if len(sys.argv) > 2:  # the run's cgroup: what left the marker behind (env -i) is still in it
        kill_group(sys.argv[2])
