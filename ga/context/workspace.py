"""A small workspace at a glance, for the first message (ModelSettings.workspace_preview): each file's name, size in
lines and first lines. A small model acts on the data it was shown, not on data it should have read first (it cut
the third column of a CSV whose emails were in the second, having never looked at the header)."""

from __future__ import annotations

import os
from pathlib import Path

SKIPPED = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache"})
MAX_FILES = 12  # more files than this: their names only (a large project is explored with tools, not shown)
HEAD_LINES = 3
READ_BYTES = 2048
LINE_CHARS = 100


def preview(root: Path, *, depth: int = 2) -> str:
    """The workspace's files with their first lines, or only their names when there are many; "" when empty."""
    if not (files := _files(root, depth, limit=60)):
        return ""
    if len(files) > MAX_FILES:
        names = ", ".join(str(p.relative_to(root)) for p in files[:40])
        return f"Files in the workspace: {names}{', …' if len(files) > 40 else ''}"
    return "Files in the workspace (first lines):\n" + "\n".join(_describe(root, p) for p in files)


def _files(root: Path, depth: int, limit: int) -> list[Path]:
    found, stack = [], [(root, 0)]
    while stack and len(found) <= limit:
        folder, level = stack.pop(0)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.name in SKIPPED:
                continue
            if entry.is_dir(follow_symlinks=False):
                if level + 1 < depth:
                    stack.append((Path(entry.path), level + 1))
            elif entry.is_file(follow_symlinks=False):
                found.append(Path(entry.path))
    return found


def _describe(root: Path, path: Path) -> str:
    name = path.relative_to(root)
    try:
        with path.open("rb") as f:
            data = f.read(READ_BYTES)
        size = path.stat().st_size
    except OSError:
        return f"- {name}"
    if b"\0" in data:
        return f"- {name} (binary, {size:,} bytes)"
    text = data.decode("utf-8", "replace")
    lines = [line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…" for line in text.splitlines()]
    n = len(lines)
    count = (f"{n} line{'s' * (n != 1)}" if size <= READ_BYTES else f"{size:,} bytes")
    shown = " | ".join(lines[:HEAD_LINES]) + (" | …" if n > HEAD_LINES or size > READ_BYTES else "")
    return f"- {name} ({count}{_columns(path, lines[0] if lines else '')}): {shown or '(empty)'}"


def _columns(path: Path, header: str) -> str:
    """A CSV's or TSV's header as numbered columns ("; columns $1 name, $2 email"): a small model counts them wrong."""
    fields = header.split("\t" if path.suffix.lower() == ".tsv" else ",")
    if path.suffix.lower() not in (".csv", ".tsv") or not 1 < len(fields) <= 20 \
            or not all(any(map(str.isalpha, f)) for f in fields):  # a header names each column
        return ""
    return "; columns " + ", ".join(f"${i} {f.strip()}" for i, f in enumerate(fields, 1))
