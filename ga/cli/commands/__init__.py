"""Subcommands (python run.py COMMAND ...): each module's main(argv) -> exit code; routed by arguments.py's COMMANDS."""

from __future__ import annotations

from pathlib import Path

from ga.config import load_settings
from ga.runs.folder import resolve_id


def run_folder(given: str) -> Path:
    """The folder of the run named by an id or a unique prefix (ConfigError naming what exists otherwise)."""
    runs_dir = load_settings().runs_dir
    return runs_dir / resolve_id(runs_dir, given)
