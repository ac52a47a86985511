"""What one model reply becomes: the assistant message kept in history, and the guard against unusable replies."""

from __future__ import annotations

import json

from ga.errors import AgentStop
from ga.protocols import Reply, ToolCall

STRIKES = 3

CUT_CALLS = ("Not run: your reply was cut by the length limit, so its tool-call arguments are incomplete. "
             "Re-issue the calls complete; write large content in parts (file_write, then mode=append).")
CUT_TEXT = "Your reply was cut by the length limit. Continue exactly where it stopped, more concisely."
EMPTY = "Your reply was empty. Call a tool, or give your final answer as text."


class UnusableReplies(AgentStop):
    status = "failed"
    exit_code = 1


class Guard:
    """Counts consecutive unusable replies (empty, cut by the length limit); the third ends the run."""

    def __init__(self, state: dict):
        self.state = state

    def check(self, reply: Reply) -> str | None:
        if reply.finish_reason == "length":
            nudge = CUT_CALLS if reply.tool_calls else CUT_TEXT
        elif not reply.tool_calls and not reply.content.strip():
            nudge = EMPTY
        else:
            self.state["strikes"] = 0
            return None
        self.state["strikes"] = self.state.get("strikes", 0) + 1
        if self.state["strikes"] >= STRIKES:
            raise UnusableReplies(
                f"The model gave {STRIKES} unusable replies in a row (last: {nudge.split('.')[0].lower()}); "
                "stopping. Try a larger max output length or another model.")
        return nudge


def _arguments_text(arguments: str | dict | None) -> str:
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    try:
        json.loads(arguments or "")
    except json.JSONDecodeError:
        return "{}"  # some servers refuse a history holding malformed JSON; the error result echoes the raw text
    return arguments or "{}"


def assistant_message(reply: Reply, *, drop_arguments: bool = False) -> dict:
    message: dict = {"role": "assistant", "content": reply.content or ""}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": "{}" if drop_arguments else _arguments_text(c.arguments)}}
            for c in reply.tool_calls
        ]
    return message


def unique_ids(calls: list[ToolCall], used: dict, turn: int) -> None:
    """Give every call an id unique in the run: some servers send none, or reuse "call_0" every turn."""
    seen: set[str] = set()
    for i, call in enumerate(calls):
        if not call.id or call.id in used or call.id in seen:
            call.id = f"call_{turn}_{i}"
        seen.add(call.id)
