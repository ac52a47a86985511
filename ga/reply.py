"""What one model reply becomes: the assistant message kept in history, and the guard against unusable replies."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field

from ga import escalation
from ga.errors import AgentStop
from ga.model.text_calls import is_debris, text_calls
from ga.prompts import render
from ga.protocols import Reply, ToolCall
from ga.tooling.dispatch import MAX_CALLS_PER_REPLY
from ga.tooling.spec import ToolResult

_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
STRIKES = 3
CUT_FINISHES = frozenset({"length", "content_filter", "repetition"})
"""Finish reasons after which a reply's tool calls are not whole: they are not run."""

CUT_CALLS = ("Not run: your reply was cut by the length limit, so its tool-call arguments are incomplete. "
             "Re-issue the calls complete; write large content in parts (file_write, then mode=append).")
CUT_TEXT = "Your reply was cut by the length limit. Continue exactly where it stopped, more concisely."
FILTERED = ("Your reply was stopped by the server's content filter (finish_reason content_filter); nothing of it "
            "was used. Continue another way, wording it differently.")
LOOPED = ("Your reply was stopped: it kept repeating the same text, so nothing of it was run. Do not write it "
          "again; produce repeated or generated content with code_run (a loop), and keep each reply short.")
EMPTY = "Your reply was empty. Call a tool, or give your final answer as text."
RUNTIME_NOTES = (EMPTY, CUT_TEXT, CUT_CALLS, FILTERED, LOOPED)
"""Nudges the loop sends as the user: a hand-off never carries them as the user's own words."""
MALFORMED = "Your tool calls had malformed arguments."  # only named in the stop message: the dispatcher explains
_SAID = {EMPTY: "an empty reply", CUT_TEXT: "a reply cut by the length limit", CUT_CALLS: "a reply cut by the length "
         "limit", FILTERED: "a reply stopped by the server's content filter", LOOPED: "a reply repeating itself"}
"""Each nudge as the stop message tells the human about it."""
DOUBT = ("Your reply has no tool call, so it would end the task, but {why}. If the task is done, reply with the "
         "final answer: what you did and the result. Otherwise call a tool to continue.")
TOO_MANY = ("Only the first {limit} of your {asked} tool calls were run; the other {rest} were not. Call again "
            "for those still needed, at most {limit} per reply.")
_PROMISE = re.compile(r"\b(?:I will|I'll|I am going to|let me|here(?:'s| is) the (?:updated|corrected|new) "
                      r"(?:command|call|code))\b", re.IGNORECASE)
"""A reply announcing a step (small models often do, right after an error) rather than reporting a result."""
_ASKS = re.compile(r"\b(?:(?:could|can|would) you (?:please )?(?:provide|give|share|clarify|specify|tell me)|"
                   r"I need (?:more|the|some) (?:information|details|context|instructions)|"
                   r"what (?:would you like|do you want) me to do)\b", re.IGNORECASE)
"""A reply asking for the task it was given (a small model after an empty reply: "I need more information to
assist you. Could you please provide..."): the task is in the conversation, and what only the user knows is
asked with ask_user, which also pauses an autonomous run instead of ending it."""
_NULL = re.compile(r"[`'\"]*(?:none|null|nil|undefined)[`'\".!]*", re.IGNORECASE)
"""A reply that is a null value: a small model after an empty reply writes its reply's Python repr, "None"."""
_RUNTIME_PIECE = re.compile(r"[^.:;,()\[\]{}$\n]{20,}")
"""Sentence pieces of ga's own instructions: a reply holding one echoes them instead of answering."""


class UnusableReplies(AgentStop):
    status = "failed"
    exit_code = 1


class Guard:
    """Counts consecutive unusable turns (empty reply, reply cut by the length limit, only malformed tool calls).

    The `strikes`-th in a row ends the run; 0 means no limit. Malformed means the dispatcher refused the
    arguments (details["stage"] == "arguments": not JSON, or failing the schema); its error is the nudge.
    """

    def __init__(self, state: dict, strikes: int = STRIKES, *, doubt: bool = False):
        self.state = state
        self.strikes = strikes
        self.doubt = doubt
        """Doubt a reply that does not read as an answer, once (ModelSettings.doubt_answers: small models only)."""
        self.kind = ""
        """The last nudge's kind (empty, cut, filtered, loop, doubt), recorded as a typed event."""

    def check(self, reply: Reply) -> str | None:
        """Before dispatch: the nudge for an empty, cut, filtered or doubtful reply (None if it is usable)."""
        if reply.finish_reason == "repetition":
            nudge = LOOPED
        elif reply.finish_reason == "length":
            nudge = CUT_CALLS if reply.tool_calls else CUT_TEXT
        elif reply.finish_reason == "content_filter":
            nudge = FILTERED
        elif not reply.tool_calls and not reply.content.strip():
            nudge = EMPTY
        elif self.doubt and not reply.tool_calls and not self.state.get("doubted") and (
                why := not_an_answer(reply.content, after_failure=self.state.get("failed_last", False))):
            self.state["doubted"] = True  # one nudge: the same kind of reply next counts as the answer
            self.kind = "doubt"
            return DOUBT.format(why=why)
        else:
            return None
        self.kind = {LOOPED: "loop", FILTERED: "filtered", EMPTY: "empty"}.get(nudge, "cut")
        advice = {EMPTY: "Try another model.", FILTERED: "The server's content filter refuses this task.",
                  LOOPED: "The model repeats itself: try another model or a lower temperature."}
        self._strike(nudge, advice.get(nudge, "Try a larger max output length (GA_MAX_OUTPUT_TOKENS) or "
                                              "another model."))
        return nudge

    def after_calls(self, results: list[ToolResult]) -> None:
        """After dispatch: a turn whose calls were all malformed is a strike; any other turn resets the count."""
        self.state.pop("doubted", None)
        self.state["failed_last"] = bool(results) and all(r.is_error for r in results)
        if results and all(r.details.get("stage") == "arguments" for r in results):
            self._strike(MALFORMED, "Try another model, or one with better tool-calling support.")
        else:
            self.state["strikes"] = 0

    def _strike(self, nudge: str, advice: str) -> None:
        self.state["strikes"] = self.state.get("strikes", 0) + 1
        if self.strikes and self.state["strikes"] >= self.strikes:
            self.state["strikes"] = 0  # a resumed run gets fresh strikes
            raise UnusableReplies(f"The model gave {self.strikes} unusable replies in a row (the last: "
                                  f"{_SAID.get(nudge, 'tool calls with malformed arguments')}); stopping. {advice}")


