"""Assembling a Reply from what the server sent: stream deltas or one whole completion, through one path.

A reasoning model's thinking is set apart from its reply: servers with a reasoning parser send it in its own field
(`reasoning_content`: DeepSeek, vLLM, llama.cpp; `reasoning`: OpenRouter); one without leaves it in the text as
`<think>…</think>` (Qwen3, DeepSeek-R1 distills), sometimes without the opening tag, which the chat template already
wrote. It is kept in the trajectory and out of everything else (the answer, the history, the text-call parse, SOPs)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ga.model.settings import ModelSettings
from ga.protocols import Reply, ToolCall, Usage
from ga.tooling.tokens import estimate, request_tokens

LOOP_PERIODS = range(8, 401)
"""Lengths of the repeated block looked for, in characters."""
CHECK_EVERY = 512
"""Characters of new output between two looks at the tail."""
CALL_PERIOD = 8
"""The longest run of calls looked for when a reply's calls repeat (ModelSettings.call_repeats)."""
_NUMBERS = re.compile(r"\d+")
_LEADING_OPEN = re.compile(r"\A\s*<think>", re.IGNORECASE)


def split_reasoning(content: str) -> tuple[str, str]:
    """(thinking, reply) of a reply's text: a leading `<think>` block, or what comes before a lone `</think>`; a
    block never closed (the reply was cut) is all thinking."""
    opened = _LEADING_OPEN.match(content)
    start = opened.end() if opened else 0
    end = content.lower().find("</think>", start)
    if end < 0:
        return (content[start:].strip(), "") if opened else ("", content)
    if not opened and "<think>" in content[:end].lower():
        return "", content  # a <think> further in: part of what the model says, not a block of its own
    return content[start:end].strip(), content[end + len("</think>"):].lstrip()


def repeated_calls(calls: list[tuple[str, str]], repeats: int) -> int:
    """Copies of the run of calls that `calls` ends in, when there are `repeats` or more, else 0."""
    for period in range(1, CALL_PERIOD + 1):
        copies = 0
        while len(calls) >= period * (copies + 1) and calls[-period * (copies + 1):] == calls[-period:] * (copies + 1):
            copies += 1
        if copies >= repeats:
            return copies
    return 0


