"""A pids cgroup per run, where the host lets ga make one (cgroup v1, or a v2 subtree whose pids controller is
enabled for ga's children): every code_run process of the run joins it, so the sandbox's process limit holds for
root too (RLIMIT_NPROC does not bind root), and a process that cleared its environment and left its session
(`env -i setsid ...`) is still found and killed at the run's end, or by the watchdog. Elsewhere there is none."""

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
        path = own.get(key) if key is not None else None
        if path is None or not (path == root or path.startswith(root.rstrip("/") + "/")):
            continue
        folder = Path(point, path[len(root.rstrip("/")):].lstrip("/"))
        try:
            if kind == "cgroup" or "pids" in (folder / "cgroup.subtree_control").read_text().split():
                return folder
        except OSError:
            continue
    return None


def create(run_id: str) -> Path | None:
    """The run's cgroup, made anew (what a crashed ga of this run left in it killed first), or None."""
    parent = _pids_hierarchy()
    if parent is None:
        return None
    path = parent / f"ga-{run_id}"
    sweep(run_id)
    with contextlib.suppress(OSError):
        path.mkdir(exist_ok=True)
        if (path / "pids.max").exists() and os.access(path / "cgroup.procs", os.W_OK):
            return path
        path.rmdir()
    return None


def contain(group: Path, argv: list[str], processes: int) -> list[str]:
    """argv joining the group, which then holds at most `processes` at once (0: no limit)."""
    with contextlib.suppress(OSError):
        (group / "pids.max").write_text(str(processes) if processes else "max")
    return ["/bin/sh", "-c", JOIN, str(group / "cgroup.procs"), *argv]


def sweep(run_id: str) -> list[int]:
    """Kill what is left in the run's cgroup and remove it; returns the pids killed."""
    parent = _pids_hierarchy()
    group = parent / f"ga-{run_id}" if parent is not None else None
    return kill_group(str(group)) if group is not None and group.is_dir() else []
