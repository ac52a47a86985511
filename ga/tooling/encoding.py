"""Text made safe to encode as UTF-8, at the one boundary where ga's data leaves the process.

Python strings can hold what UTF-8 cannot: lone surrogates, from a model's JSON ("\\ud83d"), from a stream
that split a pair across two chunks, or from file names and output that were not UTF-8 (decoded with
surrogateescape as \\udc80-\\udcff). Encoding such a string raises, so a run would crash where it is written,
and crash again on every --resume. Everything written to the trajectory or the state, hashed, or sent to the
server goes through scrub() first: pairs are joined, an escaped byte becomes the text `\\xNN`, any other lone
surrogate becomes U+FFFD."""

from __future__ import annotations

import json
import re
from typing import TypeVar

T = TypeVar("T")

_LONE = re.compile("[\ud800-\udfff]")


def _replace(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def scrub_text(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    # a pair split into two code points is joined first: "\ud83d" + "\ude00" is one emoji
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _LONE.sub(_replace, joined)


def scrub(value: T) -> T:
    """The value with every string in it (dict keys too, at any depth) encodable as UTF-8."""
    if isinstance(value, str):
        return scrub_text(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list | tuple):
        return type(value)(scrub(v) for v in value)  # type: ignore[return-value]
    return value


def dumps(value: object) -> str:
    """JSON for disk: non-ASCII kept readable, any object that is not JSON written as its str()."""
    return json.dumps(scrub(value), ensure_ascii=False, default=lambda o: scrub_text(str(o)))
