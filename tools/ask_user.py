"""ask_user: the third escalation stage, a question to the human (asked through ga/tooling/human.py)."""

from __future__ import annotations

from ga.tooling.human import ask
from ga.tooling.permissions import SideEffect
from ga.tooling.spec import ToolContext, ToolResult, ToolSpec
from tools import schema

CANDIDATES = 8
"""Suggested answers at most. In the schema, so a server that decodes tool calls under the schema's grammar
(llama.cpp does) stops a small model that would list every region there is (it wrote 129 in one reply, 1,950
tokens and 300 s of a CPU server); the dispatcher refuses more from any other server."""


def ask_user(args: dict, ctx: ToolContext) -> ToolResult:
    return ask(args["question"], [str(c) for c in args.get("candidates") or []], ctx)


SPEC = ToolSpec(
    name="ask_user",
    description="Ask the human and wait for the answer. Only when blocked: missing facts, a decision that is "
    "theirs, or a changed strategy failed too.",
    parameters=schema("question", question={"type": "string", "minLength": 1},
                      candidates={"type": "array", "items": {"type": "string"}, "maxItems": CANDIDATES,
                                  "description": "suggested answers"}),
    side_effect=SideEffect.READ_ONLY, run=ask_user, concurrent=lambda args: False)
