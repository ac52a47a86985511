"""Where the outcome goes: the final answer on stdout (Markdown rendered on a terminal, as written anywhere else), and
the ordinary end that is no error: the reader of ga's output went away (`ga … | head -1`)."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from typing import TextIO

from ga.tooling import screen

EXIT_PIPE = 141
"""What a shell reports for a program ended by SIGPIPE (128 + 13), as `git log | head -1` leaves it."""
MARKUP = re.compile(r"[*_`#>|<\[\]\\&~]|^[ \t]*(?:[-+]\s|\d{1,9}[.)]\s|={2,}[ \t]*$|-{2,}[ \t]*$)|^(?: {4}|\t)", re.M)
"""What makes an answer Markdown: plain text is written as it is on a terminal too (rendering would rewrap it)."""


def reader_gone(stream: TextIO, *, say: bool = False) -> None:
    """The reader of `stream` closed its end: what is still to be written goes to /dev/null, so neither a later
    write nor Python's flush at exit raises. `say`: one line on a terminal's stderr that the output was cut short."""
    if say and stream is not sys.stderr:
        with contextlib.suppress(OSError, ValueError):
            if sys.stderr.isatty():
                print("ga: output cut short: its reader closed the pipe", file=sys.stderr, flush=True)
    with contextlib.suppress(OSError, ValueError):  # not a real file (a test's StringIO): nothing to redirect
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def show_answer(out: TextIO, text: str, *, raw: bool) -> None:
    """Write the (redacted) answer to `out`; a terminal's gets the screen filter, and Markdown rendered."""
    fancy = out.isatty() and not raw
    text = screen.clean(text) if fancy else text
    try:
        if fancy and MARKUP.search(text):
            from rich.console import Console
            from rich.markdown import Markdown

            Console(file=out, highlight=False, emoji=False).print(Markdown(text))
        else:
            out.write(text + ("\n" if not text.endswith("\n") else ""))
            out.flush()
    except BrokenPipeError:  # `ga … | head -1`: the reader has what it wanted; the run is over anyway
        reader_gone(out, say=True)
