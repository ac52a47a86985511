"""file_write: create or overwrite a file, or add text at its end or start.

Creating, overwriting and prepending go through an atomic rename; an append writes only the new bytes. Overwriting
refuses a file this run has never read or written (a rewrite of what the model never saw drops what it did not know
was there) and one that changed on disk since; its result counts the lines that went and came (the diff: details)."""

from __future__ import annotations

import os
import re
import stat
from itertools import chain
from typing import BinaryIO

from ga.errors import ToolError
from ga.tooling import stamps
from ga.tooling.boundary.confined import Place, confined
from ga.tooling.permissions import SideEffect
from ga.tooling.spec import RECENT_RESULTS, ToolContext, ToolResult, ToolSpec
from tools import schema
from tools.files import fileio
from tools.files.fileio import plural
from tools.files.matching import NUMBERS_NOTE, unnumbered

MODES = ("overwrite", "append", "prepend")
PREVIEW_BYTES = 256 << 10
"""Files up to this size get a diff (--confirm, an overwrite's result); an identical rewrite is not written."""
UNREAD = ("Refused to overwrite {path} ({size}): this run has not read it, so the rewrite would replace what you have "
          "not seen. Read it first with file_read (then write it whole), change the part you mean with file_patch, or "
          "add to it with mode=append. Nothing was written.")
SHOWN_BYTES = 4096
"""An unread file up to this size is shown in the refusal of its overwrite (and counts as read after it)."""
SHOWN = ("Refused to overwrite {path} ({size}): this run had not read it. It holds:\n{text}If you mean to replace all "
         "of that, send the same file_write again; to change a part, use file_patch; to add to it, mode=append. "
         "Nothing was written.")
ECHO = ("Refused to write {path}: its content is ga's own result text from an earlier call (\"{line}\"), not what "
        "the file should hold. Write only the file's own content: to save a program's output, redirect it in code_run "
        "(`python3 prog.py > out.txt`); to save a value, write just the value. Nothing was written.")
_HEADER = re.compile(r"\[(exit code -?\d+ · [\d.]+ s\]|killed after |interrupted by the user |not run: )")
"""code_run's first line."""
WRITE_ADVICE = ("To feed data into it use code_run with a timeout; to put a regular file in its place, remove it "
                "first with code_run (`rm PATH`), or write to another path.")


def _lines(data: bytes) -> str:
    return plural(data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0), "line")


def _open(place: Place, st: os.stat_result, shown: str) -> BinaryIO:
    return fileio.open_regular(place, st, shown, "file_write", WRITE_ADVICE)


def run(args: dict, ctx: ToolContext) -> ToolResult:
    # created, replaced or appended to from the workspace's descriptor, never through a link that appeared later
    return confined(ctx, args["path"], lambda place: _write(place, args, ctx), write=True, parents=True)


def _echoed(content: str, ctx: ToolContext) -> str:
    """The first line of ga's own result text that `content` copies (code_run's framing, a recent status or
    error), or ""."""
    text = content.strip()
    first = text.split("\n", 1)[0].strip()
    if not text or _HEADER.match(first):
        return first
    for past in map(str.strip, ctx.state.get(RECENT_RESULTS, ())):
        head = past.split("\n", 1)[0].strip()
        if text == past or (len(head) >= 12 and first == head):
            return head
    return ""


def _prepare(place: Place, args: dict, ctx: ToolContext) -> tuple[os.stat_result | None, bytes, bytes]:
    """The file's stat (None: a new file), the bytes to write and, for an overwrite, the file's first
    PREVIEW_BYTES + 1 bytes; with the refusals that come before anything is written."""
    path, st, data, old = args["path"], place.lstat(), fileio.encode(args["content"]), b""
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{path} is a folder; give a file path inside it.")
    if st is not None:  # overwriting would silently replace the FIFO or device; appending would block on it
        fileio.require_regular(st, path, "file_write", WRITE_ADVICE)
    if st is not None and args.get("mode", "overwrite") == "overwrite":
        fileio.ensure_unchanged(ctx, place, st, path, "overwriting it")
        old = _head(place, st, path)
        data = _without_numbers(args["content"], old, ctx) or data
        if not data and st.st_size:  # a model that could not fix the file would otherwise wipe it
            raise ToolError(f"Refused to overwrite {path} ({plural(st.st_size, 'byte')}) with empty content: "
                            "that deletes all of it. Send the whole new content, or patch the part to change "
                            "with file_patch; to empty the file on purpose, truncate it with code_run.")
    return st, data, old


