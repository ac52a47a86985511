"""file_patch: replace the one place where `old_content` occurs; exact first, then tolerant of model slips."""

from __future__ import annotations

import bisect
import difflib
import itertools
import os
import re
import stat
from array import array
from dataclasses import dataclass

from ga.dispatch import ToolContext, ToolResult, ToolSpec
from ga.errors import ToolError
from ga.permissions import SideEffect
from tools import fileio
from tools.files.confined import Place, confined

LISTED_MATCHES = 10
MAX_COUNTED = 1000
REGION_CONTEXT = 2
DIFF_CONTEXT = 3
REGION_MAX_LINES = 40
REGION_LINE_CHARS = 200
SCAN_LINES = 20_000
"""The fuzzy fallback of the closest-region search looks at this many lines at most (difflib is slow)."""

_FOLD: dict[int, str] = {
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u00b4"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"), '"'),
    **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-"),
    **dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))), " "),
    **dict.fromkeys(map(ord, "\ufeff\u200b"), ""),
    ord("\u2026"): "...",
    **{code: chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)},  # full-width ASCII forms
}
_BLANKS = " \t\u00a0\u2007\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))
# trailing blanks (each run tried once, so long runs stay linear), line endings, then single look-alike chars
_SPECIAL = re.compile(f"(?P<blank>(?<![{_BLANKS}])[{_BLANKS}]++(?=[\r\n]|\\Z))|(?P<eol>\r\n?)"
                      f"|(?P<fold>[{re.escape(''.join(map(chr, _FOLD)))}])")
_NUMBERED = re.compile(r"^\s*\d+\|")
MAX_BYTES = 16 << 20
"""Bigger files are refused with the code_run route named: a patch holds the file in memory several times over."""
PATCH_ADVICE = "Give the path of a regular text file (file_read lists a folder to find one)."


class _Folded:
    """Text with line endings, quotes, dashes, odd spaces and trailing blanks evened out, and the way back:
    for each replaced piece its folded start and length, and its original start and end."""

    def __init__(self, text: str):
        parts: list[str] = []
        # four flat int arrays instead of tuples: a big CRLF file has a piece per line
        self._keys, self._lengths, self._starts, self._ends = (array("q") for _ in range(4))
        if text.isascii() and "\r" not in text and " \n" not in text and "\t\n" not in text \
                and not text.endswith((" ", "\t")):
            self.text = text  # nothing to fold (the common case), found at C speed instead of by the regex
            return
        size, last = 0, 0
        for m in _SPECIAL.finditer(text):
            kind = m.lastgroup
            repl = "" if kind == "blank" else "\n" if kind == "eol" else m[0].translate(_FOLD)
            parts.append(text[last:m.start()])
            size += m.start() - last
            self._keys.append(size)
            self._lengths.append(len(repl))
            self._starts.append(m.start())
            self._ends.append(m.end())
            parts.append(repl)
            size += len(repl)
            last = m.end()
        parts.append(text[last:])
        self.text = "".join(parts)

    def origin(self, at: int, *, end: bool = False) -> int:
        """Where folded char `at` starts in the original (with end=True: where it ends)."""
        k = bisect.bisect_right(self._keys, at) - 1
        if k < 0:
            return at + end
        start, length, orig_start, orig_end = self._keys[k], self._lengths[k], self._starts[k], self._ends[k]
        if at < start + length:  # inside a replaced piece: the whole piece
            return orig_end if end else orig_start
        return orig_end + (at - start - length) + end


def _find_all(haystack: str, needle: str) -> list[int]:
    """Every start of `needle`, overlapping ones too ("ab\nab\n" is twice in "ab\nab\nab\n"), at most
    MAX_COUNTED + 1 of them (a periodic needle in a periodic file would otherwise cost len(file) searches)."""
    found, at = [], haystack.find(needle)
    while at != -1 and len(found) <= MAX_COUNTED:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def _locate(text: str, old: str) -> tuple[list[tuple[int, int]], bool]:
    """Spans of `text` matching `old`: exact ones, else tolerant ones (second value True)."""
    exact = _find_all(text, old)
    if exact:
        return [(at, at + len(old)) for at in exact], False
    norm_old = _Folded(old).text
    if not norm_old.strip():
        return [], True
    folded = _Folded(text)
    spans = [(folded.origin(at), folded.origin(at + len(norm_old) - 1, end=True))
             for at in _find_all(folded.text, norm_old)]
    return list(dict.fromkeys(spans)), True  # two starts inside one folded piece ("…" as "...") are one place


