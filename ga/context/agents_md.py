"""AGENTS.md: the instructions a project (and the user) keeps for coding agents, the convention Codex, Pi and Claude
Code read (a folder without one may have Claude Code's CLAUDE.md: read in its place). ga reads the user's own
(GA_HOME/AGENTS.md) and the workspace's, with those of the folders above it up to the repository's root (or HOME),
the nearest last so it has the last word; all of it capped in size.

It goes into the run's first user message, not the system prompt: the system prompt stays the same for runs in
every folder, so a prompt-caching server keeps reusing it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ga.protocols import UI
from ga.tooling.boundary.hidden import Hidden
from ga.tooling.redact import redact

NAME = "AGENTS.md"
FALLBACK = "CLAUDE.md"
MAX_BYTES = 8_192
"""All AGENTS.md text at most (about 2,000 tokens); past it the text is cut and says so."""


def sources(workdir: Path, ga_home: Path) -> list[Path]:
    """The instruction files that apply to a run in `workdir`, the most general first: up to the repository's root or
    HOME; a workspace outside HOME and outside any repository reads only its own (not /tmp's, another user's)."""
    home = Path.home()
    folders = []
    for folder in [workdir, *workdir.parents]:
        folders.append(folder)
        if folder == home or _is_file(folder / ".git", any_kind=True):
            break
    else:  # neither HOME nor a repository above it
        folders = [workdir]
    found = [ga_home / NAME, *(_instructions(f) for f in reversed(folders))]
    return [p for p in dict.fromkeys(found) if _is_file(p)]


def _instructions(folder: Path) -> Path:
    """A folder's AGENTS.md, or its CLAUDE.md where it has none (Claude Code's name for the same thing)."""
    agents = folder / NAME
    return agents if _is_file(agents) or not _is_file(folder / FALLBACK) else folder / FALLBACK


def _is_file(path: Path, *, any_kind: bool = False) -> bool:
    try:
        return path.exists() if any_kind else path.is_file()
    except OSError:  # a folder above that may not be read: as if it had nothing
        return False


def _read(path: Path, ga_home: Path, hidden: Hidden) -> str | None:
    """The file's text, or None when it is no instructions ga may read: a link (a repository's AGENTS.md linked to a
    key), not a regular file, owned by another user, or in a place hidden from the model; keys in it redacted."""
    if path != ga_home / NAME and hidden.why(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid not in (os.getuid(), 0) or st.st_nlink > 1:
            return None
        data = f.read(MAX_BYTES + 1)
    return redact(data.decode("utf-8", "replace")).strip()


def notes(workdir: Path, ga_home: Path) -> tuple[str, list[Path]]:
    """The text for the first message ('' when there is none), and the files it came from."""
    parts, used, size = [], [], 0
    hidden = Hidden(home=Path.home(), ga_home=ga_home)
    for path in sources(workdir, ga_home):
        text = _read(path, ga_home, hidden)
        if not text:
            continue
        room = MAX_BYTES - size
        if len(text.encode()) > room:
            cut = text.encode()[:room].decode("utf-8", "ignore")
            text = f"{cut}\n[… cut: AGENTS.md text is kept to {MAX_BYTES:,} bytes]"
        parts.append(f"[Instructions from {path}]\n{text}")
        used.append(path)
        size += len(text.encode())
        if size >= MAX_BYTES:
            break
    return "\n\n".join(parts), used


def for_run(workdir: Path, ga_home: Path, state: dict, ui: UI) -> str:
    """notes() for a new run's first message; the files it came from are kept in the run's state (a resume's header
    names them) and said now."""
    text, read = notes(workdir, ga_home)
    if read:
        state["agents_md"] = [str(p) for p in read]
        ui.notice("instructions read: " + ", ".join(state["agents_md"]))
    return text
