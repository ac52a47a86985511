"""A command that runs learnt scripts (marked before it ran by memory/learn/outputs.py): in the sandbox, with the
workspace read-only but for the outputs the scripts' runs wrote, and offline. A script that reproduced its run on
the replay and does something else elsewhere (appends to every `.py` file, posts `.env`) can do it nowhere else."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from ga.errors import PermissionDenied
from ga.tooling.spec import LEARNT_CALL, ToolContext


def take(args: dict, ctx: ToolContext) -> dict | None:
    """The note for this call, if it runs learnt scripts (taken: it is for this call only)."""
    note = ctx.state.pop(LEARNT_CALL, None)
    return note if isinstance(note, dict) and note.get("script") == args.get("script") else None


@contextlib.contextmanager
def outputs(note: dict | None, ctx: ToolContext) -> Iterator[list[Path]]:
    """The paths the command may write, inside the workspace (or an --allow-path folder) and no protected place, made
    to exist first so that the sandbox can show them writable; what was made for it and left empty goes after."""
    paths, made = [], []
    for raw, folder in (note or {}).get("writes", []):
        try:
            path = ctx.resolve(os.path.normpath(raw), write=True)
        except PermissionDenied:
            continue
        if path == ctx.workspace.resolve():
            continue
        base = path if folder else path.parent
        made += [p for p in [*reversed(base.parents), base] if not p.exists()]
        base.mkdir(parents=True, exist_ok=True)
        if not folder and not path.exists():
            path.touch()
            made.append(path)
        paths.append(path)
    try:
        yield paths
    finally:
        for path in reversed(made):
            with contextlib.suppress(OSError):
                path.unlink() if path.is_file() and not path.stat().st_size else path.rmdir()


def said(note: dict) -> str:
    what = ", ".join(note.get("said") or []) or "nothing: it may only print"
    return (f"\nnote: it ran the learnt script {', '.join(note['names'])} with the workspace read-only but for what "
            f"its run wrote ({what}), and offline.")