def _line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _candidates(lines: list[str], wanted: list[str]) -> list[int]:
    """Window starts worth scoring: where most lines equal a wanted line, else near the most distinctive one."""
    where: dict[str, list[int]] = {}
    for j, line in enumerate(wanted):
        if line.strip():
            where.setdefault(line.strip(), []).append(j)
    votes: dict[int, int] = {}
    for i, line in enumerate(lines):
        for j in where.get(line.strip(), ()):
            votes[i - j] = votes.get(i - j, 0) + 1
    if votes:
        return [max(0, at) for at in sorted(votes, key=lambda at: -votes[at])[:20]]
    longest = max(range(len(wanted)), key=lambda j: len(wanted[j].strip()))
    matcher = difflib.SequenceMatcher(None, "", wanted[longest].strip())
    scored = []
    for i, line in enumerate(lines[:SCAN_LINES]):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() >= 0.5 and matcher.quick_ratio() >= 0.5:
            scored.append((matcher.ratio(), max(0, i - longest)))
    return [at for _, at in sorted(scored, reverse=True)[:20]]


def _closest_region(text: str, old: str) -> str:
    """The file region most like `old`, as numbered lines, or "" when nothing is alike."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    wanted = [line.rstrip("\r") for line in old.strip("\n").split("\n")]
    goal = "\n".join(w.strip() for w in wanted)
    best, best_at = 0.0, -1
    for at in _candidates(lines, wanted):
        ratio = difflib.SequenceMatcher(None, "\n".join(x.strip() for x in lines[at:at + len(wanted)]), goal).ratio()
        if ratio > best:
            best, best_at = ratio, at
    if best < 0.3:
        return ""
    lo = max(0, best_at - REGION_CONTEXT)
    hi = min(len(lines), best_at + len(wanted) + REGION_CONTEXT, lo + REGION_MAX_LINES)
    shown = [f"{n + 1}|{lines[n][:REGION_LINE_CHARS]}" for n in range(lo, hi)]
    return (f"The closest region is lines {best_at + 1}-{min(best_at + len(wanted), len(lines))} "
            f"({best:.0%} alike), shown with {REGION_CONTEXT} lines around:\n" + "\n".join(shown))


def _no_match(text: str, old: str, shown: str) -> ToolError:
    message = (f"old_content was not found in {shown}, not even ignoring line endings, trailing spaces, "
               "quote and dash styles.")
    if all(_NUMBERED.match(line) for line in old.strip("\n").split("\n")):
        message += " It starts its lines with `N|` numbers from file_read: leave those out."
    region = _closest_region(text, old)
    if region:
        return ToolError(f"{message} {region}\nCopy the exact current text from there and call file_patch again.")
    return ToolError(f"{message} Read the file with file_read and copy the exact text to replace.")


def _many(text: str, spans: list[tuple[int, int]], shown: str) -> ToolError:
    lines = ", ".join(str(_line_of(text, s)) for s, _ in spans[:LISTED_MATCHES])
    more = ", …" if len(spans) > LISTED_MATCHES else ""
    count = f"more than {MAX_COUNTED}" if len(spans) > MAX_COUNTED else str(len(spans))
    overlap = "; some overlap" if any(b[0] < a[1] for a, b in itertools.pairwise(spans)) else ""
    return ToolError(f"old_content matches {count} places in {shown} (starting at lines {lines}{more}{overlap}); "
                     "it must match exactly one. Include more surrounding lines in old_content (and new_content) "
                     "to make it unique, or patch each place separately.")


def _split_keep(text: str) -> list[str]:
    """Lines with their "\n" (str.splitlines also splits on form feeds and the like, which shifts numbers)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _diff(text: str, start: int, end: int, new: str, shown: str) -> str:
    """Unified diff of the changed region only (cheap on big files), numbered as in the whole file."""
    lo = text.rfind("\n", 0, start) + 1
    for _ in range(DIFF_CONTEXT):
        lo = text.rfind("\n", 0, max(lo - 1, 0)) + 1 if lo else 0
    hi = end
    for _ in range(DIFF_CONTEXT + (end > 0 and text[end - 1] != "\n")):
        hi = text.find("\n", hi) + 1 or len(text)
    offset = text.count("\n", 0, lo)
    hunks = difflib.unified_diff(_split_keep(text[lo:hi]), _split_keep(text[lo:start] + new + text[end:hi]),
                                 f"a/{shown}", f"b/{shown}", n=DIFF_CONTEXT)

    def shift(m: re.Match) -> str:
        return f"@@ -{int(m[1]) + offset}{m[2] or ''} +{int(m[3]) + offset}{m[4] or ''} @@"

    return "".join(re.sub(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", shift, h) if h.startswith("@@")
                   else h if h.endswith("\n") else f"{h}\n\\ No newline at end of file\n" for h in hunks)


def _with_line_endings(new: str, text: str) -> str:
    """New content in the file's own line-ending style."""
    new = new.replace("\r\n", "\n")
    crlf = text.count("\r\n")
    return new.replace("\n", "\r\n") if crlf and crlf >= text.count("\n") - crlf else new


@dataclass(kw_only=True)
class _Plan:
    """A patch located but not yet written."""

    data: bytes
    """The file's bytes as read."""
    text: str
    start: int
    end: int
    """The span of `text` that is replaced."""
    new: str
    """new_content in the file's own line-ending style."""
    tolerant: bool


def _too_big(shown: str, size: int) -> ToolError:
    return ToolError(f"{shown} is {fileio.human_size(size)}, over file_patch's {fileio.human_size(MAX_BYTES)} limit "
                     "(a patch holds the whole file in memory to find one exact match). Edit it with code_run "
                     "instead, streaming it: `sed -i 's/OLD/NEW/' PATH` for a line, or a python loop over "
                     "`open(PATH)` writing a new file that then replaces it with os.replace.")


def _plan(place: Place, st: os.stat_result, ctx: ToolContext, shown: str, args: dict) -> _Plan:
    old, new = args["old_content"], args["new_content"]
    fileio.ensure_unchanged(ctx, place.real, st, shown, "this edit")
    if st.st_size > MAX_BYTES:
        raise _too_big(shown, st.st_size)
    with fileio.open_regular(place, st, shown, "file_patch", PATCH_ADVICE) as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:  # it grew since the stat
        raise _too_big(shown, len(data))
    if fileio.is_binary(data[: fileio.SNIFF_BYTES]):
        raise ToolError(f"{shown} is a binary file; file_patch edits text only.")
    text = data.decode("utf-8", "surrogateescape")
    spans, tolerant = _locate(text, old)
    if not spans:
        raise _no_match(text, old, shown)
    if len(spans) > 1:
        raise _many(text, spans, shown)
    start, end = spans[0]
    return _Plan(data=data, text=text, start=start, end=end, new=_with_line_endings(new, text), tolerant=tolerant)


def _apply(place: Place, st: os.stat_result, ctx: ToolContext, shown: str, plan: _Plan) -> ToolResult:
    text, start, end, new = plan.text, plan.start, plan.end, plan.new
    head = len(text[:start].encode("utf-8", "surrogateescape"))
    tail = head + len(text[start:end].encode("utf-8", "surrogateescape"))
    # the file's own bytes outside the span, whatever their encoding
    fileio.remember(ctx, place.real, place.replace([plan.data[:head], fileio.encode(new), plan.data[tail:]], st))
    first, old_lines, new_lines = _line_of(text, start), _line_count(text[start:end]), _line_count(new)
    last = first + max(old_lines, 1) - 1
    where = f"line {first}" if last == first else f"lines {first}-{last} ({old_lines} lines)"
    did = f"deleted {where}" if not new else f"replaced {where} with {new_lines} line{'s' * (new_lines != 1)}"
    note = " (tolerant match: line endings, spaces, quotes or dashes differed)"
    return ToolResult(content=f"Patched {shown}: {did}.{note if plan.tolerant else ''}",
                      details={"path": str(place.real), "diff": _diff(text, start, end, new, shown),
                               "tolerant": plan.tolerant, "lines": [first, last]})


def _target(place: Place, ctx: ToolContext, args: dict) -> os.stat_result:
    """The checks before the file is read: arguments that cannot work, a folder, a missing or special file."""
    path, old, new = args["path"], args["old_content"], args["new_content"]
    if not old:
        raise ToolError("old_content is empty. To create or replace a whole file use file_write; to insert text, "
                        "give the lines next to the spot as old_content and repeat them in new_content.")
    if old == new:
        raise ToolError("old_content and new_content are identical: nothing to change.")
    with fileio.os_errors("patch", path):
        st = place.lstat()
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{path} is a folder; give a file path.")
        if st is None:
            raise fileio.missing(place.real, ctx.workspace, path, "Create a new file with file_write.")
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
        "Replace the one place matching `old_content` (copied without `N|` prefixes; add lines until unique). "
        "Tolerates line-ending, trailing-space, quote and dash differences. "
        "Refused if the file changed since you read it."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old_content": {"type": "string"},
            "new_content": {"type": "string"},
        },
        "required": ["path", "old_content", "new_content"],
        "additionalProperties": False,
    },
    side_effect=SideEffect.WRITE,
    run=run,
    preview=preview,
    editable="new_content",
)
