"""HOME's start-up files in the sandbox, when a folder code may write shows them (the workspace is HOME, or holds it).

Shells, desktops and programs read HOME's dotfiles and dot-folders (.bashrc, .profile, .config/autostart, .local/bin,
pip.conf...) and ~/bin later, outside any sandbox. So before a command each that exists is mounted read-only (a
symlinked one: its target, when a folder code may write holds it), except inside an --allow-path folder; after it, a
dot-entry or ~/bin it created at HOME's top, and a symlinked one it replaced, are moved aside as NAME.disabled-by-ga
(the link put back), and the result says so. Credential stores and histories are hidden outright (sandbox.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tools.guard.git_meta import aside_name

STARTUP_NAMES = ("bin", "AGENTS.md", "CLAUDE.md")
"""Start-up places at HOME's top without a dot: a login shell puts ~/bin on PATH when it exists, and every later run
of ga (or another agent) under HOME reads HOME's agent instructions as the user's own."""


def _holds(root: Path, path: Path) -> bool:
    return path == root or path.is_relative_to(root)


def reaching(home: Path, writable: list[Path]) -> list[Path]:
    """The writable folders that show HOME's top: HOME itself or a folder holding it."""
    return [w for w in writable if _holds(w, home)]


def startup_entries(home: Path, writable: list[Path], path_entries: list[Path]) -> list[Path]:
    """What to mount read-only: HOME's dot-entries and start-up folders, the PATH entries inside HOME, and where
    their symlinks point inside the writable folders. Empty when no writable folder shows HOME's top."""
    if not reaching(home, writable):
        return []
    try:
        names = os.listdir(home)
    except OSError:
        return []
    found = [home / n for n in names if n.startswith(".") or n in STARTUP_NAMES]
    found += [p for p in path_entries if p.is_absolute() and p != home and p.is_relative_to(home)]
    # a link cannot be mounted over (bwrap would follow it): where it points is, and after() restores the link
    found = [Path(os.path.realpath(p)) if p.is_symlink() else p for p in found]
    named = [w for w in writable if w not in reaching(home, writable)]  # --allow-path ~/.cache/pip stays writable
    return sorted({p for p in found if any(_holds(w, p) for w in writable) and not any(_holds(w, p) for w in named)
                   and not any(_holds(p, w) for w in reaching(home, writable))})  # a link to HOME: not HOME


@dataclass(kw_only=True)
class HomeGuard:
    """Per command: what HOME's top held before it, to undo what it added or replaced there."""

    home: Path
    links: dict[str, str] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    watching: bool = False

    def before(self, writable: list[Path]) -> None:
        self.watching = bool(reaching(self.home, writable))
        if not self.watching:
            return
        self.names, self.links = set(), {}
        for name in _watched(self.home):
            self.names.add(name)
            if (self.home / name).is_symlink():
                self.links[name] = os.readlink(self.home / name)

    def after(self) -> list[str]:
        """Move aside what the command created or replaced at HOME's top; returns what moved, for the model."""
        if not self.watching:
            return []
        changed = []
        for name in sorted(_watched(self.home) | set(self.links)):
            path = self.home / name
            link = self.links.get(name)
            same = os.path.islink(path) and os.readlink(path) == link if link is not None else name in self.names
            if same:
                continue
            if os.path.lexists(path):
                aside = aside_name(path)
                os.rename(path, aside)
                changed.append(f"{path}: moved to {aside.name} (a start-up file in HOME runs on the host later)")
            if link is not None:
                os.symlink(link, path)
                changed.append(f"{path}: the link to {link} was put back")
        return changed


def _watched(home: Path) -> set[str]:
    try:
        return {n for n in os.listdir(home) if n.startswith(".") or n in STARTUP_NAMES}
    except OSError:
        return set()