def not_an_answer(content: str, *, after_failure: bool = False) -> str | None:
    """Why a reply without tool calls does not read as a final answer (None when it does). A single word right
    after a turn whose calls all failed (" impossible") is a give-up, not a result; elsewhere ("42") it may be."""
    text = " ".join(content.split())
    if is_debris(text):
        return "it holds no text, only stray brackets or tags"
    if _NULL.fullmatch(text):
        return f"it is only {text!r}, a null value rather than an answer"
    if len(text.split()) < 2 and after_failure:
        return f"it is only {text!r}"
    if after_failure and _PROMISE.search(text):
        return "it says what you will do next, but calls no tool to do it"
    if _ASKS.search(text):
        return ("it asks for details instead of giving a result (the task is in the first user message; a fact "
                "only the user knows is asked with ask_user)")
    lowered = text.lower()
    if any(piece in lowered for piece in _runtime_pieces()):
        return "it repeats ga's own instructions instead of giving a result"
    return None


@functools.cache
def _runtime_pieces() -> tuple[str, ...]:
    texts = [render("system.md"), CUT_CALLS, CUT_TEXT, FILTERED, LOOPED, EMPTY, DOUBT, TOO_MANY, escalation.HINT_1,
             escalation.HINT_2, escalation.HINT_2_AGAIN, escalation.HINT_3, escalation.LOOP]
    pieces = {p.strip().lower() for t in texts for p in _RUNTIME_PIECE.findall(t.replace("{", "\n{"))}
    return ("escalation stage", *(p for p in pieces if len(p) >= 20))


@dataclass(kw_only=True)
class Tidied:
    """What tidy() changed in a reply, for the trajectory and the model."""

    events: list[dict] = field(default_factory=list)
    """Trajectory events saying what was done (calls taken from text, calls not run)."""
    not_run: str = ""
    """The note for the model when calls past MAX_CALLS_PER_REPLY were dropped."""
    notices: list[str] = field(default_factory=list)
    """Lines for the terminal."""


def tidy(reply: Reply, known: set[str] | dict, *, read_text_calls: bool = False) -> Tidied:
    """Make a reply usable as sent: calls past MAX_CALLS_PER_REPLY are cut off; with read_text_calls (a small model's
    settings: ModelSettings.text_calls) calls written as text become calls and streamed debris beside calls goes."""
    done = Tidied()
    calls = text_calls(reply.content, known) if read_text_calls and not reply.tool_calls else []
    if calls and reply.finish_reason not in CUT_FINISHES:
        done.events.append({"type": "notice", "kind": "text_calls", "calls": len(calls), "text": reply.content})
        done.notices.append(f"the reply wrote {len(calls)} tool call(s) as text; running them")
        reply.tool_calls, reply.content, reply.finish_reason = calls, "", "tool_calls"
    elif read_text_calls and reply.tool_calls and reply.content and is_debris(reply.content):
        done.events.append({"type": "notice", "kind": "debris", "text": reply.content})
        reply.content = ""
    asked = len(reply.tool_calls)
    if asked > MAX_CALLS_PER_REPLY:
        reply.tool_calls = reply.tool_calls[:MAX_CALLS_PER_REPLY]
        done.not_run = TOO_MANY.format(limit=MAX_CALLS_PER_REPLY, asked=asked, rest=asked - MAX_CALLS_PER_REPLY)
        done.events.append({"type": "notice", "kind": "too_many_calls", "asked": asked,
                            "run": MAX_CALLS_PER_REPLY})
        done.notices.append(f"the reply asked for {asked} tool calls; running the first {MAX_CALLS_PER_REPLY}")
    return done


def _arguments_text(arguments: str | dict | None) -> str:
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    try:
        json.loads(arguments or "")
    except (json.JSONDecodeError, RecursionError):
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
