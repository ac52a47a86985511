"""What a silent command wrote: the workspace's files changed during the call, each with its first lines. Otherwise a
model that cannot see the wrong result of a silent command (`... > out.txt`) repeats it or claims success."""

from __future__ import annotations

import contextlib
import stat
from pathlib import Path

from tools.files.fileio import walk

MAX_ENTRIES = 5_000
"""A workspace larger than this is not scanned: nothing is said."""
SHOWN_FILES = 3
SHOWN_LINES = 3
SHOWN_CHARS = 240


def written_since(root: Path, since_ns: int) -> list[Path]:
    """Regular files under `root` modified at or after `since_ns`, in walk order, at most SHOWN_FILES + 1."""
    found: list[Path] = []
    for seen, path in enumerate(walk(root)):
        if seen >= MAX_ENTRIES:
            return []
        with contextlib.suppress(OSError):
            st = path.lstat()
            if stat.S_ISREG(st.st_mode) and st.st_mtime_ns >= since_ns:
                found.append(path)
        if len(found) > SHOWN_FILES:
            break
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
