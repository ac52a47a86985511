"""Subcommands (ga COMMAND ...): each module's main(argv) -> exit code; routed by arguments.py's COMMANDS."""

from __future__ import annotations

from pathlib import Path

from ga.config import load_settings
from ga.runs.folder import resolve_id


def run_folder(given: str) -> Path:
    """The folder of the run named by an id or a unique prefix (ConfigError naming what exists otherwise)."""
    runs_dir = load_settings().runs_dir
    return runs_dir / resolve_id(runs_dir, given)


def amount(n: float, units: tuple[str, str, str] = (" bytes", " kB", " MB")) -> str:
    """`n` in a few digits: 950 bytes, 12.3 kB, 4.5 MB (units: one, thousand, million)."""
    return f"{n / 1e6:.1f}{units[2]}" if n >= 1e6 else f"{n / 1e3:.1f}{units[1]}" if n >= 1000 else f"{n}{units[0]}"
