"""Where a path a command names points: placed against the workspace, the home folder and ga's own home.

Words are expanded as bash would with what the script itself makes known (literal assignments, `cd`, loop
items, function arguments); anything else (a variable from the environment, output read at run time) is
unknown. An unknown part is taken as empty to place the path, and the Target says whether a literal folder
comes before it (`build/$X` stays in build/; `$X/build` could be anywhere).
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ga.tooling.boundary.protected import why_protected
from tools.guard.shell_expand import PARAMETER, expand_parameter

UNKNOWN = "${UNKNOWN}"
"""What stands for a value only run time knows (the output of a command, a computed Python value)."""
_HOLE = "\x00"
_GLOB = re.compile(r"[*?\[]")
_WHOLE_GLOBS = {"*", ".*", "*.*", "**", ".[!.]*", ".??*"}
_TEMP_ROOTS = sorted({Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path(tempfile.gettempdir())})
CATASTROPHIC_PLACES = ("root", "home", "workspace-root", "ancestor", "top-level")


def normpath(path: str) -> str:
    """os.path.normpath, with a leading `//` (kept by POSIX) collapsed: `//` is `/`."""
    path = os.path.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path


@functools.lru_cache(maxsize=256)
def expand_user(text: str) -> str:
    """`~name/x` as bash expands it (`~root` is /root); an unknown user stays literal."""
    return os.path.expanduser(text)


def entries_below(root: str, selective: bool) -> str:
    """A path pattern meaning "what lies below root": all of it, or only some entries (find -name ...)."""
    return f"{root.rstrip('/') or '/'}/*" + ("/*" if selective else "")


@dataclass(kw_only=True)
class Target:
    """A path as a command names it, placed relative to the workspace and the home folder."""

    text: str
    path: Path
    place: str
    """root, home, workspace-root, ancestor, top-level, inside, temp or outside."""
    unknown: bool = False
    """Part of it came from a variable or output the policy cannot see (taken as empty to place it)."""
    anchored: bool = True
    """A literal folder comes before the unknown part (`build/$X`), so the path stays below it."""
    deep_glob: bool = False
    """Only some entries below `path` are meant (`dir/*.log`, `dir/*/cache`), not `path` itself."""
    protected: str = ""
    """Why the path is protected (.git, ga's configuration), or ""."""

    @property
    def catastrophic(self) -> bool:
        return self.place in CATASTROPHIC_PLACES and not self.deep_glob


@dataclass(kw_only=True)
class Places:
    workspace: Path
    home: Path
    cwd: Path
    ga_home: Path | None = None
    """GA_HOME: its configuration files are protected paths (ga/tooling/boundary/protected.py)."""
    variables: dict[str, str] = field(default_factory=dict)
    """Shell variables the script set; UNKNOWN when set to something only run time knows."""
    cwd_known: bool = True
    """False after `cd $X` with X unknown: relative paths are then unknown too."""

    @contextlib.contextmanager
    def subshell(self) -> Iterator[None]:
        """`( ... )` and `$( ... )` run in a child shell: its `cd` and variables do not reach the script after it."""
        saved = (self.cwd, self.cwd_known, dict(self.variables))
        try:
            yield
        finally:
            self.cwd, self.cwd_known = saved[0], saved[1]
            self.variables.clear()
            self.variables.update(saved[2])

    def target(self, text: str, *, selective: bool = False) -> Target:
        """`selective`: only some entries below the path are meant (e.g. find -name ...)."""
        expanded = self._holes(text)
        unknown = _HOLE in expanded or (not self.cwd_known and not expanded.startswith("/"))
        prefix = expanded.split(_HOLE, 1)[0]
        anchored = bool(prefix) and (self.cwd_known or prefix.startswith("/"))
        parts = Path(expanded.replace(_HOLE, "")).parts
        glob_at = next((i for i, p in enumerate(parts) if _GLOB.search(p)), None)
        if glob_at is not None:  # `dir/*` deletes what `dir` holds: judge it as `dir`
            selective = selective or glob_at < len(parts) - 1 or parts[glob_at] not in _WHOLE_GLOBS
            parts = parts[:glob_at]
        raw = Path(*parts) if parts else Path(".")
        path = Path(normpath(str(raw if raw.is_absolute() else self.cwd / raw)))
        return Target(text=text, path=path, place=self.place(path), unknown=unknown, anchored=anchored,
                      deep_glob=selective, protected=self.protected(path))

    def protected(self, path: Path) -> str:
        """Why a command may not change `path` unasked: a protected path, or any of GA_HOME (SOPs, memory and runs
        change through ga's own tools while the run goes on, never behind them)."""
        ga_home = self.ga_home or self.home / ".ga"
        if reason := why_protected(path, ga_home, self.home):
            return reason
        if path == ga_home or path.is_relative_to(ga_home):
            return "ga's own data (GA_HOME: SOPs, memory and runs change only through ga's tools)"
        return ""

    def expand(self, text: str) -> str | None:
        """The word as bash would expand it, or None when a part of it is unknown."""
        expanded = self._holes(text)
        return None if _HOLE in expanded else expanded

    def value(self, name: str) -> str | None:
        if name in self.variables:
            value = self.variables[name]
            return None if value == UNKNOWN else value
        known = {"HOME": str(self.home), "PWD": str(self.cwd) if self.cwd_known else None, "TMPDIR": "/tmp",
                 "USER": _user(), "LOGNAME": _user(), "IFS": " \t\n"}
        return known.get(name)

    def assign(self, name: str, raw: str) -> None:
        value = self.expand(raw)
        self.variables[name] = UNKNOWN if value is None else value

    def _holes(self, text: str) -> str:
        """Expand `~` and parameters; what is unknown becomes a hole character."""
        if text == "~" or text.startswith("~/"):
            text = str(self.home) + text[1:]
        elif text == "~+" or text.startswith("~+/"):
            text = str(self.cwd) + text[2:]
        elif text.startswith("~"):
            text = expand_user(text)

        def parameter(m: re.Match) -> str:
            value = (expand_parameter(m.group(1), self.value, self.expand) if m.group(1) is not None
                     else self.value(m.group(2)))
            return _HOLE if value is None else value
        return PARAMETER.sub(parameter, text)

    def place(self, path: Path) -> str:
        if path == Path("/"):
            return "root"
        if path == self.home:
            return "home"
        if path == self.workspace:
            return "workspace-root"
        if self.home.is_relative_to(path) or self.workspace.is_relative_to(path):
            return "ancestor"
        if len(path.parts) == 2:
            return "top-level"
        if path.is_relative_to(self.workspace):
            return "inside"
        if path.is_relative_to(self.home):  # before the temporary roots: HOME may lie under /tmp in CI
            return "outside"
        if any(path.is_relative_to(t) for t in _TEMP_ROOTS):
            return "temp"
        return "outside"


@functools.lru_cache(maxsize=1)
def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""
