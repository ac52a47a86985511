"""Side-effect classes, permission modes and workspace confinement."""

from __future__ import annotations

import enum
import os
from pathlib import Path

from ga.errors import ConfigError, PermissionDenied


class SideEffect(enum.Enum):
    READ_ONLY = "read_only"
    WRITE = "write"
    SYSTEM_CHANGE = "system_change"


def check_mode(mode: str, tool: str, side_effect: SideEffect, confined: str | None = None) -> None:
    """Plan mode lets only READ_ONLY tools run, and a tool that can be confined to change nothing (`confined`: ""
    when that holds here, else why not; None: it cannot be). Confirm mode is the dispatcher's approval step."""
    if mode != "plan" or side_effect is SideEffect.READ_ONLY or confined == "":
        return
    why = f" In plan mode it runs only where it can change nothing, and {confined}." if confined else ""
    raise PermissionDenied(
        f"Refused: the run is in plan mode (rule: plan-mode-read-only), so {tool} ({side_effect.value}) "
        f"may not run.{why} Only read-only tools work here: look, then give your plan as the final answer."
    )


def check_allow_paths(paths: list[Path], *, home: Path, ga_home: Path) -> list[str]:
    """Refuse (ConfigError) an --allow-path of `/` or in ga's own home; warn about HOME or a folder holding it. The
    warnings are returned, one line each, for the terminal."""
    warnings = []
    for path in paths:
        if path == Path(path.anchor):
            raise ConfigError(f"--allow-path {path} would let the file tools and sandboxed code change anything you "
                              "can on this computer: name the folders the task needs instead.")
        if path == ga_home or path.is_relative_to(ga_home):
            raise ConfigError(f"--allow-path {path} lies in ga's own home {ga_home} (its settings and keys, the "
                              "command policy, other runs): the model reads SOPs and memory there already, and "
                              "changes them through start_long_term_update. Name another folder.")
        if home.is_relative_to(path):
            warnings.append(f"--allow-path {path} holds your home folder: the file tools and sandboxed code may "
                            "change files anywhere in it (the file tools ask before changing a dotfile; credential "
                            "stores and GA_HOME stay hidden from both). Name a smaller folder unless the task needs "
                            "all of it.")
    return warnings


def confine(path: str, workspace: Path, roots: list[Path], *, write: bool) -> Path:
    """Resolve `path` (relative to the workspace) and refuse it unless it lies inside an allowed root.

    Symlinks and `..` are resolved first, so a link pointing out of the workspace is refused too. The file tools
    then open exactly the returned path without following links (ga/tooling/boundary/confined.py), so a link that
    changes after this check cannot take them outside. A path outside is never rewritten onto a workspace file,
    whatever it looks like: the refusal names the workspace file the model may have meant, and a model that reads
    errors retries."""
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
    why = "lies outside the workspace" if outside else "resolves (through a symlink) outside the workspace"
    verb = "write" if write else "read"
    raise PermissionDenied(
        f"Refused to {verb} {path}: it {why} {workspace} (rule: workspace-confinement; resolved to {target}). "
        f"{_inside_hint(lexical, workspace, write=write)}; the user can allow more with --allow-path DIR."
    )


def meant_inside(lexical: Path, workspace: Path) -> tuple[str, bool] | None:
    """The workspace entry a path outside may have meant, relative to the workspace, and whether it exists (else it
    is a new file in a folder the workspace has): the workspace's absolute path with a folder dropped (/trial/1/logs
    for /trial/1/workspace/logs), a stray leading slash (/logs/app.log), or the same path under the workspace
    (/etc/myapp/app.conf for the workspace's etc/myapp/app.conf). Never reached through a link out of the
    workspace; only ever named in a refusal, never used in the path's place."""
    common = Path(os.path.commonpath([lexical, workspace]))
    candidates = [workspace / lexical.relative_to(common), workspace / lexical.relative_to(lexical.anchor)]
    for candidate, exists in [(c, True) for c in candidates] + [(c, False) for c in candidates]:
        entry = candidate if exists else candidate.parent
        try:
            real = entry.resolve()
        except (OSError, RuntimeError):
            continue
        if (os.path.lexists(candidate) if exists else entry.is_dir()) and real.is_relative_to(workspace) \
                and real != workspace:
            return str(candidate.relative_to(workspace)), exists
    return None


def _inside_hint(lexical: Path, workspace: Path, *, write: bool) -> str:
    """What to pass instead: a model that mistypes the workspace's long absolute path means a file inside it."""
    if meant := meant_inside(lexical, workspace):
        where, exists = meant
        if exists:
            return (f"The workspace has {where}: if you meant it, pass path={where!r} (paths are relative to the "
                    "workspace)")
        if write:
            return (f"The workspace has the folder {Path(where).parent}: if you meant a new file there, pass "
                    f"path={where!r} (paths are relative to the workspace)")
    name = lexical.name
    if name and (workspace / name).exists():
        return f"The workspace has {name}: if you meant it, pass path={name!r} (paths are relative to the workspace)"
    if name and write:
        return f"Use a path inside the workspace, relative to it (e.g. path={name!r})"
    return "Use a path inside the workspace"
