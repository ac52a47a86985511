"""When the sandbox stopped a command: whether a human may be asked to let it run outside, and what they are shown.

The reason is read from the model's program's output, so it is asked only when what it says is true of the sandbox:
no network; a path read-only or missing inside (sandbox.writable_inside) that the user may write, or that exists, on
the host. The question says so, and shows the workspace scripts the command runs that the run wrote."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

from tools.guard.rules import normpath
from tools.guard.sandbox import SYSTEM, Layout, shown_inside, writable_inside
from tools.process.hints import NO_NETWORK, REFUSED

_READ_ONLY = re.compile(r"(/[^\s:'\"`]+)['\"`]?: Read-only file system|Read-only file system: ['\"](/[^'\"]+)")
_MISSING = re.compile(r"(/[^\s:'\"`]+)['\"`]?: No such file or directory|No such file or directory: ['\"](/[^'\"]+)")
_WORD = re.compile(r"[\w./~+-]+")
IMPLIED = {"make": ("Makefile", "makefile", "GNUmakefile"), "npm": ("package.json",), "yarn": ("package.json",),
           "pnpm": ("package.json",), "bun": ("package.json",), "just": ("justfile", "Justfile"), "tox": ("tox.ini",),
           "pytest": ("conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")}
"""Files a command runs without naming them."""
SHOWN_CHARS = 4_000
"""Of each script shown to the human (the rest is said to be cut)."""
MAX_SCRIPTS = 8


def blocked(output: str, layout: Layout) -> str:
    """Why a failed command was stopped by the sandbox itself, going by its output and checked against the sandbox
    ("" when it was not): no network, a path the sandbox keeps read-only, or one of the host's it does not show."""
    if not layout.network and NO_NETWORK.search(output):
        return "it has no network"
    if not layout.network and REFUSED.search(output):  # only its own loopback is there
        return "its network is its own: the host's 127.0.0.1 (localhost) is not reachable inside it"
    for m in _READ_ONLY.finditer(output):
        path = Path(os.path.realpath(m.group(1) or m.group(2)))  # a write through a link lands where it points
        if any(path == Path(s) or path.is_relative_to(s) for s in (*SYSTEM, "/boot")):
            continue  # the system's own files: root may write them on the host, a run never should
        if not writable_inside(path, layout) and _host_writable(path):
            return f"{path} is read-only inside it"
    for m in _MISSING.finditer(output):
        path = Path(normpath(m.group(1) or m.group(2)))
        if os.path.lexists(path) and not shown_inside(path, layout):
            return f"{path} is not visible inside it"
    return ""


def _host_writable(path: Path) -> bool:
    """The user may write `path` on the host (or create it: its nearest folder that exists)."""
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return os.access(path, os.W_OK)


def run_started(run_dir: Path) -> float:
    """When the run began (its state file's `created`); 0 when unknown, so that every file counts as the run's."""
    try:
        created = json.loads((run_dir / "state.json").read_text(encoding="utf-8")).get("created")
    except (OSError, ValueError, AttributeError):
        return 0.0
    return float(created) if isinstance(created, int | float) else 0.0


def scripts_written(script: str, cwd: Path, roots: list[Path], since: float) -> list[Path]:
    """The files of the writable folders the command runs (names it, or implies: a Makefile for make) that were
    made or changed since `since` (their ctime, which no program can set back)."""
    try:
        words = shlex.split(script, comments=True)
    except ValueError:
        words = []
    words += _WORD.findall(script)
    names = [*words, *(f"{w}.py" for w in words if w.isidentifier())]
    names += [implied for w in words for implied in IMPLIED.get(os.path.basename(w), ())]
    found: list[Path] = []
    for name in dict.fromkeys(names):
        path = Path(normpath(str(cwd / os.path.expanduser(name))))
        try:
            made = path.is_file() and path.stat().st_ctime >= since
        except (OSError, ValueError):
            continue
        if made and any(path.is_relative_to(r) for r in roots) and path not in found:
            found.append(path)
    return found[:MAX_SCRIPTS]


def shown_with_scripts(script: str, scripts: list[Path]) -> str:
    """The command, then each script it runs that the run wrote, for the human's question."""
    parts = [script]
    for path in scripts:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            text = f"(unreadable: {e.strerror})"
        cut = f"\n… ({len(text) - SHOWN_CHARS:,} more characters)" if len(text) > SHOWN_CHARS else ""
        parts.append(f"--- {path} (written during this run) ---\n{text[:SHOWN_CHARS]}{cut}")
    return "\n\n".join(parts)


def failure_hint(output_head: str) -> str:
    """bwrap prints `bwrap: ...` when it cannot build the sandbox."""
    if not output_head.startswith("bwrap: "):
        return ""
    reason = output_head.splitlines()[0]
    return (f"The sandbox could not start ({reason}). Tell the user: a path the sandbox binds may be missing, or "
            "the host forbids user namespaces; --no-sandbox runs without it.")
