"""file_patch: replace the one place where `old_content` occurs (or every place, with replace_all); exact first,
then tolerant of model slips."""

from __future__ import annotations

import itertools
import os
import re
import stat
from dataclasses import dataclass

from ga.errors import ToolError
from ga.tooling import stamps
from ga.tooling.boundary.confined import Place, confined
from ga.tooling.permissions import SideEffect
from ga.tooling.spec import ToolContext, ToolResult, ToolSpec
from tools import schema
from tools.files import fileio, matching
from tools.files.fileio import plural
from tools.files.matching import NUMBERS_NOTE, line_count, line_of, listed, locate, locate_numbered

MAX_BYTES = 16 << 20
"""Bigger files are refused with the code_run route named: a patch holds the file in memory several times over."""
MISSING_ADVICE = ("file_patch edits a file that exists: list a folder with file_read (path='.') to find it. "
                  "A new file is made with file_write.")
"""Finding the file comes first: told only to create it, a small model writes a file of its own at the wrong path."""
PATCH_ADVICE = "Give the path of a regular text file (file_read lists a folder to find one)."


def _diff(text: str, start: int, end: int, new: str, shown: str) -> str:
    """Unified diff of the changed region only (cheap on big files), numbered as in the whole file."""
    lo = text.rfind("\n", 0, start) + 1
    for _ in range(fileio.DIFF_CONTEXT):
        lo = text.rfind("\n", 0, max(lo - 1, 0)) + 1 if lo else 0
    hi = end
    for _ in range(fileio.DIFF_CONTEXT + (end > 0 and text[end - 1] != "\n")):
        hi = text.find("\n", hi) + 1 or len(text)
    return fileio.unified(text[lo:hi], text[lo:start] + new + text[end:hi], fileio.diff_names(shown),
                          text.count("\n", 0, lo))


def _with_line_endings(new: str, text: str) -> str:
    """New content in the file's own line-ending style."""
    new = new.replace("\r\n", "\n")
    crlf = text.count("\r\n")
    return new.replace("\n", "\r\n") if crlf and crlf >= text.count("\n") - crlf else new


@dataclass(kw_only=True)
class _Plan:
    """A patch located but not yet written: the file's bytes and text, the span of the text replaced (with
    replace_all: from the first match to the end of the last), what replaces it (new_content in the file's own line
    endings; with replace_all, the text between the matches kept), and the first line of each place replaced."""

    data: bytes
    text: str
    start: int
    end: int
    new: str
    tolerant: bool
    lines: list[int]


def _plan(place: Place, st: os.stat_result, ctx: ToolContext, shown: str, args: dict) -> _Plan:
    old, new = args["old_content"], args["new_content"]
    fileio.ensure_unchanged(ctx, place, st, shown, "this edit")
    with fileio.open_regular(place, st, shown, "file_patch", PATCH_ADVICE) as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ToolError(f"{shown} is {fileio.human_size(max(st.st_size, len(data)))}, over file_patch's "
                        f"{fileio.human_size(MAX_BYTES)} limit (a patch holds the whole file in memory to find one "
                        "exact match). Edit it with code_run instead, streaming it: `sed -i 's/OLD/NEW/' PATH` for a "
                        "line, or a python loop over `open(PATH)` writing a new file that then replaces it with "
                        "os.replace.")
    if fileio.is_binary(data[: fileio.SNIFF_BYTES]):
        raise ToolError(f"{shown} is a binary file; file_patch edits text only.")
    text = data.decode("utf-8", "surrogateescape")
    spans, tolerant = locate(text, old)
    if not spans and (numbered := locate_numbered(text, old, new)) is not None:
        spans, tolerant, new = numbered
        ctx.notes.append(NUMBERS_NOTE.format(field="old_content"))
    if not spans:
        raise matching.no_match(text, old, shown)
    if len(spans) > 1 and not args.get("replace_all"):
        raise matching.many(text, spans, shown)
    spans, new = matching.separate(spans), _with_line_endings(new, text)
    between = "".join(text[a[1]:b[0]] + new for a, b in itertools.pairwise(spans))
    return _Plan(data=data, text=text, start=spans[0][0], end=spans[-1][1], new=new + between, tolerant=tolerant,
                 lines=[line_of(text, at) for at, _ in spans])


