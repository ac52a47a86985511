"""code_run's output as it leaves the runner: redacted piece by piece, and its log bounded on the host's disk.

What streams to the terminal and what goes to the log pass through the result's redaction (ga.tooling.redact) as the
output comes, in whole pieces: a line once it ends, a PEM block once its END line came (a key is never split between
two pieces and so missed). A program may print without end (`yes`: 2 GiB from one call): the log keeps the first
LOG_HEAD_CHARS and the last LOG_TAIL_CHARS characters, and says how much was dropped between them."""

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

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str, final: bool = False) -> str:
        pending = self._pending + text
        if final or len(pending) > HOLD_CHARS:
            cut = len(pending)
        else:
            cut = pending.rfind("\n") + 1
            begin = pending.rfind(_BEGIN, 0, cut)
            if begin != -1 and _END not in pending[begin:cut]:  # an open key block waits whole for its END line
                cut = pending.rfind("\n", 0, begin) + 1
        self._pending = pending[cut:]
        return redact(pending[:cut]) if cut else ""


class CappedLog:
    """A private log file of redacted text: the head and the tail of what is written to it, and how much fell
    between (the tail waits in memory until close)."""

    def __init__(self, path: Path):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # run files are private to the user
        self.file = os.fdopen(fd, "w", encoding="utf-8", newline="")
        self.redactor, self.head_left = StreamRedactor(), LOG_HEAD_CHARS
        self.tail: deque[str] = deque()
        self.tail_chars = self.dropped_chars = self.dropped_lines = 0

    def write(self, text: str, final: bool = False) -> None:
        text = self.redactor.feed(text, final)
        if self.head_left > 0:
            self.file.write(text[:self.head_left])
            text, self.head_left = text[self.head_left:], self.head_left - len(text)
        if not text:
            return
        self.tail.append(text)
        self.tail_chars += len(text)
        while self.tail_chars - len(self.tail[0]) >= LOG_TAIL_CHARS:
            gone = self.tail.popleft()
            self.tail_chars -= len(gone)
            self.dropped_chars += len(gone)
            self.dropped_lines += gone.count("\n")

    def close(self) -> None:
        self.write("", final=True)
        if self.tail and self.tail_chars > LOG_TAIL_CHARS:  # the part of the oldest piece that does not fit
            first = self.tail.popleft()
            over = self.tail_chars - LOG_TAIL_CHARS
            self.tail.appendleft(first[over:])
            self.dropped_chars += over
            self.dropped_lines += first[:over].count("\n")
        if self.dropped_chars:
            self.file.write(f"\n[… {self.dropped_chars:,} characters ({self.dropped_lines:,} lines) dropped here: the "
                            f"log keeps the first {LOG_HEAD_CHARS:,} and the last {LOG_TAIL_CHARS:,} characters of an "
                            "output …]\n")
        self.file.write("".join(self.tail))
        self.file.close()
