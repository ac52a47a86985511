"""code_run's children live no longer than ga: PR_SET_PDEATHSIG on each child, a marker in its environment
(GA_CODE_RUN=RUN_ID/CALL) inherited by everything it starts, the run's cgroup where the host gives one (cgroup.py),
and a watchdog that kills all of that when ga dies. At the run's end, and when a run is resumed after a crash,
everything the run started is killed, background servers included."""

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

from tools.process import cgroup, watchdog

MARKER = watchdog.MARKER
PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)
_lock = threading.Lock()
_runs: dict[str, Lifetime] = {}


@functools.cache
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
    """The command and preexec_fn that give the child PR_SET_PDEATHSIG: through setpriv when it is there, which
    keeps subprocess's fast vfork path (a preexec_fn forces fork(): 70 ms for a 300 MB ga), else a preexec_fn."""
    if setpriv := _setpriv():
        return [setpriv, "--pdeathsig", "KILL", "--", *argv], None

    def die_with_parent() -> None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # ga died between the fork and the prctl
            os.kill(os.getpid(), signal.SIGKILL)
    return argv, die_with_parent


class Lifetime:
    """The processes one run started, watched from outside ga. A ToolContext resource: close() at the run's end."""

    def __init__(self, run_id: str):
        self.run_id, self.prefix = run_id, f"{run_id}/"
        sweep_run(run_id)  # what an earlier ga on this run left behind, if its watchdog died with it
        self.group = cgroup.create(run_id)
        group = [str(self.group)] if self.group else []
        self.watchdog = subprocess.Popen([sys.executable, "-I", "-S", watchdog.__file__, self.prefix, *group],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)

    def marker(self) -> str:
        return self.prefix + uuid.uuid4().hex

    def contain(self, argv: list[str], processes: int = 0) -> list[str]:
        """argv joining the run's cgroup, limited to `processes` at once (0: no limit); as is without one."""
        return argv if self.group is None else cgroup.contain(self.group, argv, processes)

    def close(self) -> None:
        """Kill everything the run left running (by marker and in its cgroup), then let the watchdog go."""
        with _lock:
            if _runs.get(self.run_id) is self:
                del _runs[self.run_id]
        sweep_run(self.run_id)
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
