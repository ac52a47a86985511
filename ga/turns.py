"""What one model reply becomes: the assistant message kept in history, and the guard against unusable replies."""

from __future__ import annotations

import json
import re

from ga.dispatch import ToolResult
from ga.errors import AgentStop
from ga.protocols import Reply, ToolCall

_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
STRIKES = 3

CUT_CALLS = ("Not run: your reply was cut by the length limit, so its tool-call arguments are incomplete. "
             "Re-issue the calls complete; write large content in parts (file_write, then mode=append).")
CUT_TEXT = "Your reply was cut by the length limit. Continue exactly where it stopped, more concisely."
EMPTY = "Your reply was empty. Call a tool, or give your final answer as text."
MALFORMED = "Your tool calls had malformed arguments."  # only named in the stop message: the dispatcher explains


class UnusableReplies(AgentStop):
    status = "failed"
    exit_code = 1


class Guard:
    """Counts consecutive unusable turns (empty reply, reply cut by the length limit, only malformed tool calls).

    The `strikes`-th in a row ends the run; 0 means no limit. Malformed means the dispatcher refused the
    arguments (details["stage"] == "arguments": not JSON, or failing the schema); its error is the nudge.
    """

    def __init__(self, state: dict, strikes: int = STRIKES):
        self.state = state
        self.strikes = strikes

    def check(self, reply: Reply) -> str | None:
        """Before dispatch: the nudge for an empty or cut reply (None if the reply is usable so far)."""
        if reply.finish_reason == "length":
            nudge = CUT_CALLS if reply.tool_calls else CUT_TEXT
        elif not reply.tool_calls and not reply.content.strip():
            nudge = EMPTY
        else:
            return None
        self._strike(nudge, "Try a larger max output length or another model." if nudge != EMPTY else
                     "Try another model.")
        return nudge

    def after_calls(self, results: list[ToolResult]) -> None:
        """After dispatch: a turn whose calls were all malformed is a strike; any other turn resets the count."""
        if results and all(r.details.get("stage") == "arguments" for r in results):
            self._strike(MALFORMED, "Try another model, or one with better tool-calling support.")
        else:
            self.state["strikes"] = 0

    def _strike(self, nudge: str, advice: str) -> None:
        self.state["strikes"] = self.state.get("strikes", 0) + 1
        if self.strikes and self.state["strikes"] >= self.strikes:
            self.state["strikes"] = 0  # a resumed run gets fresh strikes
            raise UnusableReplies(f"The model gave {self.strikes} unusable replies in a row "
                                  f"(last: {nudge.split('.', maxsplit=1)[0].lower()}); stopping. {advice}")


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
    """Give every call a safe id unique in the run: some servers send none, reuse "call_0" every turn, or send
    ids that are no use as a file name (full outputs are saved under the call's id)."""
    taken = {c.id for c in calls if c.id} | set(used)  # a replacement never takes an id the server sent
    seen: set[str] = set()
    for i, call in enumerate(calls):
        if not _SAFE_ID.fullmatch(call.id or "") or call.id in used or call.id in seen:
            call.id, n = f"call_{turn}_{i}", 0
            while call.id in taken or call.id in seen:
                n += 1
                call.id = f"call_{turn}_{i}_{n}"
        seen.add(call.id)
