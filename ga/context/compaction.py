"""What compaction writes: the one-line stub of a masked tool result, old tool-call arguments shortened, and the
side request that folds old turns into a structured hand-off (with its fallback when the model cannot)."""

from __future__ import annotations

import json
from collections.abc import Collection

from ga.prompts import render
from ga.tooling import tokens
from ga.tooling.arguments import summarize

STUB_MIN_TOKENS = 80
"""A result smaller than this stays as it is: its stub would save nothing."""
LONG_ARGUMENT = 300
"""Characters above which an old tool call's argument (a file's content, a script) is shortened."""
LONG_TEXT = 1_500
"""Characters above which an old reply's text keeps only its start."""
SUMMARY_WORDS = 500
SUMMARY_TOKENS = 1_200
"""The hand-off is cut at this size, whatever the model wrote."""
CARRY_TOKENS = 2_000
"""The user's own messages from folded turns are carried verbatim up to this size (the newest first)."""
_HINTS = ("[Read the error", "[Escalation", "[Stage 2", "[Same call", "hint:", "note:", "warning:")


def _line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def outcome(content: str) -> str:
    """What a result said, in a line: its status or footer line and the last line of output."""
    lines = [line.strip() for line in content.splitlines() if line.strip() and not line.strip().startswith(_HINTS)]
    if not lines:
        return "(empty)"
    first, last = lines[0], lines[-1]
    if last.startswith("[") and not first.startswith("["):
        return _line(last, 140)  # a footer: which lines of how many, where to continue
    if first == last:
        return _line(first, 160)
    return f"{_line(first, 100)} … {_line(last, 100)}"


def gist(call: dict, content: str) -> str:
    """A call (its "function": name and arguments) and what its result said, in a line."""
    return f"{call.get('name', '?')} {summarize(call.get('arguments', ''), 90)} → {outcome(content)}"


def stub(call: dict, content: str, where: str) -> str:
    """The one line that replaces an old tool result."""
    return f"[old result masked; {where} for all {len(content):,} chars · {gist(call, content)}]"


def short_arguments(arguments: str) -> str | None:
    """An old call's arguments with long string values shortened (still valid JSON); None if nothing is long."""
    try:
        args = json.loads(arguments or "{}")
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(args, dict) or not any(isinstance(v, str) and len(v) > LONG_ARGUMENT for v in args.values()):
        return None
    short = {k: f"{v[:80]}… [masked: {len(v):,} chars]" if isinstance(v, str) and len(v) > LONG_ARGUMENT else v
             for k, v in args.items()}
    return json.dumps(short, ensure_ascii=False)


def short_assistant(message: dict) -> dict | None:
    """An old assistant message with long text and long call arguments shortened; None when nothing changes."""
    shown = dict(message)
    text = message.get("content") or ""
    if len(text) > LONG_TEXT:
        shown["content"] = f"{text[:600]}… [masked: {len(text) - 600:,} more chars of this reply]"
    calls = []
    for call in message.get("tool_calls") or []:
        short = short_arguments(call["function"].get("arguments", ""))
        calls.append({**call, "function": {**call["function"], "arguments": short}} if short else call)
    if calls:
        shown["tool_calls"] = calls
    return shown if shown != message else None


def carried(messages: list[dict], earlier: list[str], runtime_notes: Collection[str] = ()) -> list[str]:
    """The user's own messages of the folded turns (after those carried before), newest kept within the cap;
    `runtime_notes` are what the loop itself sends as the user (not the user's words, so not carried)."""
    texts = [*earlier, *(m["content"] for m in messages
                         if m["role"] == "user" and isinstance(m.get("content"), str) and m["content"] not in
                         runtime_notes)]
    kept, left = _newest(texts, CARRY_TOKENS)
    if len(kept) < len(texts) and (head := tokens.clip(texts[-len(kept) - 1], left)[0]):
        kept.insert(0, head.rstrip() + " [… cut]")
    return kept


def _newest(texts: list[str], cap: int) -> tuple[list[str], int]:
    """The newest of `texts` that fit in `cap` tokens together, oldest first, and the tokens left."""
    kept, left = [], cap
    for text in reversed(texts):
        if (cost := tokens.estimate(text)) > left:
            break
        kept.append(text)
        left -= cost
    return kept[::-1], left


def _render(message: dict) -> str:
    role = message["role"]
    if role == "tool":
        return f"TOOL RESULT ({message.get('tool_call_id', '')}):\n{message.get('content') or ''}"
    text = message.get("content") or ""
    calls = [f"CALL {c['function'].get('name')} {c['function'].get('arguments', '')}"
             for c in message.get("tool_calls") or []]
    return "\n".join([f"{role.upper()}:", *([text] if text else []), *calls])


def summary_request(task: str, previous: str, messages: list[dict], budget: int) -> list[dict]:
    """The side request (no tools) that folds `messages` into a hand-off, pre-trimmed to `budget` tokens: each
    message gets a share of what is left after the instructions, the largest cut first."""
    system = render("summary.md", words=SUMMARY_WORDS)
    parts = [f"THE TASK:\n{task}", *([f"THE HAND-OFF NOTE SO FAR:\n{previous}"] if previous else []),
             *map(_render, messages)]
    room = max(0, budget - tokens.estimate(system) - SUMMARY_TOKENS - 60 - 6 * len(parts))
    sizes = [tokens.estimate(p) for p in parts]
    fitted = []
    for part, size, share in zip(parts, sizes, tokens.shares(sizes, room), strict=True):
        if share >= size:
            fitted.append(part)
            continue
        head, tail = tokens.clip(part, max(0, share - 12))
        fitted.append(f"{head}[… cut]\n{tail}")
    transcript = "\n\n".join(fitted)
    ask = f"The turns to fold, oldest first:\n\n{transcript}\n\nWrite the hand-off note."
    return [{"role": "system", "content": system}, {"role": "user", "content": ask}]


def fallback_summary(previous: str, messages: list[dict], reason: str) -> str:
    """The hand-off when the model could not write one: what the folded calls did, one line each (newest kept)."""
    calls = {c["id"]: c["function"] for m in messages for c in m.get("tool_calls") or []}
    stubs = [f"(earlier note) {previous}"] * bool(previous)
    for m in messages:
        if m["role"] == "tool":
            stubs.append(gist(calls.get(m.get("tool_call_id"), {}), m.get("content") or ""))
    kept, _ = _newest(stubs, SUMMARY_TOKENS)
    lines = [f"- … {len(stubs) - len(kept)} earlier calls not listed"] * (len(kept) < len(stubs))
    return f"(No summary: {reason}. The folded calls, newest last:)\n" + "\n".join(lines + [f"- {s}" for s in kept])


def hand_off(summary: str, turns: int, users: list[str]) -> dict:
    """The message that stands for the folded turns, right after the task."""
    head, _ = tokens.clip(summary.strip(), SUMMARY_TOKENS)
    parts = [f"[Hand-off note: the first {turns} turns of this run were folded into this note to fit the context; "
             "the newest turns follow verbatim, and your working checkpoint comes last]", head.strip()]
    if users:
        parts.append("[The user's messages in those turns, verbatim]\n" + "\n".join(f"- {u}" for u in users))
    return {"role": "user", "content": "\n\n".join(parts)}
