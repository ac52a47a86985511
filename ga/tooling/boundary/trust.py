"""What a run runs with, kept: a resume goes on with the settings the run started with, from state.json.

state.json lies in GA_HOME, which the file tools refuse and the sandbox does not show: the model cannot rewrite
`"sandbox": false` there (only code run with --no-sandbox could, and then the sandbox was off already). So a resume
takes the kept settings (KEPT and the endpoint) as the run recorded them, and only a flag given on the resume
changes one; what the resume runs with is recorded again."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ga.config import Settings
from ga.errors import ConfigError

KEPT = ("workdir", "model", "mode", "sandbox", "allow_paths", "learn", "check")
"""Settings a resumed run keeps from its first invocation unless their flags are given again."""


def record(settings: Settings) -> dict:
    """The kept settings as state.json holds them (the endpoint without its key)."""
    kept = {k: getattr(settings, k) for k in KEPT}
    kept.update(workdir=str(settings.workdir), allow_paths=[str(p) for p in settings.allow_paths],
                endpoint={"base_url": settings.base_url, "profile": settings.profile})
    return kept


def remembered_endpoint(run: Any) -> dict:
    """The endpoint a resumed run (ga.runs.folder.Run, a room above) started with ({"base_url", "profile"}), or {}."""
    endpoint = run.state.get("endpoint")
    return endpoint if isinstance(endpoint, dict) else {}


def resumed(run: Any, settings: Settings, given: set[str]) -> Settings:
    """The settings a resume runs with (`given`: the KEPT settings whose flags this invocation gave); the run's state
    then records them."""
    changes = {k: run.state[k] for k in KEPT if k not in given and run.state.get(k) not in (None, "")}
    if "allow_paths" in changes:
        changes["allow_paths"] = [Path(p) for p in changes["allow_paths"]]
    if "workdir" in changes:
        changes["workdir"] = Path(changes["workdir"])
        if not changes["workdir"].is_dir():
            raise ConfigError(f"Run {run.id} worked in {changes['workdir']}, which no longer exists: pass --workdir.")
    effective = dataclasses.replace(settings, **changes)
    run.state.update(record(effective))
    return effective
