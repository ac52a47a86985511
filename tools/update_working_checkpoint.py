"""update_working_checkpoint: a short notepad the model sees every turn, immune to history compaction."""

from __future__ import annotations

from ga.errors import ToolError
from ga.tooling.permissions import SideEffect
from ga.tooling.spec import ToolContext, ToolResult, ToolSpec
from ga.tooling.tokens import estimate as token_count
from tools import schema


def update_checkpoint(args: dict, ctx: ToolContext) -> ToolResult:
    text = args["key_info"].strip()
    limit = ctx.settings.checkpoint_tokens
    size = token_count(text)
    if size > limit:
        raise ToolError(
            f"Checkpoint not saved: it is about {size} tokens and the limit is {limit}. "
            "Keep only the goal, progress, key facts and next step, then call again."
        )
    previous = ctx.state.get("checkpoint", "")
    ctx.state["checkpoint"] = text
    return ToolResult(content=f"Checkpoint saved ({size} tokens).", details={"previous": previous})


SPEC = ToolSpec(
    name="update_working_checkpoint",
    description="Replace your notepad (≤200 tokens: goal, progress, key facts, next step). "
    "Shown every turn; kept when old history is dropped.",
    parameters=schema("key_info", key_info={"type": "string"}),
    side_effect=SideEffect.WRITE, run=update_checkpoint, state_only=True, deferred=True)
