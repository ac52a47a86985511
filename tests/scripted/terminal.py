"""A terminal nobody sits at, for tests and benchmarks: it answers from a list and records what it was shown.

It implements the whole UI seam (ga/protocols.py), so the real loop and the real tools can be driven in-process.
"""

from __future__ import annotations

from ga.protocols import ToolCall, ToolOutcome, Usage


class ScriptedTerminal:
    """Answers questions and approvals from `answers` in order (an approval's answer is the (decision, text) pair
    it returns); with none left, a question is an EOFError and an approval a rejection, as a closed stdin is."""

    def __init__(self, answers: list | None = None):
        self.answers = list(answers or [])
        self.asked: list[tuple] = []
        self.live_output: list[str] = []
        self.notices: list[str] = []
        self.stages: list[tuple[int, str]] = []
        self.text_seen: list[str] = []
        self.tools: list[tuple[str, str]] = []
        """(name, "start" | "ok" | "error") per tool event, in order."""
        self.turns = 0
        self.last_usage: Usage | None = None

    def turn(self, number: int) -> None:
        self.turns = number

    def text(self, chunk: str) -> None:
        self.text_seen.append(chunk)

    def retry(self, text: str) -> None:
        self.notices.append(text)

    def usage(self, usage: Usage) -> None:
        self.last_usage = usage

    def tool_start(self, call: ToolCall, args: dict) -> None:
        self.tools.append((call.name, "start"))

    def live(self, text: str) -> None:
        self.live_output.append(text)

    def tool_done(self, call: ToolCall, result: ToolOutcome) -> None:
        self.tools.append((call.name, "error" if result.is_error else "ok"))

    def stage(self, stage: int, why: str, previous: int) -> None:
        self.stages.append((stage, why))

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def ask(self, question: str, candidates: list[str]) -> str:
        self.asked.append(("ask", question, candidates))
        if not self.answers:
            raise EOFError("no answer: the scripted terminal has none left")
        return self.answers.pop(0)

    def human_seconds(self) -> float:
        return 0.0

    def approve(self, title: str, text: str, editable: str | None = None, remember: str = "") -> tuple[str, str]:
        self.asked.append(("approve", title, text))
        if not self.answers:
            return "reject", "nobody could answer"
        return self.answers.pop(0)
