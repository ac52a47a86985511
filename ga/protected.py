"""Protected paths: places where a write takes effect later, outside the run, so no tool writes there unasked.

- `.git` (any folder or file of that name): a hook, or `core.fsmonitor` in its config, runs as the user's next
  git command, on the host, long after the run (and outside any sandbox).
- ga's own configuration in GA_HOME: the command policy (`policy.json`, which decides what runs unattended),
  settings files, schedules (tasks that start by themselves) and the memory rules.

A file tool's write there needs a human's approval (asked on a terminal, refused unattended); confirm mode
counts as approval, since the human already saw the change. code_run's policy flags the same paths
(tools/guard); inside the sandbox they are read-only or hidden.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from ga.config import Settings
from ga.errors import PermissionDenied
from ga.protocols import UI

IN_GA_HOME = ("policy.json", "settings.*", "config.*", ".env", "schedule", "schedule/*", "memory/rules*",
              "memory/RULES*")
"""Globs relative to GA_HOME (a match on a folder covers what it holds)."""


def why_protected(path: Path, ga_home: Path) -> str:
    """Why `path` (absolute, normalised) is protected, or "" when it is not."""
    if ".git" in path.parts:
        return ("inside .git: hooks and config written there run commands at the user's next git command, "
                "outside the run")
    if path.is_relative_to(ga_home) and path != ga_home:
        relative = path.relative_to(ga_home)
        prefixes = [Path(*relative.parts[:n]).as_posix() for n in range(1, len(relative.parts) + 1)]
        if any(fnmatch.fnmatchcase(p, glob) for p in prefixes for glob in IN_GA_HOME):
            return "ga's own configuration (the command policy, settings, schedules or memory rules)"
    return ""


def approve_write(path: Path, settings: Settings, ui: UI, *, interactive: bool) -> None:
    """Let a file tool write `path`, or raise PermissionDenied (rule: protected-path)."""
    reason = why_protected(path, settings.home)
    if not reason or settings.mode == "confirm":
        return
    if interactive and not settings.autonomous:
        answer, _ = ui.approve(f"write to a protected path: {reason} (rule: protected-path)", str(path))
        if answer == "approve":
            return
        raise PermissionDenied(f"The user did not approve writing {path} (rule: protected-path; {reason}). "
                               "Nothing was written. Leave it alone, or ask the user to make this change.")
    raise PermissionDenied(
        f"Refused to write {path}: it is {reason} (rule: protected-path), and only a human may approve that; "
        "no human is at a terminal. Nothing was written. Leave it alone, or ask the user to change it themselves.")