def _write(place: Place, args: dict, ctx: ToolContext) -> ToolResult:
    path, mode, real = args["path"], args.get("mode", "overwrite"), place.real
    if line := _echoed(args["content"], ctx):
        raise ToolError(ECHO.format(path=path, line=line[:80]))
    with fileio.path_lock(real), fileio.os_errors("write", path):
        st, data, old = _prepare(place, args, ctx)
        overwrite = st is not None and mode == "overwrite"
        if overwrite and old == data:  # not written: the model repeats itself; the file is done, and is what it sent
            stamps.remember(ctx.state, real, stamps.stamp(st, stamps.digest_of([data])))
            return ToolResult(content=f"{path} already holds exactly this content ({plural(len(data), 'byte')}, "
                              f"{_lines(data)}): nothing changed.",
                              details={"path": str(real), "mode": mode, "created": False, "bytes": len(data)})
        if overwrite and st.st_size and not _seen(ctx, real) and not fileio.is_binary(old[: fileio.SNIFF_BYTES]):
            _refuse_unread(ctx, place, st, old, path)
        if st is not None and mode == "append":
            fileio.refuse_linked(st, path, "file_write", append=True)
            new_stamp = _append(place, data, path)
        elif st is not None and mode == "prepend":
            new_stamp = place.replace(chain([data], fileio.read_chunks(_open(place, st, path))), st)
        else:
            new_stamp = place.replace([data], st)
        stamps.remember(ctx.state, real, new_stamp)
    return _result(path, mode, place, before=st, data=data, size=new_stamp[1], ctx=ctx, old=old)


def _refuse_unread(ctx: ToolContext, place: Place, st: os.stat_result, old: bytes, path: str) -> None:
    """The refusal of an unread overwrite. A short file comes back whole in it: the model has now seen what the
    rewrite replaces, so the same call sent again goes through (a small model's right call costs one turn, not two)."""
    if len(old) > SHOWN_BYTES or fileio.is_binary(old[: fileio.SNIFF_BYTES]):
        raise ToolError(UNREAD.format(path=path, size=_lines(old) if len(old) <= PREVIEW_BYTES
                                      else fileio.human_size(st.st_size)))
    stamps.remember(ctx.state, place.real, stamps.stamp(st, stamps.digest_of([old])))
    text = old.decode("utf-8", "replace")
    raise ToolError(SHOWN.format(path=path, size=_lines(old), text=text if text.endswith("\n") else text + "\n"))


def _seen(ctx: ToolContext, real) -> bool:
    """This run has read or written the file (its stamp is kept: ga/tooling/stamps.py)."""
    return str(real) in ctx.state.get(stamps.STATE_KEY, {})


def _head(place: Place, st: os.stat_result, shown: str) -> bytes:
    """The file as it is, up to PREVIEW_BYTES + 1 bytes: what an overwrite's diff is made from."""
    with _open(place, st, shown) as f:
        return f.read(PREVIEW_BYTES + 1)


def _without_numbers(content: str, old: bytes, ctx: ToolContext) -> bytes | None:
    """The content without file_read's `N|` line numbers, when a model copied them onto every line of a rewrite of
    a file (`old`: its head) that has none (a file whose own first line looks numbered keeps them: `id|value` rows)."""
    plain = unnumbered(content) if content.rstrip("\n").count("\n") else None  # two lines at least
    if plain is None or unnumbered(old[:4096].split(b"\n", 1)[0].decode("utf-8", "replace")) is not None:
        return None
    ctx.notes.append(NUMBERS_NOTE.format(field="content"))
    return fileio.encode(plain[0])


