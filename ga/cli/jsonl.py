"""--jsonl: progress as one JSON object per line on stdout, for programs that drive ga (as `codex exec --json`).

It stands in for the Terminal (ga/cli/terminal.py) with the same methods. Events, in order of a run:

  {"type": "start", "run_id", "task", "model", "workdir", "mode", "resumed", "autonomous" (why, or null),
   "sandbox" (true/false), "sandbox_why"}
  {"type": "turn", "turn", "text"}                        a reply arrived (its text; tool calls follow)
  {"type": "usage", "requests", "prompt_tokens", "completion_tokens"}     totals so far
  {"type": "tool_start", "id", "name", "arguments"}
  {"type": "tool_end", "id", "name", "ok", "summary", "elapsed"}
  {"type": "stage", "stage", "reason"}                    an escalation stage change (0: reset)
  {"type": "notice", "text"}                              anything else worth a line (a retry, a restart)
  {"type": "end", "run_id", "status", "answer", "usage", "tool_calls", "exit_code"}   always last
"""

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
        return 0.0  # --jsonl never waits on a human at a prompt

    def emit(self, event: dict) -> None:
        try:
            self.out.write(json.dumps(redact_data(event), ensure_ascii=False, default=str) + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):  # the reader went away: the run goes on and stays on disk
            reader_gone(self.out, say=True)

    def started(self, *, run_id: str, task: str, model: str, workdir: str, mode: str, resumed: bool,
                model_settings: str = "default", check: str = "", autonomous: str = "", sandbox: bool = False,
                sandbox_why: str = "") -> None:
        self.emit({"type": "start", "run_id": run_id, "task": task, "model": model, "workdir": workdir,
                   "mode": mode, "resumed": resumed, "model_settings": model_settings, "check": check or None,
                   "autonomous": autonomous or None, "sandbox": sandbox, "sandbox_why": sandbox_why or None})

    def turn(self, number: int) -> None:
        """A request starts: its turn event comes when the reply is complete (usage)."""

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

    def info(self, text: str) -> None:
        """A line about the run itself (plan mode's confinement): a notice too."""
        self.notice(text)

    def live(self, text: str) -> None:
        """A program's output as it runs: kept out of the stream (tool_end summarises; the run folder has it all)."""

    def ask(self, question: str, candidates: list[str]) -> str:
        raise EOFError("no human reads --jsonl: the run pauses instead")

    def approve(self, title: str, text: str, editable: str | None = None, remember: str = "") -> tuple[str, str]:
        raise EOFError("no human reads --jsonl: changes needing approval are refused")

    def answer(self, status: str, text: str) -> None:
        """The final answer travels in the end event."""

    def close(self) -> None:
        """Nothing is under way on a stream of events."""

    def end(self, outcome: Outcome) -> None:
        self.emit({"type": "end", **outcome.as_json(), "exit_code": outcome.exit_code})
