"""What one model reply becomes: the assistant message kept in history, what makes a reply unusable, and whether a
reply without calls reads as an answer. The counting (strikes, doubts) is ga/escalation.py's."""

from __future__ import annotations

import functools
import json
import re

from ga.errors import AgentStop
from ga.model.text_calls import is_debris, text_calls
from ga.prompts import render
from ga.protocols import Reply, ToolCall

_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
CUT_FINISHES = frozenset({"length", "content_filter", "repetition"})
"""Finish reasons after which a reply's tool calls are not whole: they are not run."""

CUT_CALLS = ("Not run: your reply was cut by its length or time limit, so its tool-call arguments are incomplete. "
             "Re-issue the calls complete; write large content in parts (file_write, then mode=append).")
CUT_TEXT = "Your reply was cut by its length or time limit. Continue exactly where it stopped, more concisely."
FILTERED = ("Your reply was stopped by the server's content filter (finish_reason content_filter); nothing of it "
            "was used. Continue another way, wording it differently.")
LOOPED = ("Your reply was stopped: it kept repeating the same text, so nothing of it was run. Do not write it "
          "again; produce repeated or generated content with code_run (a loop), and keep each reply short.")
EMPTY = "Your reply was empty. Call a tool, or give your final answer as text."
RUNTIME_NOTES = (EMPTY, CUT_TEXT, CUT_CALLS, FILTERED, LOOPED)
"""Nudges the loop sends as the user: a hand-off never carries them as the user's own words."""
UNUSABLE = {"empty": ("an empty reply", "Try another model."),
            "cut": ("a reply cut by its length or time limit",
                    "Try a larger max output length (GA_MAX_OUTPUT_TOKENS), a longer --max-time or another model."),
            "filtered": ("a reply stopped by the server's content filter",
                         "The server's content filter refuses this task."),
            "loop": ("a reply repeating itself", "The model repeats itself: try another model or a lower temperature."),
            "malformed": ("tool calls with malformed arguments",
                          "Try another model, or one with better tool-calling support.")}
"""Each kind of unusable reply: what the stop message calls it, and the advice it gives."""
DOUBT = ("Your reply has no tool call, so it would end the task, but {why}. If the task is done, reply with the "
         "final answer: what you did and the result. Otherwise call a tool to continue.")
_PROMISE = re.compile(r"\b(?:I will|I'll|I am going to|let me|here(?:'s| is) the (?:updated|corrected|new) "
                      r"(?:command|call|code))\b", re.IGNORECASE)
"""A reply announcing a step (small models often do, right after an error) rather than reporting a result."""
_ASKS = re.compile(r"\b(?:(?:could|can|would) you (?:please )?(?:provide|give|share|clarify|specify|tell me|confirm)|"
                   r"please (?:provide|specify|clarify|confirm|share)|"
                   r"I need (?:more|the|some) (?:information|details|context|instructions)|"
                   r"what (?:would you like|do you want) me to do)\b", re.IGNORECASE)
"""A reply asking the user for something ("I need more information to assist you. Could you please provide..."):
a final answer that only does that is the question it is, asked as ask_user asks (ga/agent.py)."""
_CLAIM = re.compile(r"\b(written|wrote|saved|updated|created|renamed|appended|added|inserted|replaced|changed|"
                    r"modified|edited|deleted|removed|moved|copied|fixed|converted|sorted|stored|generated)\b",
                    re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:not|no|never|nothing|none|cannot|can't|couldn't|didn't|wasn't|weren't|haven't|hasn't|"
                      r"without|unable|failed)\b[^.!?\n]*$", re.IGNORECASE)
"""A negation earlier in the same sentence: "nothing was written" claims no change."""
_NULL = re.compile(r"[`'\"]*(?:none|null|nil|undefined)[`'\".!]*", re.IGNORECASE)
"""A reply that is a null value: a small model after an empty reply writes its reply's Python repr, "None"."""
_RUNTIME_PIECE = re.compile(r"[^.:;,()\[\]{}$\n]{20,}")
"""Sentence pieces of ga's own instructions: a reply holding one echoes them instead of answering."""


class UnusableReplies(AgentStop):
    """`strikes` unusable replies in a row: the run ends failed."""


