"""What a learnt script may write when it runs again: the outputs of the run it was learnt from. A script that
reproduced its run on the replay can still do something else elsewhere (a hostile repository's helper that appends
to every `.py` file only outside ga's replay folder). So its SOP records what the run wrote (`writes`: the parameter
that named each output, else its path), and a command that runs it runs in the sandbox with the workspace read-only
but for those paths, and offline (tools/process/learnt.py)."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from ga.tooling.spec import LEARNT_CALL
from memory.learn.extract import Extraction
from sop.skill import SKILL_FILE, read

_END = re.compile(r"[;&|<>)`\n]")
"""Where a command's arguments end: an operator, a redirection, the end of the line."""


def writes_of(extraction: Extraction) -> str:
    """The SOP's `writes`: for each output, the parameter whose value names it (`OUT`) or a folder holding it
    (`DIR/`), else its path; shell-quoted, space-separated (metadata values are strings)."""
    found, named = [], {os.path.normpath(p.value): p.name for p in extraction.script.parameters if p.value.strip()}
    for out in extraction.outputs:
        folder = next((n for v, n in named.items() if out.startswith(v.rstrip("/") + "/")), None)
        found.append(named.get(out) or (f"{folder}/" if folder else out))
    return shlex.join(dict.fromkeys(found))


def mark_call(code: str, names: list[str], sop_dir: Path, state: dict, cwd: Path) -> None:
    """Before a command that runs learnt scripts (`names`): what it may write, for code_run (ctx.state)."""
    paths, said, learnt = [], [], []
    for name in names:
        try:
            meta = read(sop_dir / name / SKILL_FILE).metadata
        except (OSError, ValueError):
            continue
        if meta.get("source") != "learnt":
            continue  # an imported or hand-written skill's script: a command like any other
        params = meta.get("usage", "").split()[2:]
        given = dict(zip(params, _arguments(code, f"{sop_dir}/{name}/{meta.get('script', '')}"), strict=False))
        learnt.append(name)
        for entry in shlex.split(meta.get("writes", "")):
            key, folder = entry.rstrip("/"), entry.endswith("/")
            value = given.get(key, None if key in params else key)
            if value:
                paths.append([str(cwd / value), folder])
                said.append(value + ("/" if folder else ""))
    if learnt:
        state[LEARNT_CALL] = {"script": code, "names": learnt, "writes": paths, "said": said}


def _arguments(code: str, script: str) -> list[str]:
    """The arguments a command gives the script: the words after its path, to the end of that simple command."""
    at = code.find(script)
    if at < 0:
        return []
    rest = code[at + len(script):].lstrip("'\"")
    end = _END.search(rest)
    try:
        return shlex.split(rest[: end.start()] if end else rest)
    except ValueError:
        return []
