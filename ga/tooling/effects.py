"""What a run changed in its workspace, as a fingerprint: the names, sizes and mtimes of its files, hashed. Taken when
a run starts and again when it answers, so an answer that claims a change the workspace does not show is caught
(ga/escalation.py), whatever made the change (a file tool, a script, a program the script started)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import tomllib

SKIPPED = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache",
                     ".pytest_cache", ".ruff_cache", ".tox"})
"""Folders that tools and interpreters change on their own: not the work a task asks for."""
_URL = re.compile(r"\S+://\S+|\{\{\w+\}\}\S*")
_NAME = re.compile(r"(?:(?<=\s)|^|(?<=[`'\"(]))((?:\.{0,2}/)?[\w-]+(?:/[\w.-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})"
                   r"(?=$|[\s`'\",;:)!?]|\.(?:\s|$))")
_TO = re.compile(r"\b(?:into|to|in|as|named|called|file|script|program|module|create|write|save|make|generate|"
                 r"produce|new)\W*$", re.IGNORECASE)
"""The word before a file name that the task asks to be written ("into `port.txt`", "a script `reverse.py`")."""
_DOMAINS = frozenset({"com", "org", "net", "io", "ai", "dev", "gov", "edu", "co", "uk", "de", "fr", "cn", "app"})
ASKS = ("?", "\uff1f")  # how a task that asks ends: what its run prints may be its answer
MAX_ENTRIES = 20_000  # past this many entries (a HOME, a monorepo) nothing is fingerprinted, nothing judged


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


def named_outputs(task: str, root: Path) -> list[str]:
    """The files a task names to be written ("Write the port into `port.txt`") that the workspace does not hold yet:
    an answer while one is still missing or empty is doubted once (ga/escalation.py)."""
    text, names = _URL.sub(" ", task), []
    for m in _NAME.finditer(text):
        name = m.group(1)
        stem, _, ext = name.rpartition("/")[2].rpartition(".")
        if len(stem) > 1 and ext.lower() not in _DOMAINS and _TO.search(text[max(0, m.start() - 30):m.start()]) \
                and name not in names and not (root / name).exists():
            names.append(name)
    return names


def unwritten(names: list[str], root: Path) -> list[str]:
    """Of `names`, those still missing, empty or not parsing as their kind: "`port.txt` does not exist", "`price.txt`
    is empty", "`people.json` is not valid JSON: Extra data: line 2 column 1 (char 27)"."""
    return [f"`{n}` {why}" for n in names for why in [_unparsed(root / n)] if why]


def _unparsed(path: Path) -> str:
    """Why a file is missing, holds nothing, or not what its suffix says (JSON, TOML, Python); "" when it is fine."""
    if not path.is_file():
        return "" if path.exists() else "does not exist"
    text = path.read_text(encoding="utf-8", errors="replace") if path.stat().st_size < 1_000_000 else "(large)"
    if not text.strip():
        return "holds only blank space" if text else "is empty"
    try:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        {".json": json.loads, ".toml": tomllib.loads, ".py": lambda t: compile(t, path.name, "exec")}.get(
            path.suffix.lower(), str)(text)
    except (ValueError, SyntaxError) as e:
        return f"is not valid {path.suffix[1:].upper().replace('PY', 'Python')}: {e}"
    return ""


NOT_RUN = ("[not run: this exact script already ran successfully (call {call}) and wrote {files}; nothing in the "
           "workspace changed since, so running it again would only do the same thing twice. If the task is done, "
           "reply now with a one-line summary of the result and nothing else. If it is not, do the next step.]")
"""code_run's answer to a script sent again over a workspace it already changed (tools/process/execute.py); a reply
that only repeats it is no answer (ga/escalation.py)."""
