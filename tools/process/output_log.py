"""code_run's output as it leaves the runner: redacted piece by piece, and its log bounded on the host's disk.

What streams to the terminal and what goes to the log pass through the same redaction as the result (ga.tooling.redact)
as the output comes, which needs whole pieces: a line is let through once it ends, and a PEM block once its END line
came (a key is never split between two pieces and so missed).

A program may print without end (`yes`, a loop gone wrong: 2 GiB from one call). The log keeps the first
LOG_HEAD_CHARS and the last LOG_TAIL_CHARS characters of the output; a line where the rest was says how much was
dropped. The tail waits in memory until the program ends.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from ga.tooling.redact import redact

HOLD_CHARS = 64 * 1024
"""Held back at most, waiting for a line's end or a PEM block's END: past this the piece is redacted as it is."""
LOG_HEAD_CHARS = 4 * 1024 * 1024
LOG_TAIL_CHARS = 4 * 1024 * 1024
_BEGIN, _END = "-----BEGIN ", "-----END "


class StreamRedactor:
    """Redacts a stream of text given in arbitrary pieces; what it returns is safe to show or store."""

    def __init__(self, hold: int = HOLD_CHARS):
        self.hold = hold
        self._pending = ""

    def feed(self, text: str, final: bool = False) -> str:
        pending = self._pending + text
        if final or len(pending) > self.hold:
            cut = len(pending)
        else:
            cut = pending.rfind("\n") + 1
            begin = pending.rfind(_BEGIN, 0, cut)
            if begin != -1 and _END not in pending[begin:cut]:  # an open key block waits whole for its END line
                cut = pending.rfind("\n", 0, begin) + 1
        self._pending = pending[cut:]
        return redact(pending[:cut]) if cut else ""


class CappedLog:
    """A private log file holding the head and the tail of what is written to it, and how much fell between."""

    def __init__(self, path: Path, *, head: int = LOG_HEAD_CHARS, tail: int = LOG_TAIL_CHARS):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # run files are private to the user
        self.file = os.fdopen(fd, "w", encoding="utf-8", newline="")
        self.head_left, self.tail_max = head, tail
        self.head_max = head
        self.tail: deque[str] = deque()
        self.tail_chars = 0
        self.dropped_chars = 0
        self.dropped_lines = 0

    def write(self, text: str) -> None:
        if self.head_left > 0:
            self.file.write(text[:self.head_left])
            text, self.head_left = text[self.head_left:], self.head_left - len(text)
        if not text:
            return
        self.tail.append(text)
        self.tail_chars += len(text)
        while self.tail_chars - len(self.tail[0]) >= self.tail_max:
            gone = self.tail.popleft()
            self.tail_chars -= len(gone)
            self.dropped_chars += len(gone)
            self.dropped_lines += gone.count("\n")

    def close(self) -> None:
        if self.tail and self.tail_chars > self.tail_max:  # the part of the oldest piece that does not fit
            first = self.tail.popleft()
            over = self.tail_chars - self.tail_max
            self.tail.appendleft(first[over:])
            self.dropped_chars += over
            self.dropped_lines += first[:over].count("\n")
        if self.dropped_chars:
            self.file.write(f"\n[… {self.dropped_chars:,} characters ({self.dropped_lines:,} lines) dropped here: the "
                            f"log keeps the first {self.head_max:,} and the last {self.tail_max:,} characters of an "
                            "output …]\n")
        self.file.write("".join(self.tail))
        self.file.close()
