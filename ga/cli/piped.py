"""Input piped to ga. `cat app.log | ga "explain this error"`: the text goes to the model with the task, up to a cap;
past it, the start and the end go, and the whole is saved in the run folder (the file tools can read it), named in
the task. `ga -` (or `… | ga` with no task) reads the task itself from stdin; `--answer -` reads the answer.

Only a pipe or a file is read: a terminal, /dev/null or a closed stdin give nothing. A pipe that stays silent gets one
line on stderr, so a command waiting on it never looks hung.
"""

from __future__ import annotations

import argparse
import os
import select
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from ga.errors import ConfigError

SILENT = 2.0
"""Seconds a pipe may stay silent before ga says it is waiting for it."""
SHARE = 4
"""Piped text shown to the model: at most this fraction of the history budget."""
HEAD = 0.25
"""Of a cut input, the share shown from its start (the rest from its end: a log's error is at its end)."""


def kind() -> str:
    """What stdin is when ga can read it: "a pipe" or "a file"; "" for a terminal, /dev/null or no stdin."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return ""
    return "a pipe" if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else "a file" if stat.S_ISREG(mode) else ""


def read_all(*, waiting: bool = True) -> bytes:
    """Everything on stdin, to its end; after SILENT seconds of silence, one line on stderr says what ga waits for."""
    fd = sys.stdin.fileno()
    if waiting and not select.select([fd], [], [], SILENT)[0]:
        print("ga: waiting for the input piped to ga to end (Ctrl-D ends typed input; </dev/null gives none)",
              file=sys.stderr, flush=True)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass(kw_only=True)
class Piped:
    """What came on stdin, and what it is for."""

    data: bytes
    is_message: bool = False
    """The task (or the answer) itself, not context for one."""
    source: str = "a pipe"

    def message(self, words: str, folder: Path, budget_tokens: int) -> str:
        """`words` (the task or the answer as given) with the piped text, capped to a share of the history budget;
        past the cap, the whole is saved in `folder` and named."""
        from ga.tooling.tokens import CHARS_PER_TOKEN  # not at import: the command line starts faster without it

        cap = max(2_000, budget_tokens // SHARE * CHARS_PER_TOKEN)
        if b"\0" in self.data[:8192]:
            saved = _save(folder, self.data)
            return _join(words, f"[The input piped to ga is binary data ({len(self.data):,} bytes), saved as "
                                f"{saved}.]")
        text = self.data.decode("utf-8", errors="replace")
        if self.is_message and len(text) <= cap:
            return text.strip()
        lines = text.count("\n") + (not text.endswith("\n"))
        if len(text) <= cap:
            return _join(words, f"[Input piped to ga ({lines:,} lines):]\n{_fenced(text)}")
        saved = _save(folder, self.data)
        head, tail = text[: int(cap * HEAD)], text[-(cap - int(cap * HEAD)):]
        head, tail = head[: head.rfind("\n") + 1] or head, tail[tail.find("\n") + 1:] or tail  # whole lines
        first = head.count("\n") + 1
        last = lines - tail.count("\n") - (not tail.endswith("\n")) + 1
        note = (f"[Input piped to ga: {lines:,} lines, {len(text):,} characters, too long to show whole. Lines "
                f"1-{first - 1} and {last}-{lines} follow; all of it is in {saved} (file_read it for the rest).]")
        return _join(words, f"{note}\n{_fenced(head + f'[… lines {first}-{last - 1} left out …]' + chr(10) + tail)}")


def _join(words: str, block: str) -> str:
    return f"{words.strip()}\n\n{block}" if words.strip() else block


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


def _save(folder: Path, data: bytes) -> Path:
    """The whole input in the run folder (0600, secrets redacted like everything there): stdin.txt, stdin-2.txt..."""
    n, path = 1, folder / "stdin.txt"
    while path.exists():
        n += 1
        path = folder / f"stdin-{n}.txt"
    from ga.tooling.redact import redact

    text = redact(data.decode("utf-8", errors="replace"))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def adopt(args: argparse.Namespace) -> None:
    """`… | ga` with no task: the task is what comes on stdin, as with `ga -` (`… | ga --continue`: the follow-up)."""
    if not (args.task or args.resume) and kind():
        args.task = "-"


def take(args: argparse.Namespace) -> Piped | None:
    """Read stdin when it has a use here. A task or an answer of "-" is read from it (and becomes "" in `args`: the
    text comes as the Piped message); a task, or a resume's answer, given while stdin is a pipe or a file gets what
    comes as context. A resume without an answer leaves stdin alone."""
    for name in ("task", "answer"):
        if getattr(args, name) == "-":
            source = kind()
            if not source and sys.stdin.isatty():
                print("ga: type the text, then Ctrl-D", file=sys.stderr, flush=True)
            data = read_all(waiting=bool(source))
            if not data.strip():
                raise ConfigError(f"The {name} read from stdin is empty.")
            setattr(args, name, "")
            return Piped(data=data, is_message=True, source=source or "a terminal")
    if not kind() or (args.resume and args.answer is None):
        return None
    data = read_all()
    return Piped(data=data, source=kind()) if data.strip() else None
