"""Side-effect classes, permission modes and workspace confinement."""

from __future__ import annotations

import enum
import os
from pathlib import Path

from ga.errors import PermissionDenied


class SideEffect(enum.Enum):
    READ_ONLY = "read_only"
    WRITE = "write"
    SYSTEM_CHANGE = "system_change"


def check_mode(mode: str, tool: str, side_effect: SideEffect) -> None:
    """Plan mode lets only READ_ONLY tools run (confirm mode is handled by the dispatcher's approval step)."""
    if mode == "plan" and side_effect is not SideEffect.READ_ONLY:
        raise PermissionDenied(
            f"Refused: the run is in plan mode (rule: plan-mode-read-only), so {tool} ({side_effect.value}) "
            "may not run. Only read-only tools work here: look, then give your plan as the final answer."
        )


def confine(path: str, workspace: Path, roots: list[Path], *, write: bool, notes: list[str] | None = None,
            task: str = "") -> Path:
    """Resolve `path` (relative to the workspace) and refuse it unless it lies inside an allowed root.

    Symlinks and `..` are resolved first, so a link pointing out of the workspace is refused too. The file tools
    then open exactly the returned path without following links (tools/files/confined.py), so a link that changes after
    this check cannot take them outside. A path outside that does not exist, where the workspace has what it names,
    is taken inside (see _meant_inside; `task`: the user's words), with a line for the model in `notes`.
    """
    if not path or "\x00" in path:
        raise PermissionDenied(f"Invalid path {path!r}: give a file path relative to the workspace.")
    raw = Path(os.path.expanduser(path))
    try:
        target = (raw if raw.is_absolute() else workspace / raw).resolve()
    except RuntimeError as e:  # a symlink loop (other OSErrors: a link changed while it was read; the caller retries)
        raise PermissionDenied(f"Cannot resolve {path}: {e}. Give a path without a symlink loop.") from None
    allowed = [workspace, *roots]
    if any(target == r or target.is_relative_to(r) for r in allowed):
        return target
    lexical = Path(os.path.normpath(raw if raw.is_absolute() else workspace / raw))
    outside = not any(lexical.is_relative_to(r) for r in allowed)
    slip = outside and path.startswith("/")  # an absolute path; `..` and `~` say outside on purpose
    if slip and (inside := _meant_inside(lexical, workspace, named=_named(path, lexical, task))) is not None:
        if notes is not None:
            notes.append(f"[{path} does not exist, so {inside.relative_to(workspace)} in the workspace was used: "
                         "paths are relative to the workspace.]")
        return inside
    why = "lies outside the workspace" if outside else "resolves (through a symlink) outside the workspace"
    verb = "write" if write else "read"
    raise PermissionDenied(
        f"Refused to {verb} {path}: it {why} {workspace} (rule: workspace-confinement; resolved to {target}). "
        f"{_inside_hint(lexical.name, workspace, write=write)}; the user can allow more with --allow-path DIR."
    )


def _meant_inside(lexical: Path, workspace: Path, *, named: bool) -> Path | None:
    """The workspace entry a model meant by a path outside that does not exist: the workspace's absolute path with a
    folder dropped (/trial/1/logs for /trial/1/workspace/logs, /w/hello.txt for /w/hello/hello.txt) or a stray
    leading slash (/logs/app.log). Taken when the entry exists inside, or, for a new file, when its folder exists
    inside and the user did not name the path (`named`: then the refusal stands); never through a symlink out."""
    if os.path.lexists(lexical):
        return None
    candidate = workspace / lexical.relative_to(os.path.commonpath([lexical, workspace]))
    if not (os.path.lexists(candidate) or (candidate.parent.is_dir() and not named)):
        return None
    try:
        real = candidate.resolve()
    except (OSError, RuntimeError):
        return None
    return real if real == workspace or real.is_relative_to(workspace) else None


def _named(path: str, lexical: Path, task: str) -> bool:
    """Whether the user's words hold the path (as sent, normalised, or under ~)."""
    home, full = os.path.expanduser("~"), str(lexical)
    forms = {path, full} | ({"~" + full[len(home):]} if full.startswith(home + os.sep) else set())
    return any(form in task for form in forms)


def _inside_hint(name: str, workspace: Path, *, write: bool) -> str:
    """What to pass instead: a model that mistypes the workspace's long absolute path means a file inside it."""
    if name and (workspace / name).exists():
        return f"The workspace has {name}: pass path={name!r} (paths are relative to the workspace)"
    if name and write:
        return f"Use a path inside the workspace, relative to it (e.g. path={name!r})"
    return "Use a path inside the workspace"
