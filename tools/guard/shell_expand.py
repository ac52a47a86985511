"""Parameter expansion as bash does it, for the values the policy knows: `$D`, `${HOME:?}`, `${HOME%/}`,
`${X:-default}`, `${P/#\\~/$HOME}`, `${#X}`. What it cannot know (a variable read at run time, `${!ref}`) comes
back as None, and the caller treats that part of the word as unknown.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

PARAMETER = re.compile(r"\$\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}|\$([A-Za-z_]\w*|[0-9@*#?$!-])")
_BODY = re.compile(r"(#?)([A-Za-z_]\w*|[0-9@*#?$!-])(.*)", re.DOTALL)

Lookup = Callable[[str], "str | None"]
"""A variable's value, or None when the policy does not know it."""


def expand_parameter(body: str, lookup: Lookup, expand_word: Callable[[str], str | None]) -> str | None:
    """The value of `${body}`, or None when unknown. `expand_word` expands the words inside (defaults...)."""
    m = _BODY.fullmatch(body)
    if m is None:
        return None  # ${!ref}, ${@:2} and friends
    length, name, op = m.groups()
    if subscript := re.match(r"\[[^\]]*\]", op):  # ${a[@]}, ${a[0]}: an array is known as its words together
        op = op[subscript.end():]
    value = lookup(name)
    if length:
        return None if value is None or op else str(len(value))
    if not op:
        return value
    if op[0] in "?:" and op.lstrip(":")[:1] == "?":
        return value  # ${X:?message}: X itself, or the command does not run
    if op.lstrip(":")[:1] in ("-", "="):
        word = op.lstrip(":")[1:]
        empty = value is not None and (value == "" if op.startswith(":") else False)
        if value is None:
            return None
        return expand_word(word) if empty else value
    if op.lstrip(":")[:1] == "+":
        return None if value is None else (expand_word(op.lstrip(":")[1:]) if value else "")
    if value is None:
        return None
    if op[0] in "%#":
        return _trim(value, op, expand_word)
    if op[0] == "/":
        return _replace(value, op, expand_word)
    if op[0] in "^,":
        return value.upper() if op[0] == "^" else value.lower()
    if op[0] == ":" and re.fullmatch(r":\s*-?\d+(:\d+)?", op):
        start, _, count = op[1:].strip().partition(":")
        cut = value[int(start):]
        return cut[: int(count)] if count else cut
    return None


def _trim(value: str, op: str, expand_word: Callable[[str], str | None]) -> str | None:
    longest = op[:2] in ("%%", "##")
    pattern = expand_word(op[2 if longest else 1:])
    if pattern is None:
        return None
    cuts = range(len(value) + 1)
    if op[0] == "%":  # suffix
        order = cuts if longest else reversed(cuts)
        return next((value[:i] for i in order if fnmatch.fnmatchcase(value[i:], pattern)), value)
    order = reversed(cuts) if longest else cuts
    return next((value[i:] for i in order if fnmatch.fnmatchcase(value[:i], pattern)), value)


def _replace(value: str, op: str, expand_word: Callable[[str], str | None]) -> str | None:
    every, anchor = op[1:2] == "/", op[1:2] if op[1:2] in "#%" else ""
    rest = op[2:] if every or anchor else op[1:]
    pattern, _, replacement = rest.partition("/")
    literal_tilde = pattern.startswith(("~", "\\~"))  # no tilde expansion in a pattern
    pattern = expand_word(pattern.replace("\\", "").removeprefix("~"))
    pattern = None if pattern is None else "~" * literal_tilde + pattern
    replacement = expand_word(replacement)
    if pattern is None or replacement is None:
        return None
    if anchor == "#":
        return replacement + value[len(pattern):] if value.startswith(pattern) else value
    if anchor == "%":
        return value[: len(value) - len(pattern)] + replacement if value.endswith(pattern) else value
    return value.replace(pattern, replacement) if every else value.replace(pattern, replacement, 1)
