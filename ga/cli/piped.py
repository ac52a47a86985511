"""Input piped to ga. `cat app.log | ga "explain this error"`: the text goes to the model with the task, up to a cap;
past it, its start and end go, and the whole is saved in the run folder, named in the task. `ga -` (or `… | ga`
alone) reads the task itself from stdin; `--answer -` reads the answer. Only a pipe or a file is read, at most LIMIT
bytes; a cut input says so, to the user and to the model. A silent pipe gets one line on stderr saying ga waits."""

from __future__ import annotations

import argparse
import os
import select
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ga.errors import ConfigError

if TYPE_CHECKING:
    from ga.runs.folder import Run

SILENT = 2.0
"""Seconds a pipe may stay silent before ga says it is waiting for it."""
SHARE = 4
"""Piped text shown to the model: at most this fraction of the history budget."""
HEAD = 0.25
"""Of a cut input, the share shown from its start (the rest from its end: a log's error is at its end)."""
LIMIT = 16 << 20
CUT_ENV = "GA_PIPED_CUT"
"""Set by a --detach parent for its child when the input it passes on was cut."""


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
    """What came on stdin (its first LIMIT bytes when `cut`), and whether it is the task or answer itself."""

    data: bytes
    cut: bool = False
    is_message: bool = False

    def for_child(self) -> tuple[bytes, dict[str, str]]:
        """What a --detach child gets on its stdin (the input as read here), and the environment that says a cut."""
        return self.data, ({**os.environ, CUT_ENV: "1"} if self.cut else dict(os.environ))

    def join(self, run: Run, answer: str | None, budget_tokens: int, *, resume: bool) -> str | None:
        """The input joined to the resume's answer (returned) or to the run's task (saved in its state)."""
        if resume:
            return self.message(answer or "", run.folder, budget_tokens)
        given = run.state.get("task", "")
        run.state["task"] = self.message(given, run.folder, budget_tokens)
        what = "" if self.is_message else f" [with {len(self.data):,} bytes piped{', cut' if self.cut else ''}]"
        run.state["shown_task"] = (given if not self.is_message else run.state["task"])[:500] + what
        run.save_state()
        return answer

    def message(self, words: str, folder: Path, budget_tokens: int) -> str:
        """`words` with the piped text, capped to a share of the history budget; past the cap, the whole is saved
        in `folder` and named."""
        from ga.tooling.tokens import CHARS_PER_TOKEN  # not at import: the command line starts faster without it

        cap = max(2_000, budget_tokens // SHARE * CHARS_PER_TOKEN)
        if b"\0" in self.data[:8192]:
            return _join(words, f"[The input piped to ga is binary data ({len(self.data):,} bytes"
                                f"{', cut' if self.cut else ''}), saved as {self._save(folder)}.]")
        text = self.data.decode("utf-8", errors="replace")
        lines = text.count("\n") + (not text.endswith("\n"))
        if not self.cut and len(text) <= cap:
            return text.strip() if self.is_message else _join(words, f"[Input piped to ga ({lines:,} lines):]\n"
                                                                     f"{_fenced(text)}")
        head, tail = text[: int(cap * HEAD)], text[-(cap - int(cap * HEAD)):]
        head, tail = head[: head.rfind("\n") + 1] or head, tail[tail.find("\n") + 1:] or tail  # whole lines
        first = head.count("\n") + 1
        last = lines - tail.count("\n") - (not tail.endswith("\n")) + 1
        whole = (f"cut at {LIMIT >> 20} MiB, where ga stopped reading (give a larger input as a file path instead): "
                 f"{lines:,} lines read" if self.cut else f"{lines:,} lines, {len(self.data):,} bytes")
        note = (f"[Input piped to ga: {whole}, too long to show whole. Lines 1-{first - 1} and {last}-{lines} follow; "
                f"all of {'what was read' if self.cut else 'it'} is in {self._save(folder)} (file_read it for the "
                "rest).]")
        return _join(words, f"{note}\n{_fenced(head + f'[… lines {first}-{last - 1} left out …]' + chr(10) + tail)}")

    def _save(self, folder: Path) -> Path:
        """The whole input in the run folder (0600, secrets redacted like everything there): stdin.txt, stdin-2.txt."""
        n, path = 1, folder / "stdin.txt"
        while path.exists():
            n += 1
            path = folder / f"stdin-{n}.txt"
        from ga.tooling.redact import redact

        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(redact(self.data.decode("utf-8", errors="replace")))
        return path


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
    """Stdin when it has a use here: a task or an answer of "-" is read from it (becoming "" in `args`); a task, or
    a resume's answer, given while stdin is a pipe or a file gets it as context."""
    for name in ("task", "answer"):
        if getattr(args, name) == "-":
            source = kind()
            if not source and sys.stdin.isatty():
                print("ga: type the text, then Ctrl-D", file=sys.stderr, flush=True)
            piped = read_all(waiting=bool(source))
            if not piped.data.strip():
                raise ConfigError(f"The {name} read from stdin is empty.")
            setattr(args, name, "")
            piped.is_message = True
            return piped
    if not kind() or (args.resume and args.answer is None):
        return None
    piped = read_all()
    return piped if piped.data.strip() else None
