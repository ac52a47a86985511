"""file_patch: replace the one place where `old_content` occurs; exact first, then tolerant of model slips."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from ga.dispatch import ToolContext, ToolResult, ToolSpec
from ga.errors import ToolError
from ga.permissions import SideEffect
from tools import fileio

LISTED_MATCHES = 10
REGION_CONTEXT = 2
REGION_MAX_LINES = 40
REGION_LINE_CHARS = 200
SCAN_LINES = 20_000
"""Beyond this many lines the closest-region search only uses exact line hits (difflib gets slow)."""

_FOLD: dict[int, str] = {
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u00b4"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"), '"'),
    **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-"),
    **dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))), " "),
    **dict.fromkeys(map(ord, "\ufeff\u200b"), ""),
    ord("\u2026"): "...",
    **{code: chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)},  # full-width ASCII forms
}
_NUMBERED = re.compile(r"^\s*\d+\|")


def _normalise(text: str) -> tuple[str, list[int], list[int]]:
    """Text with line endings, quotes, dashes, odd spaces and trailing blanks evened out,
    plus for each resulting char the [start, end) span of `text` it came from."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i = 0
    while i < len(text):
        char, width = text[i], 1
        if char == "\r":
            width = 2 if text.startswith("\n", i + 1) else 1
            char = "\n"
        else:
            char = char.translate(_FOLD)
        if char in ("\n", ""):
            while char and out and out[-1] in " \t":
                out.pop(), starts.pop(), ends.pop()
        for c in char:
            out.append(c), starts.append(i), ends.append(i + width)
        i += width
    while out and out[-1] in " \t":
        out.pop(), starts.pop(), ends.pop()
    return "".join(out), starts, ends


def _find_all(haystack: str, needle: str) -> list[int]:
    found, at = [], haystack.find(needle)
    while at != -1:
        found.append(at)
        at = haystack.find(needle, at + len(needle))
    return found


def _locate(text: str, old: str) -> tuple[list[tuple[int, int]], bool]:
    """Spans of `text` matching `old`: exact ones, else tolerant ones (second value True)."""
    exact = _find_all(text, old)
    if exact:
        return [(at, at + len(old)) for at in exact], False
    norm_old = _normalise(old)[0]
    if not norm_old.strip():
        return [], True
    norm_text, starts, ends = _normalise(text)
    spans = [(starts[at], ends[at + len(norm_old) - 1]) for at in _find_all(norm_text, norm_old)]
    return spans, True


def _line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _candidates(lines: list[str], wanted: list[str]) -> list[int]:
    """Window starts worth scoring: most lines equal to a wanted line, else near the most distinctive one."""
    keys = {w.strip() for w in wanted if w.strip()}
    hits = [1 if line.strip() in keys else 0 for line in lines]
    size = len(wanted)
    sums = [sum(hits[i:i + size]) for i in range(0, len(lines))] if len(lines) <= SCAN_LINES else []
    if len(lines) > SCAN_LINES:
        sums = [hits[i] for i in range(len(lines))]
    if max(sums, default=0) > 0:
        return sorted(range(len(sums)), key=lambda i: -sums[i])[:20]
    matcher = difflib.SequenceMatcher(None, "", max(wanted, key=len).strip())
    scored = []
    for i, line in enumerate(lines[:SCAN_LINES]):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() >= 0.5 and matcher.quick_ratio() >= 0.5:
            scored.append((matcher.ratio(), i - wanted.index(max(wanted, key=len))))
    return [max(0, i) for _, i in sorted(scored, reverse=True)[:20]]


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
    return ToolError(f"old_content matches {len(spans)} places in {shown} (starting at lines {lines}{more}); it must "
                     "match exactly one. Include more surrounding lines in old_content (and new_content) "
                     "to make it unique, or patch each place separately.")


