"""Progress of provisioning on stderr: a bar per step with a time estimate (plain lines when not a terminal)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


class Steps:
    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)

    def note(self, text: str) -> None:
        self.console.print(f"[yellow]![/] {escape(text)}")

    @contextmanager
    def step(self, name: str, total: int, *, unit: str = "") -> Iterator[Callable[[int], None]]:
        """A step of `total` units; yields advance(n). On a terminal a live bar with an estimate; elsewhere (a log,
        a detached run) a line at the start, at every tenth and at the end."""
        if not self.console.is_terminal:
            yield from self._lines(name, total)
            return
        count = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
        columns = [TextColumn(f"{escape(name):>14}"), BarColumn(), count,
                   TimeRemainingColumn(elapsed_when_finished=True)]
        with Progress(*columns, console=self.console) as bar:
            task = bar.add_task(name, total=total)
            yield lambda n: bar.advance(task, n)
            bar.update(task, completed=total)

    def _lines(self, name: str, total: int) -> Iterator[Callable[[int], None]]:
        started, done, shown = time.monotonic(), [0], [0]

        def advance(n: int) -> None:
            done[0] += n
            tenth = done[0] * 10 // max(1, total)
            if shown[0] < tenth < 10:
                shown[0] = tenth
                elapsed = time.monotonic() - started
                left = elapsed * (total - done[0]) / max(1, done[0])
                self.console.print(f"· {name}: {tenth * 10}% ({elapsed:.0f} s, about {left:.0f} s left)")

        self.console.print(f"· {name}: started")
        yield advance
        self.console.print(f"· {name}: done in {time.monotonic() - started:.0f} s")
