"""Input piped to ga. `cat app.log | ga "explain this error"`: the text goes to the model with the task, up to a cap;
past it, the start and the end go, and the whole is saved in the run folder (the file tools can read it), named in
the task. `ga -` (or `… | ga` with no task) reads the task itself from stdin; `--answer -` reads the answer.

Only a pipe or a file is read: a terminal, /dev/null or a closed stdin give nothing. A pipe that stays silent gets one
line on stderr, so a command waiting on it never looks hung. At most LIMIT bytes are read (`yes | ga` read 4.8 GiB into
memory in 15 s); a cut input says so, to the user and to the model.
"""

from __future__ import annotations

import argparse
import codecs
import os
import select
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ga.errors import ConfigError

SILENT = 2.0
"""Seconds a pipe may stay silent before ga says it is waiting for it."""
SHARE = 4
"""Piped text shown to the model: at most this fraction of the history budget."""
HEAD = 0.25
"""Of a cut input, the share shown from its start (the rest from its end: a log's error is at its end)."""
LIMIT = 16 << 20
"""Piped bytes read at most; the rest is left unread (its writer gets SIGPIPE when ga is done) and the cut is said.
A larger input is better given as a file path, which the file tools read in place."""
CUT_ENV = "GA_PIPED_CUT"
"""Set by a --detach parent for its child when the input it passes on was cut."""
_BLOCK = 1 << 20


def kind() -> str:
    """What stdin is when ga can read it: "a pipe" or "a file"; "" for a terminal, /dev/null or no stdin."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return ""
    return "a pipe" if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else "a file" if stat.S_ISREG(mode) else ""


def read_all(*, waiting: bool = True) -> Piped:
    """Stdin to its end, or LIMIT bytes; after SILENT seconds of silence, one line on stderr says what ga waits for."""
    fd = sys.stdin.fileno()
    if waiting and not select.select([fd], [], [], SILENT)[0]:
        print("ga: waiting for the input piped to ga to end (Ctrl-D ends typed input; </dev/null gives none)",
              file=sys.stderr, flush=True)
    chunks: list[bytes] = []
    size = 0
    while size < LIMIT and (chunk := os.read(fd, min(1 << 16, LIMIT - size))):
        size += len(chunk)
        chunks.append(chunk)
    cut = bool(os.environ.get(CUT_ENV)) or (size >= LIMIT and bool(os.read(fd, 1)))
    if cut and not os.environ.get(CUT_ENV):
        print(f"ga: the input piped to ga is longer than {LIMIT >> 20} MiB: only its first {LIMIT >> 20} MiB are "
              "read (give a larger input as a file path instead)", file=sys.stderr, flush=True)
    return Piped(data=b"".join(chunks), cut=cut)


@dataclass(kw_only=True)
class Piped:
    """What came on stdin, and what it is for."""

    data: bytes
    """The input (its first LIMIT bytes when `cut`)."""
    cut: bool = False
    """The input went on past LIMIT bytes, which were all that was read."""
    is_message: bool = False
    """The task (or the answer) itself, not context for one."""
    source: str = "a pipe"

    def for_child(self) -> tuple[bytes, dict[str, str]]:
        """What a --detach child gets on its stdin (the input as read here), and the environment that says a cut."""
        return self.data, ({**os.environ, CUT_ENV: "1"} if self.cut else dict(os.environ))

    def message(self, words: str, folder: Path, budget_tokens: int) -> str:
        """`words` (the task or the answer as given) with the piped text, capped to a share of the history budget;
        past the cap, the whole is saved in `folder` and named."""
        from ga.tooling.tokens import CHARS_PER_TOKEN  # not at import: the command line starts faster without it

        cap = max(2_000, budget_tokens // SHARE * CHARS_PER_TOKEN)
        if b"\0" in self.data[:8192]:
            saved = self._save(folder)
            return _join(words, f"[The input piped to ga is binary data ({len(self.data):,} bytes"
                                f"{', cut' if self.cut else ''}), saved as {saved}.]")
        text = self.data.decode("utf-8", errors="replace")
        lines = text.count("\n") + (not text.endswith("\n"))
        if not self.cut:
            if self.is_message and len(text) <= cap:
                return text.strip()
            if len(text) <= cap:
                return _join(words, f"[Input piped to ga ({lines:,} lines):]\n{_fenced(text)}")
        head, tail, size = text[: int(cap * HEAD)], text[-(cap - int(cap * HEAD)):], f"{len(self.data):,} bytes"
        saved = self._save(folder)
        head, tail = head[: head.rfind("\n") + 1] or head, tail[tail.find("\n") + 1:] or tail  # whole lines
        first = head.count("\n") + 1
        last = lines - tail.count("\n") - (not tail.endswith("\n")) + 1
        whole = (f"cut at {LIMIT >> 20} MiB, where ga stopped reading (give a larger input as a file path instead): "
                 f"{lines:,} lines read" if self.cut else f"{lines:,} lines, {size}")
        note = (f"[Input piped to ga: {whole}, too long to show whole. Lines 1-{first - 1} and {last}-{lines} follow; "
                f"all of {'what was read' if self.cut else 'it'} is in {saved} (file_read it for the rest).]")
        return _join(words, f"{note}\n{_fenced(head + f'[… lines {first}-{last - 1} left out …]' + chr(10) + tail)}")

    def _save(self, folder: Path) -> Path:
        """The whole input in the run folder (0600, secrets redacted like everything there): stdin.txt, stdin-2.txt."""
        n, path = 1, folder / "stdin.txt"
        while path.exists():
            n += 1
            path = folder / f"stdin-{n}.txt"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.writelines(_redacted(self._blocks()))
        return path

    def _blocks(self) -> Iterator[bytes]:
        yield from (self.data[i:i + _BLOCK] for i in range(0, len(self.data), _BLOCK))


def _redacted(blocks: Iterator[bytes]) -> Iterator[str]:
    """The text of `blocks`, redacted a stretch of whole lines at a time (a private key's PEM block whole: a stretch
    ending inside one waits for the rest, up to 1 MiB)."""
    from ga.tooling.redact import redact

    decoder, held = codecs.getincrementaldecoder("utf-8")(errors="replace"), ""
    for block in blocks:
        text = held + decoder.decode(block)
        cut = text.rfind("\n") + 1
        begin = text.rfind("-----BEGIN", 0, cut)
        if begin > text.rfind("-----END", 0, cut) and cut - begin < _BLOCK:
            cut = begin
        held = text[cut:]
        if cut:
            yield redact(text[:cut])
    yield redact(held + decoder.decode(b"", final=True))


def _join(words: str, block: str) -> str:
    return f"{words.strip()}\n\n{block}" if words.strip() else block


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


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
            piped = read_all(waiting=bool(source))
            if not piped.data.strip():
                raise ConfigError(f"The {name} read from stdin is empty.")
            setattr(args, name, "")
            piped.is_message, piped.source = True, source or "a terminal"
            return piped
    if not kind() or (args.resume and args.answer is None):
        return None
    piped = read_all()
    piped.source = kind()
    return piped if piped.data.strip() else None
