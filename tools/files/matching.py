"""Where file_patch's old_content is in a file: exact matches, then matches tolerant of model slips (line endings,
trailing blanks, curly quotes, dashes, odd spaces), and errors saying how many places matched where, or the closest."""

from __future__ import annotations

import bisect
import difflib
import itertools
import keyword
import re
from array import array

from ga.errors import ToolError

LISTED_MATCHES = 10
MAX_COUNTED = 1000
REGION_CONTEXT = 2
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
_NUMBER = re.compile(r"[ \t]*(\d+)\|")
NUMBERS_NOTE = ("[{field} had file_read's `N|` line numbers on every line: they were left out. Send the file's "
                "text only.]")


class Folded:
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


def find_all(haystack: str, needle: str) -> list[int]:
    """Every start of `needle`, overlapping ones too ("ab\nab\n" is twice in "ab\nab\nab\n"), at most
    MAX_COUNTED + 1 of them (a periodic needle in a periodic file would otherwise cost len(file) searches)."""
    found, at = [], haystack.find(needle)
    while at != -1 and len(found) <= MAX_COUNTED:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def locate(text: str, old: str) -> tuple[list[tuple[int, int]], bool]:
    """Spans of `text` matching `old`: exact ones, else tolerant ones (second value True)."""
    exact = find_all(text, old)
    if exact:
        return [(at, at + len(old)) for at in exact], False
    norm_old = Folded(old).text
    if not norm_old.strip():
        return [], True
    folded = Folded(text)
    spans = [(folded.origin(at), folded.origin(at + len(norm_old) - 1, end=True))
             for at in find_all(folded.text, norm_old)]
    return list(dict.fromkeys(spans)), True  # two starts inside one folded piece ("…" as "...") are one place


def unnumbered(text: str) -> tuple[str, int] | None:
    """`text` without file_read's `N|` line numbers, and the first number, when every line has one and they count
    up by one (a model copied file_read's output); None otherwise."""
    lines = text.split("\n")
    body = lines[:-1] if len(lines) > 1 and not lines[-1] else lines
    found = [_NUMBER.match(line) for line in body]
    if not all(found) or any(int(b[1]) != int(a[1]) + 1 for a, b in itertools.pairwise(found)):
        return None
    plain = [line[m.end():] for line, m in zip(body, found, strict=True)]
    return "\n".join(plain + [""] * (len(body) < len(lines))), int(found[0][1])


def locate_numbered(text: str, old: str, new: str) -> tuple[list[tuple[int, int]], bool, str] | None:
    """Where `old` is when it was copied with file_read's line numbers: its unnumbered text found exactly once,
    starting at the line its first number names (then `new` loses its numbers too, if it has them on every line)."""
    stripped = unnumbered(old)
    if stripped is None:
        return None
    spans, tolerant = locate(text, stripped[0])
    if len(spans) != 1 or line_of(text, spans[0][0]) != stripped[1]:
        return None
    plain_new = unnumbered(new)
    return spans, tolerant, plain_new[0] if plain_new else new


def separate(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans in order without overlaps (an overlapping match is left to the one before it)."""
    kept: list[tuple[int, int]] = []
    for span in sorted(spans):
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


_TOKENS = re.compile(r"\w+|\S")


def renamed_word(old: str, new: str) -> str:
    """The word `old` names that `new` replaces by another word everywhere it changed (`def calc(` -> `def total(`:
    calc), or "" when the change is anything else."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    pairs = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag != "replace" or i2 - i1 != 1 or j2 - j1 != 1:
            return ""
        pairs.add((a[i1], b[j1]))
    word = next(iter(pairs))[0] if len(pairs) == 1 else ""
    return word if len(word) > 2 and not word.isdigit() and not keyword.iskeyword(word) else ""


def listed(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:LISTED_MATCHES])) + (", …" if len(numbers) > LISTED_MATCHES else "")


def line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def line_count(text: str) -> int:
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


def no_match(text: str, old: str, shown: str) -> ToolError:
    message = (f"old_content was not found in {shown}, not even ignoring line endings, trailing spaces, "
               "quote and dash styles.")
    if all(_NUMBER.match(line) for line in old.strip("\n").split("\n")):
        message += " It starts its lines with `N|` numbers from file_read: leave those out."
    region = _closest_region(text, old)
    if region:
        return ToolError(f"{message} {region}\nCopy the exact current text from there and call file_patch again.")
    return ToolError(f"{message} Read the file with file_read and copy the exact text to replace.")


def many(text: str, spans: list[tuple[int, int]], shown: str) -> ToolError:
    lines = listed([line_of(text, s) for s, _ in spans[:LISTED_MATCHES + 1]])
    count = f"more than {MAX_COUNTED}" if len(spans) > MAX_COUNTED else str(len(spans))
    overlap = "; some overlap" if any(b[0] < a[1] for a, b in itertools.pairwise(spans)) else ""
    return ToolError(f"old_content matches {count} places in {shown} (starting at lines {lines}{overlap}); "
                     "it must match exactly one. Include more surrounding lines in old_content (and new_content) "
                     "to make it unique, or pass replace_all=true to change every one of them.")
