"""The final answer on stdout: Markdown rendered on a terminal, written as it is anywhere else (pipes, files, --raw).

An answer with no Markdown in it is written as it is on a terminal too: rendering plain text would only rewrap it
(joining its lines), and markdown-it and pygments are imported only for an answer that needs them.
"""

from __future__ import annotations

import re
from typing import TextIO

from rich.console import Console

from ga.cli.pipes import reader_gone
from ga.tooling import screen

MARKUP = re.compile(r"[*_`#>|<\[\]\\&~]|^[ \t]*(?:[-+]\s|\d{1,9}[.)]\s|={2,}[ \t]*$|-{2,}[ \t]*$)|^(?: {4}|\t)", re.M)
"""What makes an answer Markdown."""


def show_answer(out: TextIO, text: str, *, raw: bool) -> None:
    """Write the (redacted) answer to `out`; a terminal's gets the screen filter, and Markdown rendered."""
    fancy = out.isatty() and not raw
    text = screen.clean(text) if fancy else text
    try:
        if fancy and MARKUP.search(text):
            from rich.markdown import Markdown

            Console(file=out, highlight=False, emoji=False).print(Markdown(text))
        else:
            out.write(text + ("\n" if not text.endswith("\n") else ""))
            out.flush()
    except BrokenPipeError:  # `ga … | head -1`: the reader has what it wanted; the run is over anyway
        reader_gone(out, say=True)
