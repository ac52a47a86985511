"""results.jsonl: one line per finished trial, appended as trials finish, read back to resume and to report."""

from __future__ import annotations

import json
import os
from pathlib import Path

REQUIRED = ("task", "agent", "trial", "success", "input_tokens", "cached_tokens", "output_tokens", "requests",
            "tool_calls", "wall_s")
"""The fields DESIGN.md promises on every line."""


HARNESS_ERRORS = ("harness error:", "task setup failed", "worker lost", "adapter error", "no scripted upstream")
"""How a row's error starts when the harness, not the agent, failed the trial (bench/harness/trial.py, runner.py)."""


def harness_error(row: dict) -> bool:
    """The trial failed in the harness (a task that would not set up, a worker that died, a harness bug): it says
    nothing about the agent, so it is counted apart and run again when the bench is run again."""
    return str(row.get("error") or "").startswith(HARNESS_ERRORS)


def key(row: dict) -> tuple[str, str, int]:
    return row["task"], row["agent"], int(row["trial"])


def load(path: Path) -> list[dict]:
    """The finished trials; a torn last line (a killed harness) is skipped, and a trial written twice keeps its
    last line."""
    if not path.is_file():
        return []
    rows: dict[tuple, dict] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and all(k in row for k in REQUIRED):
            rows[key(row)] = row
    return list(rows.values())


def append(path: Path, row: dict) -> None:
    """One line in one write, flushed and synced: a kill leaves at most a torn last line, which load() skips."""
    line = json.dumps(row, ensure_ascii=False) + "\n"
    with open(path, "a+b") as f:
        if f.tell() and (f.seek(-1, os.SEEK_END), f.read(1))[1] != b"\n":
            line = "\n" + line  # after a torn line, start fresh
        f.write(line.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


def harvest(out: Path, known: set[tuple]) -> list[dict]:
    """Trials that finished (result.json written) but never reached results.jsonl: the harness died in between."""
    found = []
    for result in sorted((out / "trials").glob("*/*/*/result.json")):
        try:
            row = json.loads(result.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(row, dict) and all(k in row for k in REQUIRED) and key(row) not in known:
            found.append(row)
    return found
