"""Ordinary ends of a command that are no errors: the reader of ga's output went away (`ga … | head -1`)."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TextIO

EXIT_PIPE = 141
"""What a shell reports for a program ended by SIGPIPE (128 + 13), as `git log | head -1` leaves it."""


def reader_gone(stream: TextIO, *, say: bool = False) -> None:
    """The reader of `stream` closed its end: what is still to be written goes to /dev/null, so neither a later
    write nor Python's flush at exit raises or prints a traceback. `say`: one line on the terminal (when stderr is
    one) that the output was cut short, so a listing that stops early is not taken for the whole."""
    if say and stream is not sys.stderr:
        with contextlib.suppress(OSError, ValueError):
            if sys.stderr.isatty():
                print("ga: output cut short: its reader closed the pipe", file=sys.stderr, flush=True)
    with contextlib.suppress(OSError, ValueError):  # not a real file (a test's StringIO): nothing to redirect
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
