"""Progress of provisioning on stderr: a bar per step with a time estimate (plain lines when not a terminal).

No step is silent: on a terminal its bar carries a spinner and the elapsed time, redrawn ten times a second; elsewhere
(a log, a detached run that `tail` follows) a line comes at least every HEARTBEAT seconds, also while one unit
takes long (a download of one file, the compiler on one source).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

HEARTBEAT = 5.0
"""Seconds a step may go without a line on a non-terminal before one says it is still at work."""


class Steps:
    def __init__(self, console: Console | None = None, *, heartbeat: float = HEARTBEAT):
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)
        self.heartbeat = heartbeat

    def note(self, text: str) -> None:
        self.console.print(f"· {escape(text)}", highlight=False)

    @contextmanager
    def step(self, name: str, total: int, *, unit: str = "") -> Iterator[Callable[[int], None]]:
        """A step of `total` units; yields advance(n). On a terminal a live bar with an estimate; elsewhere (a log,
        a detached run) a line at the start, at every tenth, at least every HEARTBEAT seconds, and at the end."""
        if not self.console.is_terminal:
            yield from self._lines(name, total)
            return
        count = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
        columns = [SpinnerColumn(), TextColumn(f"{escape(name):>14}"), BarColumn(), count, TimeElapsedColumn(),
                   TimeRemainingColumn()]
        with Progress(*columns, console=self.console) as bar:
            task = bar.add_task(name, total=total)
            yield lambda n: bar.advance(task, n)
            bar.update(task, completed=total)

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        """A wait with no units to count (another process's provisioning, a package manager): a heartbeat."""
        with self.step(what, 1):
            yield

    def _lines(self, name: str, total: int) -> Iterator[Callable[[int], None]]:
        started, done, shown, last = time.monotonic(), [0], [0], [time.monotonic()]
        lock, stopped = threading.Lock(), threading.Event()

        def say(line: str) -> None:
            with lock:
                last[0] = time.monotonic()
                self.console.print(line)

        def beat() -> None:  # a line every `heartbeat` seconds that nothing else was said: still at work
            while not stopped.wait(max(0.05, last[0] + self.heartbeat - time.monotonic())):
                if time.monotonic() - last[0] >= self.heartbeat:
                    say(f"· {name}: still at work ({time.monotonic() - started:.0f} s)")

        def advance(n: int) -> None:
            done[0] += n
            tenth = done[0] * 10 // max(1, total)
            if shown[0] < tenth < 10:
                shown[0] = tenth
                elapsed = time.monotonic() - started
                left = elapsed * (total - done[0]) / max(1, done[0])
                say(f"· {name}: {tenth * 10}% ({elapsed:.0f} s, about {left:.0f} s left)")

        say(f"· {name}: started")
        thread = threading.Thread(target=beat, name="ga-provision-heartbeat", daemon=True)
        thread.start()
        try:
            yield advance
        finally:
            stopped.set()
            thread.join()
        self.console.print(f"· {name}: done in {time.monotonic() - started:.0f} s")
