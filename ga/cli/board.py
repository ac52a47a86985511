"""The live region at the bottom of a terminal: the tail of the reply being streamed, then a spinner line with the
elapsed time per thing under way. rich's Live redraws it ten times a second from the Terminal's state."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from ga.protocols import ToolCall
from ga.tooling import screen
from ga.tooling.arguments import summarize

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def call_line(call: ToolCall, args: dict | None = None, limit: int = 70) -> Text:
    """`name key=value …`, cleaned: a name like `oops[/]` is shown as written."""
    line = Text(screen.one_line(call.name, 60), style="bold")
    summary = screen.one_line(summarize(args or call.arguments, limit), limit)
    return line.append(f" {summary}" if summary else "", style="")


@dataclass
class Running:
    """One tool under way: its line, its start, whether the line was printed, its output after the last newline."""

    line: Text
    started: float = field(default_factory=time.monotonic)
    header: bool = False
    partial: str = ""


class Board:
    """Drawn from the Terminal's state: its running tools, the request it waits for, its reply, whether quiet."""

    def __init__(self, terminal: Any):
        self.t = terminal

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        t, now = self.t, time.monotonic()
        frame = FRAMES[int(now * 10) % len(FRAMES)]
        rows: list[Text] = []
        for running in list(t.running.values()):
            took = Text(f" · {now - running.started:.0f}s", style="dim")
            rows.append(Text.assemble((frame, "cyan"), " ", running.line, took, no_wrap=True, overflow="ellipsis"))
            if running.partial:
                rows.append(Text(f"  {running.partial}", style="dim", no_wrap=True, overflow="ellipsis"))
        if t.waiting is not None and not t.running:
            label = "writing" if t.reply else "waiting for the model"
            rows.append(Text.assemble((frame, "cyan"), f" {label} · {now - t.waiting:.0f}s", style="dim"))
        room = max(1, options.size.height - len(rows) - 2)
        if t.reply and not t.quiet:
            lines = Text(t.reply.rstrip("\n"), style="dim").wrap(console, options.max_width)
            yield from list(lines)[-room:]
        yield from rows
