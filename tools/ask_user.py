"""ask_user: the third escalation stage, a question to the human."""

from __future__ import annotations

from ga import arguments
from ga.dispatch import ToolContext, ToolResult, ToolSpec
from ga.errors import Paused, ToolError
from ga.permissions import SideEffect


class WaitingForAnswer(Paused):
    """Autonomous mode: the run pauses until `--resume RUN_ID --answer "..."`."""

    def __init__(self, question: str, candidates: list[str]):
        options = "".join(f"\n  {i}. {c}" for i, c in enumerate(candidates, 1))
        super().__init__(f"The agent asks: {question}{options}")
        self.question = question
        self.candidates = candidates


def candidates_of(raw: str | dict | None) -> list[str]:
    """The candidates of a recorded ask_user call, read the way the dispatcher read them (quirks repaired)."""
    try:
        args = arguments.repair(arguments.parse(raw, "ask_user"), SPEC.parameters)
    except ToolError:
        return []
    candidates = args.get("candidates")
    return [str(c) for c in candidates] if isinstance(candidates, list) else []


def answer_result(answer: str, candidates: list[str]) -> ToolResult:
    text = answer.strip()
    if text not in candidates and text.isdigit() and 1 <= int(text) <= len(candidates):
        text = candidates[int(text) - 1]
    return ToolResult(content=f"The user answered: {text}", details={"answer": text})


def ask_user(args: dict, ctx: ToolContext) -> ToolResult:
    candidates = [str(c) for c in args.get("candidates") or []]
    if not ctx.interactive:
        raise WaitingForAnswer(args["question"], candidates)
    return answer_result(ctx.ui.ask(args["question"], candidates), candidates)


SPEC = ToolSpec(
    name="ask_user",
    description="Ask the human and wait for the answer. Only when blocked: missing facts, a decision that is "
    "theirs, or a changed strategy failed too.",
    parameters={
        "type": "object",
        "properties": {
            "question": {"type": "string", "minLength": 1},
            "candidates": {"type": "array", "items": {"type": "string"}, "description": "suggested answers"},
        },
        "required": ["question"],
        "additionalProperties": False,
    },
    side_effect=SideEffect.READ_ONLY,
    run=ask_user,
    concurrent=lambda args: False,
)
