"""file_read: numbered lines of a text file (streamed, never loaded whole), or the entries of a folder."""

from __future__ import annotations

import hashlib
import os
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ga.errors import ToolError
from ga.tooling import stamps
from ga.tooling.boundary.confined import Place, confined
from ga.tooling.budget import SHOWN_RESULTS
from ga.tooling.permissions import SideEffect
from ga.tooling.spec import ToolContext, ToolResult, ToolSpec
from tools import schema
from tools.files import fileio

MAX_LINE_CHARS = 2000
DEFAULT_COUNT = 200
"""Lines (or folder entries) shown when the call gives no `count`."""
HEAD_BYTES = MAX_LINE_CHARS * 4  # enough bytes for MAX_LINE_CHARS characters of UTF-8
CONTEXT_LINES = 3
MAX_COUNT = 1000
FOOTER_RESERVE = 300
SHOWN_ON_MISS = 60
"""A keyword that matches nothing in a file this short (searched from its start) gets the whole file back: a small
model fills keyword with the file's own name, and the next turn would read it anyway."""
_CONTINUATION = bytes(range(0x80, 0xC0))
READ_ADVICE = ("file_read also lists folders. If you really need its data, read it with code_run and a timeout "
               "(e.g. `timeout 5 head -c 4096 PATH`).")


def _chars(data: bytes) -> int:
    """Characters in UTF-8 bytes without decoding: every byte that is not a continuation byte starts one."""
    return len(data.translate(None, _CONTINUATION))


def _lines(f: BinaryIO) -> Iterator[tuple[bytes, int | None]]:
    """(head, length) per line; a long line's tail is counted and skipped, never held (length None if short)."""
    while head := f.readline(HEAD_BYTES):
        if head.endswith(b"\n") or len(head) < HEAD_BYTES:
            yield head, None
            continue
        length = _chars(head)
        while chunk := f.readline(fileio.COPY_CHUNK):
            length += _chars(chunk.rstrip(b"\r\n"))
            if chunk.endswith(b"\n"):
                break
        yield head, length


def _render(number: int, head: bytes, length: int | None) -> str:
    text = head.decode("utf-8", "replace").rstrip("\r\n")
    if number == 1:
        text = text.removeprefix("\ufeff")
    length = length if length is not None else len(text)
    if length > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]}… [line cut: {length} chars]"
    return f"{number}|{text}"


