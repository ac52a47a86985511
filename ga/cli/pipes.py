"""Ordinary ends of a command that are no errors: the reader of ga's output went away (`ga … | head -1`)."""

from __future__ import annotations

import contextlib
import os
from typing import TextIO

EXIT_PIPE = 141
"""What a shell reports for a program ended by SIGPIPE (128 + 13), as `git log | head -1` leaves it."""


def reader_gone(stream: TextIO) -> None:
    """The reader of `stream` closed its end: what is still to be written goes to /dev/null, so neither a later
    write nor Python's flush at exit raises or prints a traceback."""
    with contextlib.suppress(OSError, ValueError):  # not a real file (a test's StringIO): nothing to redirect
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
