"""Protected paths: places where a write takes effect later, outside the run, so no tool writes there unasked.

- git's metadata anywhere: a `.git` folder or file, `.gitmodules`, a folder git would take for a repository
  (HEAD beside objects/ and refs/, a bare or crafted one), and git's own configuration in HOME. A hook, or
  `core.fsmonitor` in a config, runs as the user's next git command, on the host, long after the run.
- ga's own code and the Python it runs on (its checkout or installed package, its virtualenv, the standard library
  and site-packages): a change there runs on the host the next time ga starts.
- ga's own configuration in GA_HOME: the command policy (`policy.json`, which decides what runs unattended),
  settings files, schedules (tasks that start by themselves) and the memory rules.

A file tool's write there needs a human's approval (asked on a terminal, refused unattended); confirm mode
counts as approval, since the human already saw the change. code_run's policy flags the same paths, and all of
GA_HOME (tools/guard); inside the sandbox they are read-only or hidden, and git metadata a command creates is
made harmless after it (tools/guard/git_meta.py).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import site
import sys
import sysconfig
from pathlib import Path

from ga.config import Settings
from ga.errors import PermissionDenied
from ga.protocols import UI

IN_GA_HOME = ("policy.json", "settings.*", "config.*", ".env", "schedule", "schedule/*", "memory/rules*",
              "memory/RULES*")
"""Globs relative to GA_HOME (a match on a folder covers what it holds)."""
OWN_CODE = ("ga", "tools", "memory", "sop", "bench/harness", "run.py", "pyproject.toml")
"""What of ga's checkout (or of the site-packages it is installed in) runs when ga starts."""
GIT_IN_HOME = (".gitconfig", ".config/git")
GIT_NAMES = (".git", ".gitmodules")
_GIT = ("inside git's metadata: hooks and config written there run commands at the user's next git command, "
        "outside the run")


def why_protected(path: Path, ga_home: Path, home: Path | None = None) -> str:
    """Why `path` (absolute, normalised) is protected, or "" when it is not."""
    home = Path.home() if home is None else home
    if any(part in GIT_NAMES for part in path.parts) or in_git_dir(path):
        return _GIT
    if any(path == home / name or path.is_relative_to(home / name) for name in GIT_IN_HOME):
        return "git's own configuration in HOME: what it sets runs at every git command of the user"
    if any(path == root or path.is_relative_to(root) for root in own_code()):
        return ("ga's own code or the Python it runs on: a change there runs on the host the next time ga "
                "starts")
    if path.is_relative_to(ga_home) and path != ga_home:
        relative = path.relative_to(ga_home)
        prefixes = [Path(*relative.parts[:n]).as_posix() for n in range(1, len(relative.parts) + 1)]
        if any(fnmatch.fnmatchcase(p, glob) for p in prefixes for glob in IN_GA_HOME):
            return "ga's own configuration (the command policy, settings, schedules or memory rules)"
    return ""


def is_git_dir(folder: Path) -> bool:
    """A folder git would use as a repository: HEAD with objects/ and refs/, or a worktree's HEAD and commondir."""
    try:
        if not (folder / "HEAD").is_file():
            return False
        return (folder / "commondir").is_file() or ((folder / "objects").is_dir() and (folder / "refs").is_dir())
    except OSError:
        return False


def in_git_dir(path: Path) -> bool:
    """`path` lies in a git repository's own folder (whatever its name), or is one."""
    return any(is_git_dir(folder) for folder in (path, *path.parents) if folder != Path("/"))


@functools.lru_cache(maxsize=1)
def own_code() -> tuple[Path, ...]:
    """ga's code (checkout or installed package), the standard library, site-packages and ga's virtualenv."""
    root = Path(__file__).resolve().parents[2]
    paths = [root / name for name in OWN_CODE]
    scheme = sysconfig.get_paths()
    paths += [Path(scheme[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in scheme]
    paths += [Path(p) for p in site.getsitepackages()] + [Path(os.path.realpath(sys.executable)).parent]
    if site.ENABLE_USER_SITE:
        paths.append(Path(site.getusersitepackages()))
    if sys.prefix != sys.base_prefix:  # a virtualenv: its bin/ (python, ga's entry point) too
        paths.append(Path(sys.prefix))
    found = {p.resolve() for p in paths if p.exists()}
    return tuple(sorted(found, key=lambda p: len(p.parts)))


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