def _count_rest(f: BinaryIO) -> int:
    """Lines left after the current position, counted by newlines in chunks (constant memory)."""
    count, last = 0, b"\n"
    while chunk := f.read(fileio.COPY_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


@dataclass(kw_only=True)
class _Window:
    lines: list[str] = field(default_factory=list)
    first: int = 0
    match: int = 0
    cut_by_budget: bool = False
    total: int = 0


def _scan(f: BinaryIO, start: int, count: int, keyword: str, budget: int) -> _Window:
    window = _Window()
    needle = keyword.casefold()
    before: deque[tuple[int, bytes, int | None]] = deque(maxlen=CONTEXT_LINES)
    used, number, limit = 0, 0, count
    for number, (head, length) in enumerate(_lines(f), 1):
        if number < start:
            continue
        pending = [(number, head, length)]
        if needle and not window.match:
            if needle not in head.decode("utf-8", "replace").casefold():
                before.append(pending[0])
                continue
            window.match, limit = number, count + len(before)  # the context lines come on top of count
            pending[:0] = before
        for n, h, size in pending:
            line = _render(n, h, size)
            if window.lines and used + len(line) + 1 > budget:
                window.cut_by_budget = True
                break
            window.first = window.first or n
            window.lines.append(line)
            used += len(line) + 1
        if window.cut_by_budget or len(window.lines) >= limit:
            window.total = number + _count_rest(f)
            return window
    window.total = number
    return window


def _footer(window: _Window, keyword: str, start: int) -> str:
    last = window.first + len(window.lines) - 1
    parts = [f"lines {window.first}-{last} of {window.total}"]
    if keyword:
        quoted = repr(keyword) if len(keyword) <= 60 else repr(keyword[:60]) + "…"
        parts.insert(0, f"first match of {quoted} from line {start}: line {window.match}")
    if window.cut_by_budget:
        parts.append("output limit reached")
    parts.append(f"continue with start={last + 1}" if last < window.total else "end of file")
    if keyword and window.match < window.total:
        parts.append(f"next match: keyword with start={window.match + 1}")
    return "[" + "; ".join(parts) + "]"


def _read_text(f: BinaryIO, shown: str, args: dict, budget: int) -> tuple[str, dict]:
    start, count, keyword = args.get("start", 1), args.get("count", DEFAULT_COUNT), args.get("keyword") or ""
    window = _scan(f, start, count, keyword, max(budget - FOOTER_RESERVE, 200))
    if window.total == 0:
        return f"[{shown} is empty: 0 lines]", {"lines": 0}
    if not window.lines and keyword:
        missed = (f"[no line of {shown} matches {keyword!r} from line {start} on; the file has "
                  f"{fileio.plural(window.total, 'line')}")
        if window.total <= SHOWN_ON_MISS and start == 1:
            f.seek(0)
            body, details = _read_text(f, shown, {**args, "keyword": ""}, budget - len(missed))
            return f"{missed}, all shown]\n{body}", {**details, "match": None}
        return f"{missed}. Try another keyword, or a smaller start]", {"lines": window.total, "match": None}
    if not window.lines:
        raise ToolError(f"start={start} is past the end of {shown}, which has {window.total} lines. "
                        f"Use start between 1 and {window.total}.")
    body = "\n".join([*window.lines, _footer(window, keyword, start)])
    last = window.first + len(window.lines) - 1
    return body, {"lines": window.total, "shown": [window.first, last], "match": window.match or None}


def _list_folder(place: Place, shown: str, args: dict, budget: int) -> str:
    start, count, name = args["start"], args.get("count", DEFAULT_COUNT), shown.rstrip("/")
    rows: list[str] = []
    used, fd = 0, place.open_dir()
    try:
        with os.scandir(fd) as found:
            entries = sorted(found, key=lambda e: (not e.is_dir(), e.name.lower()))
        for entry in entries[start - 1:start - 1 + count]:
            try:
                row = f"{entry.name}/" if entry.is_dir() else f"{entry.name} {fileio.human_size(entry.stat().st_size)}"
            except OSError:  # a dangling symlink has no size
                row = f"{entry.name} (broken link)"
            if rows and used + len(row) + 1 > budget - FOOTER_RESERVE:
                break
            rows.append(row)
            used += len(row) + 1
    finally:
        os.close(fd)
    total = fileio.plural(len(entries), "entry", "entries")
    if not entries:
        return f"{name}/ is an empty folder."
    if not rows:
        raise ToolError(f"start={start} is past the end of {shown}, which has {total}. "
                        f"Use start between 1 and {len(entries)}.")
    last = start - 1 + len(rows)
    more = f"; continue with start={last + 1}" if last < len(entries) else ""
    footer = f"[entries {start}-{last} of {len(entries)}{more}]"
    return "\n".join([f"{name}/ ({total}; folders end with /)", *rows, footer])


def run(args: dict, ctx: ToolContext) -> ToolResult:
    args = {**args, "start": max(1, args.get("start", 1))}  # lines count from 1; start=0 (counted from 0) is line 1
    # opened from the workspace's descriptor, never through a link that appeared after the check
    return confined(ctx, args["path"], lambda place: _read(place, args, ctx), write=False)


def _read(place: Place, args: dict, ctx: ToolContext) -> ToolResult:
    path, real = args["path"], place.real
    with fileio.os_errors("read", path):
        st = place.lstat()
        if st is None:
            raise fileio.missing(real, ctx.workspace, path, "List a folder with file_read to see what exists.")
        if stat.S_ISDIR(st.st_mode):
            return ToolResult(content=_list_folder(place, path, args, ctx.output_budget), details={"path": str(real)})
        with fileio.open_regular(place, st, path, "file_read", READ_ADVICE) as f:
            info = os.fstat(f.fileno())
            sample = f.read(fileio.SNIFF_BYTES)
            if fileio.is_binary(sample):
                kind = fileio.sniff_type(sample)
                return ToolResult(content=f"{path} is a binary file ({kind}, {info.st_size} bytes); not shown as text.",
                                  details={"path": str(real), "binary": kind, "size": info.st_size})
            f.seek(0)
            content, details = _read_text(f, path, args, ctx.output_budget)
            f.seek(0)
            digest = stamps.digest_of(fileio.read_chunks(f)) if info.st_size <= stamps.DIGEST_LIMIT else ""
    # the stamp from before reading: a change made while we read makes a later patch refuse, never slip through
    stamps.remember(ctx.state, real, stamps.stamp(info, digest))
    return _unchanged(ctx, real, path, content, details) or ToolResult(content=content,
                                                                        details={"path": str(real), **details})


def _unchanged(ctx: ToolContext, real: Path, shown: str, content: str, details: dict) -> ToolResult | None:
    """The same lines, unchanged, as an earlier read whose result the model still has in full: a short stub naming
    it instead of the lines again. The runtime forgets a result once it is cut, masked or folded away."""
    if len(content) < 400:  # the stub would be no shorter
        return None
    key = hashlib.sha1(f"{real}\0{content}".encode("utf-8", "replace")).hexdigest()[:16]
    results = ctx.state.setdefault(SHOWN_RESULTS, {})
    earlier = next((call_id for call_id, seen in results.items() if seen == key and call_id != ctx.call_id), None)
    if earlier is None:
        if ctx.call_id:
            results[ctx.call_id] = key
        return None
    first, last = details.get("shown", ["?", "?"])
    return ToolResult(content=f"[unchanged: lines {first}-{last} of {shown} are exactly what your earlier read "
                              f"returned (call {earlier}), and that result is still above. Use it, or read other "
                              "lines.]", details={"path": str(real), **details, "unchanged_since": earlier})


SPEC = ToolSpec(
    name="file_read",
    description=(
        f"Read a file as numbered lines `N|text` (`N|` is not in the file) or list a folder: {DEFAULT_COUNT} lines "
        "from line 1 unless `start`/`count` say. `keyword`: jump to the first case-insensitive match from `start` "
        f"(shown with the {CONTEXT_LINES} lines above it). Lines over {MAX_LINE_CHARS} chars are cut. The footer gives "
        "total lines and the next `start`."
    ),
    parameters=schema("path", path={"type": "string"}, start={"type": "integer", "minimum": 0, "default": 1},
                      count={"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "default": DEFAULT_COUNT},
                      keyword={"type": "string"}),
    side_effect=SideEffect.READ_ONLY, run=run)