def _diff(before: str, after: str, shown: str, first: int, last: int) -> str:
    """Unified diff of the changed region only: cheap on big files, line numbers as in the whole file."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    lo, hi = max(0, first - 4), min(len(a), last + 3)
    hunks = difflib.unified_diff(a[lo:hi], b[lo:len(b) - (len(a) - hi)], f"a/{shown}", f"b/{shown}")

    def shift(m: re.Match) -> str:
        return f"@@ -{int(m[1]) + lo}{m[2] or ''} +{int(m[3]) + lo}{m[4] or ''} @@"

    return "".join(re.sub(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", shift, h) for h in hunks)


def _with_line_endings(new: str, text: str) -> str:
    """New content in the file's own line-ending style."""
    new = new.replace("\r\n", "\n")
    crlf = text.count("\r\n")
    return new.replace("\n", "\r\n") if crlf and crlf >= text.count("\n") - crlf else new


def _patch(real: Path, ctx: ToolContext, shown: str, old: str, new: str) -> ToolResult:
    fileio.ensure_unchanged(ctx, real, shown)
    data = real.read_bytes()
    if fileio.is_binary(data[: fileio.SNIFF_BYTES]):
        raise ToolError(f"{shown} is a binary file; file_patch edits text only.")
    text = data.decode("utf-8", "surrogateescape")
    spans, tolerant = _locate(text, old)
    if not spans:
        raise _no_match(text, old, shown)
    if len(spans) > 1:
        raise _many(text, spans, shown)
    start, end = spans[0]
    new = _with_line_endings(new, text)
    head = len(text[:start].encode("utf-8", "surrogateescape"))
    tail = head + len(text[start:end].encode("utf-8", "surrogateescape"))
    # the file's own bytes outside the span, whatever their encoding
    fileio.atomic_write(real, [data[:head], new.encode("utf-8", "surrogateescape"), data[tail:]])
    fileio.remember(ctx, real)
    first, old_lines, new_lines = _line_of(text, start), _line_count(text[start:end]), _line_count(new)
    last = first + max(old_lines, 1) - 1
    where = f"line {first}" if last == first else f"lines {first}-{last} ({old_lines} lines)"
    did = f"deleted {where}" if not new else f"replaced {where} with {new_lines} line{'s' * (new_lines != 1)}"
    note = " (tolerant match: line endings, spaces, quotes or dashes differed; the rest kept as it was)"
    after = text[:start] + new + text[end:]
    return ToolResult(content=f"Patched {shown}: {did}.{note if tolerant else ''}",
                      details={"path": str(real), "diff": _diff(text, after, shown, first, last),
                               "tolerant": tolerant, "lines": [first, last]})


def run(args: dict, ctx: ToolContext) -> ToolResult:
    path, old, new = args["path"], args["old_content"], args["new_content"]
    real = ctx.resolve(path, write=True)
    if not old:
        raise ToolError("old_content is empty. To create a file or replace it whole use file_write; "
                        "to insert text, give the lines next to the spot as old_content and repeat them in new_content.")
    if old == new:
        raise ToolError("old_content and new_content are identical: nothing to change.")
    if real.is_dir():
        raise ToolError(f"{path} is a folder; give a file path.")
    if not real.exists():
        raise fileio.missing(real, ctx.workspace, path, "Create a new file with file_write.")
    with fileio.path_lock(real):
        return _patch(real, ctx, path, old, new)


SPEC = ToolSpec(
    name="file_patch",
    description=(
        "Replace one snippet of a text file. `old_content` must match exactly one place: copy it from file_read "
        "without the `N|` prefixes, with enough lines to be unique. Line-ending, trailing-space, quote and dash "
        "differences are tolerated. Refused if the file changed since you read it. New files: file_write."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "old_content": {"type": "string", "description": "Current text, exact"},
            "new_content": {"type": "string", "description": "Replacement"},
        },
        "required": ["path", "old_content", "new_content"],
        "additionalProperties": False,
    },
    side_effect=SideEffect.WRITE,
    run=run,
)
