"""code_run's children live no longer than ga: PR_SET_PDEATHSIG on each child, a marker in its environment
inherited by everything it starts, and a watchdog that kills the marked processes when ga dies.

A run's marker is `RUN_ID/CALL`: at the run's end (and when a run is resumed after a crash) every process
carrying it is killed, background servers included. A program that clears its own environment and leaves
its session escapes the marker, not the run's cgroup where the host gives one (tools/process/cgroup.py); under
--sandbox the pid namespace ends with bwrap, which ends with ga.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from tools.process import cgroup, watchdog
from tools.process.cgroup import RunGroup

MARKER = watchdog.MARKER
PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)
_WATCHDOG = Path(watchdog.__file__)
_lock = threading.Lock()
_runs: dict[str, Lifetime] = {}


@functools.lru_cache(maxsize=1)
def _setpriv() -> str | None:
    """util-linux's setpriv, if it can set the parent-death signal here."""
    path = shutil.which("setpriv")
    try:
        ok = path and subprocess.run([path, "--pdeathsig", "KILL", "--", "true"], capture_output=True,
                                     timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return path if ok else None


def tie(argv: list[str], parent: int) -> tuple[list[str], Callable[[], None] | None]:
    """The command and preexec_fn that give the child PR_SET_PDEATHSIG: through setpriv when it is there,
    which keeps subprocess's fast vfork path (a preexec_fn forces fork(): 70 ms for a 300 MB ga), else a
    preexec_fn."""
    setpriv = _setpriv()
    if setpriv:
        return [setpriv, "--pdeathsig", "KILL", "--", *argv], None
    return argv, die_with(parent)


def die_with(parent: int) -> Callable[[], None]:
    """A preexec_fn: the child gets SIGKILL when the thread that started it dies (ga's loop thread)."""
    def tie() -> None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # ga died between the fork and the prctl
            os.kill(os.getpid(), signal.SIGKILL)
    return tie


class Lifetime:
    """The processes one run started, watched from outside ga. A ToolContext resource: close() at the run's end."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self.prefix = f"{run_id}/"
        sweep_run(run_id)  # what an earlier ga on this run left behind, if its watchdog died with it
        self.group = RunGroup.create(run_id)
        group = [str(self.group.path)] if self.group else []
        self.watchdog = subprocess.Popen([sys.executable, "-I", "-S", str(_WATCHDOG), self.prefix, *group],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)

    def marker(self) -> str:
        return self.prefix + uuid.uuid4().hex

    def contain(self, argv: list[str], processes: int = 0) -> list[str]:
        """argv joining the run's cgroup, limited to `processes` at once (0: no limit); as is without one."""
        if self.group is None:
            return argv
        self.group.limit(processes)
        return self.group.argv(argv)

    def close(self) -> None:
        """Kill everything the run left running, then let the watchdog go."""
        with _lock:
            if _runs.get(self.run_id) is self:
                del _runs[self.run_id]
        sweep_run(self.run_id)
        if self.group is not None:
            self.group.close()
        if self.watchdog.stdin is not None:
            self.watchdog.stdin.close()
        try:
            self.watchdog.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.watchdog.kill()


def for_run(run_id: str) -> Lifetime:
    """The run's Lifetime in this process, started on first use."""
    with _lock:
        if run_id not in _runs:
            _runs[run_id] = Lifetime(run_id)
        return _runs[run_id]


def sweep_run(run_id: str) -> list[int]:
    """Kill every process a code_run of this run started (by its marker, and in its cgroup); returns their pids."""
    return sorted({*watchdog.sweep(f"{run_id}/"), *cgroup.sweep(run_id)})