def unusable(reply: Reply) -> tuple[str, str] | None:
    """(kind, nudge) of a reply that cannot be used as sent: stopped repeating itself, cut by the length limit,
    stopped by the content filter, or empty. None: a usable reply."""
    if reply.finish_reason == "repetition":
        return "loop", LOOPED
    if reply.finish_reason == "length":
        return "cut", CUT_CALLS if reply.tool_calls else CUT_TEXT
    if reply.finish_reason == "content_filter":
        return "filtered", FILTERED
    if not reply.tool_calls and not reply.content.strip():
        return "empty", EMPTY
    return None


class NoAnswer(AgentStop):
    """The final reply holds no answer (a null value, stray brackets): the run fails; it never ends done on it."""


def final_answer(content: str) -> str:
    """The final reply's text, unless it is no answer at all (NoAnswer): empty, a null value, or only brackets or
    tags. Asked under the settings that doubt answers (ModelSettings.doubt_answers: small models), after the doubt
    (ga/escalation.py): a reply that came back the same is no result. A capable model's "None" may be the answer."""
    text = " ".join(content.split())
    if not text or _NULL.fullmatch(text) or is_debris(text):
        why = f"it was only {text[:40]!r}" if text else "it was empty"
        raise NoAnswer(f"The model gave no answer ({why}); what it did is kept in the run.")
    return content


def not_an_answer(content: str, *, after_failure: bool = False, echoes: tuple[str, ...] = ()) -> str | None:
    """Why a reply without tool calls does not read as a final answer (None when it does). A single word right
    after a turn whose calls all failed (" impossible") is a give-up, not a result; elsewhere ("42") it may be.
    `echoes`: more of ga's own texts (the escalation's hints) that a reply must not merely repeat."""
    text = " ".join(content.split())
    if is_debris(text):
        return "it holds no text, only stray brackets or tags"
    if _NULL.fullmatch(text):
        return f"it is only {text!r}, a null value rather than an answer"
    if len(text.split()) < 2 and after_failure:
        return f"it is only {text!r}"
    if after_failure and _PROMISE.search(text):
        return "it says what you will do next, but calls no tool to do it"
    lowered = text.lower()
    words = " ".join(re.findall(r"[\w'-]+", lowered))
    if any(piece in lowered for piece in _runtime_pieces(echoes)) or (len(words.split()) >= 5 and any(
            words in " ".join(re.findall(r"[\w'-]+", echo.lower())) for echo in echoes)):
        return "it repeats ga's own instructions instead of giving a result"
    return None


def claimed_change(content: str) -> str:
    """The word by which an answer says it changed something ("saved", "updated"...), or "" when it claims none."""
    for match in _CLAIM.finditer(content):
        if not _NEGATED.search(content[max(0, match.start() - 80): match.start()]):
            return match.group(1)
    return ""


def asks_back(content: str) -> bool:
    """The answer only asks the user for something: a question back, with no change claimed."""
    text = " ".join(content.split())
    return bool(_ASKS.search(text)) and not claimed_change(text) and len(text.split()) <= 80


@functools.cache
def _runtime_pieces(echoes: tuple[str, ...]) -> tuple[str, ...]:
    texts = [render("system.md"), CUT_CALLS, CUT_TEXT, FILTERED, LOOPED, EMPTY, DOUBT, *echoes]
    pieces = {p.strip().lower() for t in texts for p in _RUNTIME_PIECE.findall(t.replace("{", "\n{"))}
    return ("escalation stage", *(p for p in pieces if len(p) >= 20))


def tidy(reply: Reply, known: set[str] | dict) -> list[dict]:
    """A small model's reply made usable (ModelSettings.text_calls): calls written as text become calls, and
    streamed debris beside calls is dropped. Returns the trajectory's notices of what was done."""
    calls = [] if reply.tool_calls or reply.finish_reason in CUT_FINISHES else text_calls(reply.content, known)
    if calls:
        event = {"type": "notice", "kind": "text_calls", "calls": len(calls), "text": reply.content}
        reply.tool_calls, reply.content, reply.finish_reason = calls, "", "tool_calls"
        return [event]
    if reply.tool_calls and reply.content and is_debris(reply.content):
        event = {"type": "notice", "kind": "debris", "text": reply.content}
        reply.content = ""
        return [event]
    return []


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
