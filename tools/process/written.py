"""What a silent command wrote: the workspace's files changed during the call, each with its first lines. A command
that prints nothing (`... > out.txt`) otherwise tells the model nothing of what it did, and a model that cannot see a
wrong result repeats the command or claims success."""

from __future__ import annotations

import os
from pathlib import Path

SKIPPED = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache"})
MAX_ENTRIES = 5_000
"""A workspace larger than this is not scanned: nothing is said."""
SHOWN_FILES = 3
SHOWN_LINES = 3
SHOWN_CHARS = 240


def written_since(root: Path, since_ns: int) -> list[Path]:
    """Regular files under `root` modified at or after `since_ns`, newest walk order, at most SHOWN_FILES + 1."""
    found, seen, stack = [], 0, [str(root)]
    while stack and len(found) <= SHOWN_FILES:
        try:
            entries = sorted(os.scandir(stack.pop()), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                return []
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED:
                        stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime_ns >= since_ns:
                    found.append(Path(entry.path))
            except OSError:
                continue
    return found


def describe(root: Path, files: list[Path]) -> str:
    """One line per file: its path in the workspace, its size in lines, its first lines."""
    lines = []
    for path in files[:SHOWN_FILES]:
        try:
            data = path.read_bytes()[:4096]
        except OSError:
            continue
        if b"\0" in data:
            lines.append(f"- {path.relative_to(root)} (binary, {path.stat().st_size:,} bytes)")
            continue
        text = data.decode("utf-8", "replace")
        head = " | ".join(text.splitlines()[:SHOWN_LINES])
        head = head if len(head) <= SHOWN_CHARS else head[: SHOWN_CHARS - 1] + "…"
        count = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        more = "+" if len(data) == 4096 else ""
        lines.append(f"- {path.relative_to(root)} ({count}{more} line{'s' * (count != 1)}): {head or '(empty)'}")
    if len(files) > SHOWN_FILES:
        lines.append("- and more")
    return "\n".join(lines)
