"""The one filter for text that reaches the terminal: whatever a model or a tool said is shown, never obeyed.

Model text, tool names, arguments, results and program output all pass through `clean` before they are shown;
the terminal then prints them as plain rich Text (never as markup), so `[/]` or `:smile:` stay as typed."""

from __future__ import annotations

import re

_SEQUENCES = (r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, clear screen, hidden text
              r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: window title, clipboard, hyperlinks
              r"|\x1b[P^_X][^\x1b]*\x1b\\"  # DCS, PM, APC, SOS strings
              r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
              r"|\x1b[ -/]*")  # two-character escapes (reset, charset switches), their final byte next
ESCAPES = re.compile(_SEQUENCES + "[0-~]")
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""Control characters (tab and newline are kept), bidi overrides that make shown text read differently from what
it is, and lone surrogates (which a UTF-8 terminal cannot even be sent)."""
REPLACEMENT = "\ufffd"
_COMPLETE = re.compile(_SEQUENCES + r"[0-OQ-WYZ\\`a-~]")
"""A whole escape sequence (a bare `ESC [` or `ESC ]` is the start of a longer one, not a sequence of its own)."""
_STRING_STARTS = ("\x1b]", "\x1bP", "\x1b^", "\x1b_", "\x1bX")
_HELD_MAX = 4096
"""An unfinished escape sequence longer than this at the end of a chunk is not waited for."""


def clean(text: str) -> str:
    """Escape sequences removed, \\r\\n and lone \\r as \\n, other control characters as �."""
    text = ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return CONTROLS.sub(REPLACEMENT, text)


def escaped_json(text: str) -> str:
    """JSON text (json.dumps with ensure_ascii=False) with what `clean` would replace written as \\u escapes: C1
    controls, bidi overrides and lone surrogates are left raw by json.dumps, and can only sit inside its strings
    (JSON's own syntax is ASCII). The same data, nothing a terminal obeys."""
    return CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def unfinished_suffix(text: str) -> str:
    """The end of a chunk that must wait for the next one: a trailing \\r (maybe \\r\\n) or half an escape
    sequence (an OSC title or clipboard string without its terminator yet, `ESC [3` without its final byte)."""
    if text.endswith("\r"):
        return "\r"
    tail = max(0, len(text) - _HELD_MAX)
    string = max(text.rfind(start, tail) for start in _STRING_STARTS)
    if string >= 0 and not _COMPLETE.match(text, string):
        return text[string:]
    i = max(text.rfind("\x1b", tail), text.rfind("\x9b", tail))
    if i >= 0 and not _COMPLETE.match(text, i):
        return text[i:]
    return ""


class CleanStream:
    """`clean` for text that arrives in pieces: an escape split across two pieces is still recognised."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, chunk: str) -> str:
        text = self._held + chunk
        self._held = unfinished_suffix(text)
        return clean(text[: len(text) - len(self._held)])

    def flush(self) -> str:
        text, self._held = self._held, ""
        return clean(text)


def one_line(text: str, limit: int, *, keep_last: bool = False) -> str:
    """Cleaned, whitespace runs (newlines too) as one space, cut to `limit` characters with an ellipsis; `keep_last`:
    a short last sentence stays whole after the cut ("… Nothing was written.")."""
    text = " ".join(clean(text).split())
    if len(text) <= limit:
        return text
    end = text.rfind(". ", 0, len(text) - 1) + 2 if keep_last else 1
    last = text[end:] if end > 1 else ""
    if last and len(last) <= limit // 3:
        return text[: max(0, limit - len(last) - 2)] + "… " + last
    return text[: max(0, limit - 1)] + "…"
