"""What a run changed in its workspace, as a fingerprint: the names, sizes and mtimes of its files, hashed. Taken when
a run starts and again when it answers, so an answer that claims a change the workspace does not show is caught
(ga/escalation.py), whatever made the change (a file tool, a script, a program the script started)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

SKIPPED = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache",
                     ".pytest_cache", ".ruff_cache", ".tox"})
"""Folders that tools and interpreters change on their own: not the work a task asks for."""
MAX_ENTRIES = 20_000
"""Past this many entries the workspace (a HOME, a monorepo) is not fingerprinted: nothing is judged."""


def fingerprint(root: Path) -> str | None:
    """A hash of every file's relative path, size and mtime under `root`; None when it is too large to read."""
    h, seen, stack = hashlib.blake2b(digest_size=16), 0, [str(root)]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                return None
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED:
                        stack.append(entry.path)
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            h.update(f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def changed_since(start: str | None, root: Path) -> bool | None:
    """Whether the workspace differs from its fingerprint `start` (None: not known, too large or no print)."""
    now = fingerprint(root) if start else None
    return None if now is None else now != start


NOT_RUN = ("[not run: this exact script already ran successfully (call {call}) and wrote {files}; nothing in the "
           "workspace changed since, so running it again would only do the same thing twice. If the task is done, "
           "reply now with a one-line summary of the result and nothing else. If it is not, do the next step.]")
"""code_run's answer to a script sent again over a workspace it already changed (tools/process/execute.py); a reply
that only repeats it is no answer (ga/escalation.py)."""
