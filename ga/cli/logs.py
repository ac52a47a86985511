"""Log lines on the terminal. By default only warnings, one line each; with -v also ga's own decisions (escalation,
compaction, the SOPs listed and why, permission verdicts, the client's fallbacks), never a library's info or debug
lines (httpx, openai; bm25s, which sets its own logger to DEBUG).

While a run shows a live region (spinners), lines go through the Terminal, so they land above it rather than
through it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

OWN = ("ga", "memory", "sop", "tools", "bench")
"""ga's own loggers: the ones -v opens."""


class _Lines(logging.Handler):
    def __init__(self, verbose: bool):
        super().__init__()
        self.verbose = verbose
        self.sink: Callable[[str], None] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING and record.name.split(".")[0] not in OWN:
            return  # a library's own chatter (bm25s sets its logger to DEBUG when imported): never shown
        try:
            text = record.getMessage()
            line = f"· {record.name.removeprefix('ga.')}: {text}" if record.levelno < logging.WARNING else f"ga: {text}"
            if record.exc_info and self.verbose:  # a trace only for who asked for details
                line += "\n" + logging.Formatter().formatException(record.exc_info)
            if self.sink is not None:
                self.sink(line)
            else:
                sys.stderr.write(line + "\n")
        except Exception:  # logging must never end the run
            self.handleError(record)


_handler: _Lines | None = None


def configure(verbose: bool) -> None:
    """One handler on the root logger: warnings from anyone; with `verbose`, INFO from ga's own loggers."""
    global _handler
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    _handler = _Lines(verbose)
    root.addHandler(_handler)
    root.setLevel(logging.WARNING)
    for name in OWN:
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.NOTSET)


def show_on(sink: Callable[[str], None] | None) -> None:
    """Send log lines through `sink` (the Terminal's) from now on; None: straight to stderr again."""
    if _handler is not None:
        _handler.sink = sink
