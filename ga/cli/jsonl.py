"""--jsonl: progress as one JSON object per line on stdout, for programs that drive ga (as `codex exec --json`). It
stands in for the Terminal; its events (start ... end, always last) are listed in docs/cli.md."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, TextIO

from ga.cli.pipes import reader_gone
from ga.tooling.redact import redact_data

if TYPE_CHECKING:
    from ga.outcome import Outcome
    from ga.protocols import ToolCall, Usage
    from ga.tooling.spec import ToolResult

SUMMARY_CHARS = 200


def _summary(content: str) -> str:
    line = next((line.strip() for line in content.splitlines() if line.strip()), "")
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


class JsonlSink:
    def __init__(self, out: TextIO | None = None):
        self.out = out or sys.stdout
        self._text: list[str] = []

    def human_seconds(self) -> float:
        return 0.0  # no human at a prompt

    def emit(self, event: dict) -> None:
        try:
            self.out.write(json.dumps(redact_data(event), ensure_ascii=False, default=str) + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):  # the reader went away: the run goes on and stays on disk
            reader_gone(self.out, say=True)

    def started(self, *, check: str = "", autonomous: str = "", sandbox_why: str = "", **header: object) -> None:
        """The run's header (Terminal.started's keywords); what is not given is null."""
        self.emit({"type": "start", **header, "check": check or None, "autonomous": autonomous or None,
                   "sandbox_why": sandbox_why or None})

    def text(self, chunk: str) -> None:
        self._text.append(chunk)

    def retry(self, text: str) -> None:
        """The reply's text comes again from the start."""
        self._text.clear()
        self.emit({"type": "notice", "text": text})

    def usage(self, usage: Usage) -> None:
        """Called once per reply, right after it arrived: the turn, then the running totals."""
        self.emit({"type": "turn", "turn": usage.requests, "text": "".join(self._text)})
        self._text.clear()
        self.emit({"type": "usage", **asdict(usage)})

    def tool_start(self, call: ToolCall, args: dict) -> None:
        self.emit({"type": "tool_start", "id": call.id, "name": call.name, "arguments": args})

    def tool_done(self, call: ToolCall, result: ToolResult) -> None:
        self.emit({"type": "tool_end", "id": call.id, "name": call.name, "ok": not result.is_error,
                   "summary": _summary(result.content), "elapsed": result.details.get("elapsed")})

    def stage(self, stage: int, reason: str, previous: int) -> None:
        self.emit({"type": "stage", "stage": stage, "reason": reason})

    def notice(self, text: str, *, error: bool = False) -> None:
        self.emit({"type": "notice", "text": text})

    info = notice

    def _nothing(self, *args: object) -> None:
        """Not an event: a request starting (its turn comes with its usage), a program's output as it runs (tool_end
        sums it up; the run folder has it all), the answer (the end event carries it), closing."""

    turn = live = answer = close = _nothing

    def ask(self, question: str, candidates: list[str]) -> str:
        raise EOFError("no human reads --jsonl: the run pauses instead")

    def approve(self, title: str, text: str, editable: str | None = None, remember: str = "") -> tuple[str, str]:
        raise EOFError("no human reads --jsonl: changes needing approval are refused")

    def end(self, outcome: Outcome) -> None:
        self.emit({"type": "end", **outcome.as_json(), "exit_code": outcome.exit_code})
