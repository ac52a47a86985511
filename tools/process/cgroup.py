"""A pids cgroup per run, where the host lets ga make one: every code_run process of the run joins it, so the run's
processes can be counted (the sandbox's process limit holds for root, whom RLIMIT_NPROC does not bind) and found
all, even one that cleared its environment and left its session (`env -i setsid ...`): at the run's end, and
when ga dies (the watchdog), everything in it is killed.

It is made below ga's own cgroup in the pids hierarchy: with cgroup v1, or with a cgroup v2 subtree where the
pids controller is already enabled for ga's children (a delegated one). Elsewhere (a v2 session or container
cgroup that holds ga itself, no write access) there is none, and runs go on without it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from tools.process.watchdog import kill_group

JOIN = 'echo 0 > "$0" && exec "$@"'
"""`sh -c JOIN PROCS argv...`: the shell moves itself into the group, then becomes the program (one exec more)."""


def _pids_hierarchy() -> Path | None:
    """Where ga's own pids cgroup is mounted: a v1 `pids` hierarchy, or v2 with pids for ga's children."""
    try:
        own = dict(line.split(":", 2)[1:] for line in Path("/proc/self/cgroup").read_text().splitlines())
        mounts = [line.split() for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    except (OSError, ValueError):
        return None
    for fields in mounts:
        dash = fields.index("-")
        kind, options, root, point = fields[dash + 1], fields[dash + 3].split(","), fields[3], fields[4]
        key = "pids" if kind == "cgroup" and "pids" in options else "" if kind == "cgroup2" else None
        if key is None or key not in own:
            continue
        path = own[key]
        if not (path == root or path.startswith(root.rstrip("/") + "/")):
            continue
        folder = Path(point, path[len(root.rstrip("/")):].lstrip("/"))
        if kind == "cgroup" or "pids" in _read(folder / "cgroup.subtree_control").split():
            return folder
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


class RunGroup:
    """The run's cgroup: `argv()` makes a command join it; `kill()` ends everything in it; `close()` removes it."""

    def __init__(self, path: Path):
        self.path = path

    @classmethod
    def create(cls, run_id: str) -> RunGroup | None:
        parent = _pids_hierarchy()
        if parent is None:
            return None
        path = parent / f"ga-{run_id}"
        sweep(run_id)  # left by a ga of this run that crashed along with its watchdog
        try:
            path.mkdir(exist_ok=True)
        except OSError:
            return None
        if not (path / "pids.max").exists() or not os.access(path / "cgroup.procs", os.W_OK):
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path)

    def limit(self, processes: int) -> None:
        """At most this many processes at once (0: no limit)."""
        with contextlib.suppress(OSError):
            (self.path / "pids.max").write_text(str(processes) if processes else "max")

    def argv(self, argv: list[str]) -> list[str]:
        return ["/bin/sh", "-c", JOIN, str(self.path / "cgroup.procs"), *argv]

    def pids(self) -> list[int]:
        return [int(p) for p in _read(self.path / "cgroup.procs").split()]

    def close(self) -> list[int]:
        """Kill everything in it, then remove it; returns the pids killed."""
        return kill_group(str(self.path))


def sweep(run_id: str) -> list[int]:
    """Kill what is left in the run's cgroup and remove it (at a resume: ga and its watchdog died together)."""
    parent = _pids_hierarchy()
    if parent is None or not (parent / f"ga-{run_id}").is_dir():
        return []
    return kill_group(str(parent / f"ga-{run_id}"))