def _append(place: Place, data: bytes, shown: str) -> list[int]:
    """Only the new bytes are written (O_APPEND), whatever the file's size: no copy of what is there."""
    fd = place.open(os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    try:
        fileio.require_regular(os.fstat(fd), shown, "file_write", WRITE_ADVICE)
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        return stamps.stamp(os.fstat(fd))
    finally:
        os.close(fd)


def _result(path: str, mode: str, place: Place, *, before: os.stat_result | None, data: bytes, size: int,
            ctx: ToolContext, old: bytes = b"") -> ToolResult:
    details = {"path": str(place.real), "mode": mode, "created": before is None, "bytes": size}
    if before is None:
        folders = f" (and folder {fileio.shown_path(place.made[0], ctx.workspace)}/)" if place.made else ""
        message = f"Created {path}{folders}: {plural(len(data), 'byte')}, {_lines(data)}."
    elif mode == "overwrite":
        message = (f"Overwrote {path} (was {plural(before.st_size, 'byte')}): now {plural(len(data), 'byte')}, "
                   f"{_lines(data)}")
        if len(old) <= PREVIEW_BYTES and not fileio.is_binary(old[: fileio.SNIFF_BYTES]):
            diff = _diff(old, data, fileio.diff_names(path))
            removed, added = (sum(line.startswith(sign) for line in diff.splitlines()[2:]) for sign in "-+")
            message += f" (-{removed}/+{added} lines)"  # a rewrite that dropped a function says so
            details.update(diff=diff, removed=removed, added=added)
        message += "."
    else:
        where = "to the end of" if mode == "append" else "at the start of"
        message = f"Added {plural(len(data), 'byte')} ({_lines(data)}) {where} {path}: now {plural(size, 'byte')}."
    return ToolResult(content=message, details=details)


def preview(args: dict, ctx: ToolContext) -> str:
    """The change this call would make, as a unified diff (for --confirm); the same refusals as running it."""
    path, mode = args["path"], args.get("mode", "overwrite")

    def show(place: Place) -> str:
        with fileio.os_errors("write", path):
            st, data, old = _prepare(place, args, ctx)
            if st is None:
                return _diff(b"", data, ("/dev/null", f"b/{path}"))
            old = old if mode == "overwrite" else _head(place, st, path)
        if len(old) > PREVIEW_BYTES or fileio.is_binary(old[: fileio.SNIFF_BYTES]):
            what = "binary" if len(old) <= PREVIEW_BYTES else "too big to show"
            before, after = fileio.diff_names(path)
            header = f"--- {before} ({fileio.human_size(st.st_size)}, {what})\n+++ {after}\n@@ {mode} @@\n"
            return header + "".join(f"+{line}" for line in fileio.diff_lines(data.decode("utf-8", "replace")))
        after = data if mode == "overwrite" else old + data if mode == "append" else data + old
        return _diff(old, after, fileio.diff_names(path)) or f"(no change to {path})"

    return confined(ctx, path, show, write=True)


def _diff(old: bytes, new: bytes, names: tuple[str, str]) -> str:
    return fileio.unified(old.decode("utf-8", "replace"), new.decode("utf-8", "replace"), names)


SPEC = ToolSpec(
    name="file_write",
    description=(
        "Create or overwrite a file (parent folders made), or append/prepend to it (`mode`). Small edits: file_patch. "
        "Overwriting is refused if the file changed since you read it."
    ),
    parameters=schema("path", "content", path={"type": "string"}, content={"type": "string"},
                      mode={"type": "string", "enum": list(MODES), "default": "overwrite"}),
    side_effect=SideEffect.WRITE, run=run, preview=preview, editable="content")
