"""What bash does to a word after parsing and before running it, beside parameter expansion (shell_expand):
brace expansion (`{rm,-rf,~}` is three words, `~{,}` is `~ ~`) and the splitting of unquoted expansions on
IFS (`rm${IFS}-rf${IFS}$HOME` is three words). The policy judges the words bash would run, not the word as
written; a word that would expand past a limit is unknown.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

MAX_WORDS = 256
"""Brace expansion stops past this many words; a sequence keeps its first and last (`{1..100000}`)."""
DEFAULT_IFS = " \t\n"
_SEQUENCE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")


def scan_quotes(raw: str) -> tuple[list[bool], bool]:
    """Which characters of a word as written are bare (outside quotes, escapes, `${...}`, `$(...)` and
    backquotes), and whether an expansion stands bare in it (its result is split on IFS)."""
    bare, i, quote, split = [False] * len(raw), 0, "", False
    while i < len(raw):
        c = raw[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            i += 2
            continue
        elif c == "$" and raw[i + 1: i + 2] in ("{", "("):
            split |= not quote
            i = _closing(raw, i + 1)
            continue
        elif c == "`":
            split |= not quote
            i = (raw.find("`", i + 1) + 1) or len(raw)
            continue
        elif c == "$" and re.match(r"[A-Za-z_0-9@*#?$!-]", raw[i + 1: i + 2]):
            split |= not quote
        elif quote == '"':
            quote = "" if c == '"' else quote
        elif c in "'\"":
            quote = c
        else:
            bare[i] = True
        i += 1
    return bare, split


def _closing(raw: str, start: int) -> int:
    """The index after the bracket that closes the one at `start` (`{` or `(`); the end if none does."""
    opener = raw[start]
    closer, depth = "}" if opener == "{" else ")", 0
    for i in range(start, len(raw)):
        if raw[i] == opener:
            depth += 1
        elif raw[i] == closer:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(raw)


def expand_braces(raw: str, limit: int = MAX_WORDS) -> list[str]:
    """The words a word as written becomes by brace expansion (quotes kept), in bash's order. Past `limit` words
    the rest stay as written: what is left unexpanded are siblings of words already expanded (`f{1..1000}`)."""
    pending, done = [raw], []
    while pending:
        word = pending.pop(0)
        found = _first_brace(word, limit)
        if found is None:
            done.append(word)
            continue
        start, end, items = found
        pending[0:0] = [word[:start] + item + word[end:] for item in items]
        if len(done) + len(pending) > limit:
            return done + pending
    return done


def _first_brace(word: str, limit: int) -> tuple[int, int, list[str]] | None:
    """The first `{a,b}` or `{x..y}` that bash expands: its span and its items."""
    bare, _ = scan_quotes(word)
    for start, c in enumerate(word):
        if c != "{" or not bare[start]:
            continue
        depth, commas = 0, []
        for end in range(start, len(word)):
            if not bare[end]:
                continue
            if word[end] == "{":
                depth += 1
            elif word[end] == "}":
                depth -= 1
                if depth == 0:
                    break
            elif word[end] == "," and depth == 1:
                commas.append(end)
        else:
            return None  # no closing brace: nothing further can expand
        if commas:
            cuts = [start, *commas, end]
            return start, end + 1, [word[a + 1: b] for a, b in itertools.pairwise(cuts)]
        if (m := _SEQUENCE.fullmatch(word[start + 1: end])) and (items := _sequence(*m.groups(), limit)):
            return start, end + 1, items
    return None


def _sequence(first: str, last: str, step: str | None, limit: int) -> list[str] | None:
    if first.lstrip("-").isdigit() != last.lstrip("-").isdigit():
        return None
    by = abs(int(step or 1)) or 1
    if first.lstrip("-").isdigit():
        a, b = int(first), int(last)
        width = max(len(first), len(last)) if re.match(r"-?0\d", first) or re.match(r"-?0\d", last) else 0
        numbers = range(a, b + 1, by) if a <= b else range(a, b - 1, -by)
        kept = [*numbers[:limit], numbers[-1]] if len(numbers) > limit else numbers
        return [str(n).zfill(width) for n in kept]
    a, b = ord(first), ord(last)
    return [chr(n) for n in (range(a, b + 1, by) if a <= b else range(a, b - 1, -by))]


def unquote(raw: str) -> str:
    """Quote removal: what is left of a word as written once its quotes and escapes are taken out."""
    out, i, quote = [], 0, ""
    while i < len(raw):
        c = raw[i]
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                out.append(c)
        elif c == "\\" and i + 1 < len(raw):
            if quote == '"' and raw[i + 1] not in '$`"\\\n':
                out.append(c)
            out.append(raw[i + 1])
            i += 2
            continue
        elif quote == '"':
            if c == '"':
                quote = ""
            else:
                out.append(c)
        elif c in "'\"":
            quote = c
        else:
            out.append(c)
        i += 1
    return "".join(out)


def split_fields(value: str, ifs: str | None) -> list[str]:
    """Word splitting of an expansion's result on IFS (unknown IFS: bash's default); empty fields are dropped."""
    ifs = DEFAULT_IFS if ifs is None else ifs
    if not ifs:
        return [value] if value else []
    return [field for field in re.split(f"[{re.escape(ifs)}]+", value) if field]


ALL_ITEMS = re.compile(r'"\$(?:@|\{@\}|\{\w+\[@\]\})"')
"""`"$@"`, `"${a[@]}"`: one word per item even though quoted."""


def braced_words(raw: str, word: str) -> list[str]:
    """`word` (quotes removed) as the words brace expansion of `raw` (as written) makes; an empty one is none."""
    if "{" not in raw or (braced := expand_braces(raw)) == [raw]:
        return [word]
    return [unquote(v) for v in braced if v]


def split_word(word: str, raw: str, expand: Callable[[str], str | None], ifs: str | None) -> list[str]:
    """A word whose expansions stand bare in `raw` split on IFS once expanded (unknown: kept as one word)."""
    whole = ALL_ITEMS.fullmatch(raw)
    if not (scan_quotes(raw)[1] or whole) or (value := expand(word)) is None:
        return [word]
    return split_fields(value, None if whole else ifs)


def positional(args: list[str], expand: Callable[[str], str | None], unknown: str) -> dict[str, str] | None:
    """The positional parameters `set -- a b` (or `set a b`) gives; None for `set -e`, `set -o pipefail`."""
    i, given = 0, False
    while i < len(args) and args[i][:1] in ("-", "+") and args[i] not in ("-", "--"):
        i += 2 if args[i] in ("-o", "+o") else 1
    if i < len(args) and args[i] in ("-", "--"):
        i, given = i + 1, True
    if not given and i >= len(args):
        return None
    words = [unknown if (v := expand(a)) is None else v for a in args[i:]]
    values = {str(n): (words[n - 1] if n <= len(words) else "") for n in range(1, 10)}
    return {**values, "@": " ".join(words), "*": " ".join(words), "#": str(len(words))}
