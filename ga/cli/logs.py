"""Log lines on the terminal: warnings, one line each; with -v also ga's own decisions (escalation, compaction, the
SOPs listed and why, permission verdicts), never a library's info or debug lines. While a run shows its spinners,
lines go through the Terminal, so they land above them."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

OWN = ("ga", "memory", "sop", "tools", "bench")  # ga's own loggers: the ones -v opens


class _Lines(logging.Handler):
    def __init__(self, verbose: bool):
        super().__init__()
        self.verbose = verbose
        self.sink: Callable[[str], None] = lambda line: print(line, file=sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING and record.name.split(".")[0] not in OWN:
            return  # a library's own chatter (bm25s sets its logger to DEBUG when imported): never shown
        try:
            text = record.getMessage()
            line = f"· {record.name.removeprefix('ga.')}: {text}" if record.levelno < logging.WARNING else f"ga: {text}"
            if record.exc_info and self.verbose:  # a trace only for who asked for details
                line += "\n" + logging.Formatter().formatException(record.exc_info)
            self.sink(line)
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


def show_on(sink: Callable[[str], None]) -> None:
    """Send log lines through `sink` (the Terminal's) from now on."""
    if _handler is not None:
        _handler.sink = sink