def _apply(place: Place, st: os.stat_result, ctx: ToolContext, shown: str, plan: _Plan) -> ToolResult:
    text, start, end, new = plan.text, plan.start, plan.end, plan.new
    head = len(text[:start].encode("utf-8", "surrogateescape"))
    tail = head + len(text[start:end].encode("utf-8", "surrogateescape"))
    # the file's own bytes outside the span, whatever their encoding
    stamps.remember(ctx.state, place.real, place.replace([plan.data[:head], fileio.encode(new), plan.data[tail:]], st))
    after = text[:start] + new + text[end:]
    tolerant = " (tolerant match: line endings, spaces, quotes or dashes differed)" if plan.tolerant else ""
    return ToolResult(content=f"Patched {shown}: {_did(plan)}.{tolerant}{_left(plan, after, shown)}",
                      details={"path": str(place.real), "diff": _diff(text, start, end, new, shown),
                               "tolerant": plan.tolerant, "lines": plan.lines})


def _did(plan: _Plan) -> str:
    if len(plan.lines) > 1:
        return f"replaced all {len(plan.lines)} places (at lines {listed(plan.lines)})"
    text, start, end, new = plan.text, plan.start, plan.end, plan.new
    first, old_lines, new_lines = line_of(text, start), line_count(text[start:end]), line_count(new)
    last = first + max(old_lines, 1) - 1
    where = f"line {first}" if last == first else f"lines {first}-{last} ({old_lines} lines)"
    return f"deleted {where}" if not new else f"replaced {where} with {plural(new_lines, 'line')}"


def _left(plan: _Plan, after: str, shown: str) -> str:
    """When the patch changed one word into another, where the old word still is (a rename done in one place)."""
    word = matching.renamed_word(plan.text[plan.start:plan.end], plan.new)
    found = [m.start() for m in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", after)] if word else []
    if not found:
        return ""
    lines = list(dict.fromkeys(line_of(after, at) for at in found))
    return (f" `{word}` still occurs {plural(len(found), 'more time')} in {shown} (line{'s' * (len(lines) != 1)} "
            f"{listed(lines)}); replace_all=true changes every match of old_content.")


def _target(place: Place, ctx: ToolContext, args: dict) -> os.stat_result:
    """The checks before the file is read: arguments that cannot work, a folder, a missing or special file."""
    path, old, new = args["path"], args["old_content"], args["new_content"]
    if not old:
        raise ToolError("old_content is empty. To create or replace a whole file use file_write; to insert text, "
                        "give the lines next to the spot as old_content and repeat them in new_content.")
    if old == new:
        raise ToolError("old_content and new_content are identical: nothing to change.")
    st = place.lstat()
    if st is None:
        raise fileio.missing(place.real, ctx.workspace, path, MISSING_ADVICE)
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{path} is a folder; give a file path.")
    fileio.require_regular(st, path, "file_patch", PATCH_ADVICE)
    return st


def _patch(place: Place, ctx: ToolContext, args: dict) -> ToolResult:
    path = args["path"]
    with fileio.path_lock(place.real), fileio.os_errors("patch", path):
        st = _target(place, ctx, args)
        return _apply(place, st, ctx, path, _plan(place, st, ctx, path, args))


def run(args: dict, ctx: ToolContext) -> ToolResult:
    # read and replaced from the workspace's descriptor, never through a link that appeared after the check
    return confined(ctx, args["path"], lambda place: _patch(place, ctx, args), write=True)


def preview(args: dict, ctx: ToolContext) -> str:
    """The diff this call would make (for --confirm); the same refusals as running it, nothing written."""

    def diff(place: Place) -> str:
        with fileio.os_errors("patch", args["path"]):
            plan = _plan(place, _target(place, ctx, args), ctx, args["path"], args)
        return _diff(plan.text, plan.start, plan.end, plan.new, args["path"])

    return confined(ctx, args["path"], diff, write=True)


SPEC = ToolSpec(
    name="file_patch",
    description=(
        "Replace the one place matching `old_content` (copied without `N|` prefixes; add lines until unique), "
        "or every place with replace_all=true. "
        "Tolerates line-ending, trailing-space, quote and dash differences. "
        "Refused if the file changed since you read it."
    ),
    parameters=schema("path", "old_content", "new_content", path={"type": "string"}, old_content={"type": "string"},
                      new_content={"type": "string"}, replace_all={"type": "boolean"}),
    side_effect=SideEffect.WRITE, run=run, preview=preview, editable="new_content")