def repeated_tail(text: str, chars: int, repeats: int) -> tuple[int, int]:
    """(block length, copies) when `text` ends in one block repeated past the thresholds, else (0, 0)."""
    for period in LOOP_PERIODS:
        copies = max(repeats, -(-chars // period))
        if len(text) < period * copies:
            break
        if text[-1 - period] != text[-1]:  # cheap: a repeat of this length would match here
            continue
        block = text[-period:]
        if text.endswith(block * copies):
            while text.endswith(block * (copies + 1)):
                copies += 1
            return period, copies
    return 0, 0


class IncompleteReply(Exception):
    """The server's reply ended before it was complete (a broken stream): the request is retried as a whole."""


def _field(obj: Any, name: str) -> Any:
    """A field of an SDK object or a plain dict (extra fields a server adds arrive either way)."""
    if isinstance(obj, dict):
        return obj.get(name)
    value = getattr(obj, name, None)
    return value if value is not None else (getattr(obj, "model_extra", None) or {}).get(name)


def cached_tokens(usage: Any, timings: Any = None) -> int:
    """Prompt tokens the server served from its cache: OpenAI's prompt_tokens_details.cached_tokens, DeepSeek's
    prompt_cache_hit_tokens, or llama.cpp's timings (cache_n, or the prompt tokens it did not have to process)."""
    details = _field(usage, "prompt_tokens_details")
    for value in (_field(details, "cached_tokens") if details is not None else None,
                  _field(usage, "prompt_cache_hit_tokens"), _field(timings, "cache_n")):
        if isinstance(value, int) and value >= 0:
            return value
    prompt, processed = _field(usage, "prompt_tokens"), _field(timings, "prompt_n")
    if isinstance(prompt, int) and isinstance(processed, int) and 0 <= processed <= prompt:
        return prompt - processed
    return 0


@dataclass(kw_only=True)
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ReplyBuilder:
    """Accumulates one reply; feed it stream chunks (add_chunk) or a whole completion (add_completion)."""

    def __init__(self, on_text: Callable[[str], None] | None = None, loops: ModelSettings | None = None):
        self._on_text = on_text
        self.loops = loops or ModelSettings()
        """When a reply counts as a loop (ModelSettings' loop_* fields) or has taken too long (reply_share)."""
        self.asked = time.monotonic()
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_PendingCall] = []
        self._by_index: dict[int, _PendingCall] = {}
        self._by_id: dict[str, _PendingCall] = {}
        self._finish_reason: str | None = None
        self._usage: Any = None
        self._choices = 0
        self._timings: Any = None
        self.chunks = 0
        self._unchecked = 0
        self.looped = 0
        """Copies of the block the reply kept repeating when it was stopped (0: it was not)."""

    def add_chunk(self, chunk: Any) -> None:
        self.chunks += 1
        self._usage = getattr(chunk, "usage", None) or self._usage
        self._timings = _field(chunk, "timings") or self._timings
        for choice in getattr(chunk, "choices", None) or []:
            if (getattr(choice, "index", 0) or 0) != 0:
                continue
            self._choices += 1
            self._add_delta(getattr(choice, "delta", None))
            if not self.looped:
                self._finish_reason = getattr(choice, "finish_reason", None) or self._finish_reason

    def past(self, end: float | None) -> bool:
        """Whether the reply, begun, took its share (reply_share) of the time left until `end`: a length cut."""
        share, begun = self.loops.reply_share, bool(self._text or self._calls or self._reasoning)
        if cut := bool(end and share and begun) and time.monotonic() >= self.asked + (end - self.asked) * share:
            self._finish_reason = "length"
        return cut

    def add_completion(self, completion: Any) -> None:
        if isinstance(completion, str | bytes):  # the SDK hands over a body that is not JSON as it is
            raise IncompleteReply(f"not valid JSON: {completion[:120]!r}")
        if not (choices := getattr(completion, "choices", None)):
            raise IncompleteReply(f"server returned no choices: {str(completion)[:200]}")
        self._choices = len(choices)
        # A whole message is one big delta whose calls are keyed by position.
        self._add_delta(getattr(choices[0], "message", None), positional=True)
        self._usage = getattr(completion, "usage", None)
        self._timings = _field(completion, "timings")
        if not self.looped:
            finish = getattr(choices[0], "finish_reason", None)
            self._finish_reason = finish or ("tool_calls" if self._calls else "stop")

    def _add_delta(self, delta: Any, positional: bool = False) -> None:
        if delta is None:
            return
        if isinstance(thought := _field(delta, "reasoning_content") or _field(delta, "reasoning"), str) and thought:
            self._reasoning.append(thought)
        if text := getattr(delta, "content", None):
            self._text.append(text)
            self._unchecked += len(text)
            if self._on_text:
                self._on_text(text)
        for position, call_delta in enumerate(getattr(delta, "tool_calls", None) or []):
            index = position if positional else getattr(call_delta, "index", None)
            pending = self._slot(index, getattr(call_delta, "id", None))
            function = getattr(call_delta, "function", None)
            pending.name += getattr(function, "name", None) or ""
            given = getattr(function, "arguments", None)  # a string, or an object from some servers
            given = json.dumps(given, ensure_ascii=False) if given is not None and not isinstance(given, str) else given
            pending.arguments.append(given or "")
            self._unchecked += len(pending.arguments[-1])
        if self._unchecked >= CHECK_EVERY or positional:
            self._unchecked = 0
            self._check_loop()

    def _check_loop(self) -> None:
        """Stop a reply that repeats itself: its text keeps one copy of the block; its calls are not run."""
        s = self.loops
        finished = [(c.name, "".join(c.arguments)) for c in self._calls[:-1]]  # the last one may still be coming
        if s.call_repeats and (copies := repeated_calls(finished, s.call_repeats)):
            self.looped, self._finish_reason = copies, "repetition"
            return
        tail_chars = 2 * s.loop_chars * (2 if s.numbers_loop else 1)
        for part in [self._text, *(c.arguments for c in self._calls)]:
            # a whole reply's arguments end in the JSON's closing '"}' after the loop
            tail = "".join(part)[-tail_chars:].rstrip('"}] \n')
            period, copies = repeated_tail(tail, s.loop_chars, s.loop_repeats)
            if copies:
                self.looped, self._finish_reason = copies, "repetition"
                if part is self._text:
                    whole = "".join(part)
                    self._text[:] = [whole[: len(whole) - (copies - 1) * period]]
                return
            if s.numbers_loop and (counted := repeated_tail(_NUMBERS.sub("0", tail), 2 * s.loop_chars,
                                                            2 * s.loop_repeats)[1]):
                self.looped, self._finish_reason = counted, "repetition"
                return

    def _slot(self, index: int | None, call_id: str | None) -> _PendingCall:
        """The call a delta belongs to: by index (some servers give every call of a reply the same id); without one,
        by id, else the latest call."""
        if index is not None:
            known = self._by_index.get(index)
            # Some servers reuse index 0 for every parallel call: a new id at a known index is a new call.
            if known is not None and call_id and known.id and known.id != call_id:
                known = None
        elif call_id:
            known = self._by_id.get(call_id)
        else:
            known = self._calls[-1] if self._calls else None
        if known is None:
            known = _PendingCall()
            self._calls.append(known)
        if index is not None:
            self._by_index[index] = known
        if call_id:
            known.id = call_id
            self._by_id[call_id] = known
        return known

    def build(self, messages: list[dict], tools: list[dict]) -> Reply:
        """The finished Reply; raises IncompleteReply when a stream ended without a finish."""
        if self.chunks and not self._choices:
            raise IncompleteReply("server returned no choices")
        if self._finish_reason is None and self._usage is None:
            raise IncompleteReply("stream ended before the reply was complete")
        reasoning, content = split_reasoning("".join(self._text))
        reasoning = "\n".join(filter(None, ["".join(self._reasoning).strip(), reasoning]))
        calls = [ToolCall(id=c.id or f"call_{i}", name=c.name, arguments="".join(c.arguments))
                 for i, c in enumerate(self._calls)]
        finish = self._finish_reason or ("tool_calls" if calls else "stop")
        prompt, completion = (getattr(self._usage, k, None) for k in ("prompt_tokens", "completion_tokens"))
        estimated = prompt is None or completion is None
        cached = 0 if estimated else cached_tokens(self._usage, self._timings)
        if estimated:
            prompt = request_tokens(messages, tools)
            completion = estimate(content + "".join(c.name + str(c.arguments) for c in calls))
        usage = Usage(requests=1, prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached)
        return Reply(content=content, tool_calls=calls, finish_reason=finish, usage=usage, estimated_usage=estimated,
                     reasoning=reasoning)
