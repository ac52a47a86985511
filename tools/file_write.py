"""file_write: create or overwrite a file, or add text at its end or start; always through an atomic rename."""

from __future__ import annotations

from itertools import chain

from ga.dispatch import ToolContext, ToolResult, ToolSpec
from ga.errors import ToolError
from ga.permissions import SideEffect
from tools import fileio

MODES = ("overwrite", "append", "prepend")
WRITE_ADVICE = ("To feed data into it use code_run with a timeout; to put a regular file in its place, remove it "
                "first with code_run (`rm PATH`), or write to another path.")


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"


def _lines(data: bytes) -> str:
    return _plural(data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0), "line")


def run(args: dict, ctx: ToolContext) -> ToolResult:
    path, mode = args["path"], args.get("mode", "overwrite")
    data = fileio.encode(args["content"])
    real = ctx.resolve(path, write=True)
    if real.is_dir():
        raise ToolError(f"{path} is a folder; give a file path inside it.")
    with fileio.path_lock(real), fileio.os_errors("write", path):
        existed = real.exists()
        if existed:  # overwriting would silently replace the FIFO or device; appending would block on it
            fileio.require_regular(real, path, "file_write", WRITE_ADVICE)
        before = real.stat().st_size if existed else 0
        made = [p for p in reversed(real.parents) if not p.exists()]
        real.parent.mkdir(parents=True, exist_ok=True)
        if mode == "overwrite" or not existed:
            chunks = [data]
        elif mode == "append":
            chunks = chain(fileio.read_chunks(real, path, "file_write", WRITE_ADVICE), [data])
        else:
            chunks = chain([data], fileio.read_chunks(real, path, "file_write", WRITE_ADVICE))
        stamp = fileio.atomic_write(real, chunks)
        fileio.remember(ctx, real, stamp)
    size = stamp[1]
    if not existed:
        folders = f" (and folder {fileio.shown_path(made[0], ctx.workspace)}/)" if made else ""
        message = f"Created {path}{folders}: {_plural(len(data), 'byte')}, {_lines(data)}."
    elif mode == "overwrite":
        message = f"Overwrote {path} (was {_plural(before, 'byte')}): now {_plural(len(data), 'byte')}, {_lines(data)}."
    else:
        where = "to the end of" if mode == "append" else "at the start of"
        message = f"Added {_plural(len(data), 'byte')} ({_lines(data)}) {where} {path}: now {_plural(size, 'byte')}."
    return ToolResult(content=message, details={"path": str(real), "mode": mode, "created": not existed,
                                                "bytes": size})


SPEC = ToolSpec(
    name="file_write",
    description=(
        "Create or overwrite a file (parent folders made), or append/prepend to it (`mode`). Small edits: file_patch."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "content": {"type": "string"},
            "mode": {"type": "string", "enum": list(MODES)},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    side_effect=SideEffect.WRITE,
    run=run,
)
