"""Asking the human: on a terminal ga waits for the answer; in autonomous mode the run pauses until one comes.

The ask_user tool and stage 3 of the escalation ask through here; --confirm's approval pauses the same way."""

from __future__ import annotations

from ga.errors import Paused, ToolError
from ga.tooling import arguments
from ga.tooling.spec import ToolContext, ToolResult

_CANDIDATES = {"properties": {"candidates": {"type": "array"}}}
AWAITED = "approval_awaited"
"""Tool state: the id of the call whose approval (--confirm) the human left with Ctrl-D; it never ran, so a resume
asks again."""


class WaitingForAnswer(Paused):
    """Autonomous mode: the run pauses until `--resume RUN_ID --answer "..."`."""

    def __init__(self, question: str, candidates: list[str]):
        options = "".join(f"\n  {i}. {c}" for i, c in enumerate(candidates, 1))
        super().__init__(f"The agent asks: {question}{options}")
        self.question = question
        self.candidates = candidates


class ApprovalPaused(Paused):
    """Ctrl-D at a --confirm approval: the run pauses there, as at a question; resumed on a terminal, it asks again."""


def candidates_of(raw: str | dict | None) -> list[str]:
    """The candidates of a recorded ask_user call, read the way the dispatcher read them (quirks repaired)."""
    try:
        args = arguments.repair(arguments.parse(raw, "ask_user"), _CANDIDATES)
    except ToolError:
        return []
    candidates = args.get("candidates")
    return [str(c) for c in candidates] if isinstance(candidates, list) else []


def answer_result(answer: str, candidates: list[str], mail: str | None = None) -> ToolResult:
    """The human's answer as a tool result; a number picks that candidate. `mail`: the mailbox message it came in."""
    text = answer.strip()
    if text not in candidates and text.isdigit() and 1 <= int(text) <= len(candidates):
        text = candidates[int(text) - 1]
    details = {"answer": text, "mail": mail} if mail else {"answer": text}
    return ToolResult(content=f"The user answered: {text}", details=details)


def ask(question: str, candidates: list[str], ctx: ToolContext) -> ToolResult:
    """Ask and wait (terminal), or raise WaitingForAnswer (autonomous, or the human ended input with Ctrl-D)."""
    if not ctx.interactive:
        raise WaitingForAnswer(question, candidates)
    try:
        return answer_result(ctx.ui.ask(question, candidates), candidates)
    except EOFError:  # the run pauses, resumable with the answer, as an autonomous one does
        raise WaitingForAnswer(question, candidates) from None
