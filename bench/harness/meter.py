"""What one model exchange cost and did: tokens (the server's usage, else a local count) and the reply's tool calls,
for the OpenAI Chat Completions and Responses APIs and the Anthropic Messages API, streamed or not.

Input tokens follow ATIF: all prompt tokens, cached ones included; cached_tokens is the subset served from a cache
(OpenAI `*_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`, llama.cpp `prompt_tokens - timings.
prompt_n`).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

from ga.tooling import tokens

CHAT, RESPONSES, ANTHROPIC = "chat", "responses", "anthropic"


@dataclass(kw_only=True)
class Metered:
    input_tokens: int = 0
    """Prompt tokens, cached ones included."""
    cached_tokens: int = 0
    """The part of input_tokens served from a prompt cache."""
    output_tokens: int = 0
    """Completion tokens (reasoning and tool calls included)."""
    usage_source: str = ""
    """"server" when the reply carried usage, "local" when counted here, "" before either."""
    content: str = ""
    """The reply's text."""
    tool_calls: list[dict] = field(default_factory=list)
    """The reply's tool calls: {"id", "name", "arguments"} with arguments as the raw JSON text."""
    finish_reason: str = ""
    server_ms: float | None = None
    """The server's own processing time when it says (llama.cpp `timings`: prompt + generation), without the time
    the request waited in its queue."""


def _int(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _chat_usage(m: Metered, usage: dict | None, timings: dict | None = None) -> None:
    if not isinstance(usage, dict):
        return
    m.input_tokens, m.output_tokens = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
    details = usage.get("prompt_tokens_details") or {}
    m.cached_tokens = _int(details.get("cached_tokens"))
    if isinstance(timings, dict):
        if not m.cached_tokens and isinstance(timings.get("prompt_n"), int):
            m.cached_tokens = max(0, m.input_tokens - timings["prompt_n"])  # llama.cpp: prompt_n are the new ones
        spent = [timings.get(k) for k in ("prompt_ms", "predicted_ms")]
        if all(isinstance(v, (int, float)) for v in spent):
            m.server_ms = round(sum(spent), 1)
    m.usage_source = "server"


def _responses_usage(m: Metered, usage: dict | None) -> None:
    if not isinstance(usage, dict):
        return
    m.input_tokens, m.output_tokens = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
    m.cached_tokens = _int((usage.get("input_tokens_details") or {}).get("cached_tokens"))
    m.usage_source = "server"


def _anthropic_usage(m: Metered, usage: dict | None) -> None:
    if not isinstance(usage, dict):
        return
    cached = _int(usage.get("cache_read_input_tokens"))
    fresh = _int(usage.get("input_tokens")) + _int(usage.get("cache_creation_input_tokens"))
    if "input_tokens" in usage:
        m.input_tokens, m.cached_tokens = fresh + cached, cached
    if "output_tokens" in usage:
        m.output_tokens = _int(usage.get("output_tokens"))
    m.usage_source = "server"


def from_json(api: str, body: dict) -> Metered:
    """Meter a complete (non-streamed) reply body."""
    m = Metered()
    if api == CHAT:
        choice = (body.get("choices") or [{}])[0] or {}
        message = choice.get("message") or {}
        m.content, m.finish_reason = message.get("content") or "", choice.get("finish_reason") or ""
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            m.tool_calls.append({"id": call.get("id", ""), "name": function.get("name", ""),
                                 "arguments": _text(function.get("arguments"))})
        _chat_usage(m, body.get("usage"), body.get("timings"))
    elif api == RESPONSES:
        _responses_output(m, body)
    elif api == ANTHROPIC:
        m.finish_reason = body.get("stop_reason") or ""
        for block in body.get("content") or []:
            if block.get("type") == "text":
                m.content += block.get("text", "")
            elif block.get("type") == "tool_use":
                m.tool_calls.append({"id": block.get("id", ""), "name": block.get("name", ""),
                                     "arguments": _text(block.get("input"))})
        _anthropic_usage(m, body.get("usage"))
    return m


def _responses_output(m: Metered, response: dict) -> None:
    m.finish_reason = response.get("status") or ""
    for item in response.get("output") or []:
        if item.get("type") == "function_call":
            m.tool_calls.append({"id": item.get("call_id", ""), "name": item.get("name", ""),
                                 "arguments": _text(item.get("arguments"))})
        elif item.get("type") == "message":
            m.content += "".join(c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict))
    _responses_usage(m, response.get("usage"))


def _text(arguments: object) -> str:
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


class StreamMeter:
    """Fed the events of a server-sent stream one by one; result() is what a complete reply would say."""

    def __init__(self, api: str):
        self.api = api
        self.m = Metered()
        self._calls: dict[int, dict] = {}

    def feed(self, event: str, data: dict) -> None:
        if self.api == CHAT:
            self._chat(data)
        elif self.api == RESPONSES:
            if data.get("type") in ("response.completed", "response.incomplete", "response.failed"):
                self.m.content, self.m.tool_calls = "", []
                _responses_output(self.m, data.get("response") or {})
            elif data.get("type") == "response.output_text.delta":
                self.m.content += data.get("delta", "")
        elif self.api == ANTHROPIC:
            self._anthropic(event or data.get("type", ""), data)

    def _chat(self, data: dict) -> None:
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            self.m.content += delta.get("content") or ""
            for part in delta.get("tool_calls") or []:
                call = self._calls.setdefault(part.get("index", 0), {"id": "", "name": "", "arguments": ""})
                function = part.get("function") or {}
                call["id"] = part.get("id") or call["id"]
                call["name"] = function.get("name") or call["name"]
                call["arguments"] += _text(function.get("arguments"))
            self.m.finish_reason = choice.get("finish_reason") or self.m.finish_reason
        if data.get("usage"):
            _chat_usage(self.m, data["usage"], data.get("timings"))

    def _anthropic(self, kind: str, data: dict) -> None:
        if kind == "message_start":
            _anthropic_usage(self.m, (data.get("message") or {}).get("usage"))
        elif kind == "content_block_start":
            block = data.get("content_block") or {}
            if block.get("type") == "tool_use":
                self._calls[data.get("index", 0)] = {"id": block.get("id", ""), "name": block.get("name", ""),
                                                     "arguments": ""}
        elif kind == "content_block_delta":
            delta = data.get("delta") or {}
            if delta.get("type") == "text_delta":
                self.m.content += delta.get("text", "")
            elif delta.get("type") == "input_json_delta" and data.get("index", 0) in self._calls:
                self._calls[data.get("index", 0)]["arguments"] += delta.get("partial_json", "")
        elif kind == "message_delta":
            self.m.finish_reason = (data.get("delta") or {}).get("stop_reason") or self.m.finish_reason
            _anthropic_usage(self.m, data.get("usage"))

    def result(self) -> Metered:
        if self._calls:
            self.m.tool_calls = [self._calls[i] for i in sorted(self._calls)]
        return self.m


def count_locally(api: str, request: dict, m: Metered) -> None:
    """Fill in the tokens of an exchange whose reply carried no usage."""
    keys = {CHAT: ("messages", "tools"), RESPONSES: ("instructions", "input", "tools"),
            ANTHROPIC: ("system", "messages", "tools")}[api]
    prompt = "".join(json.dumps(request.get(k), ensure_ascii=False) for k in keys if request.get(k) is not None)
    m.input_tokens = count(prompt)
    m.output_tokens = count(m.content + "".join(c["name"] + c["arguments"] for c in m.tool_calls))
    m.cached_tokens, m.usage_source = 0, "local"


@functools.cache
def _o200k() -> object | None:
    """The o200k_base encoding, loaded on first use (its tables are large); None without bpe-openai."""
    try:
        import bpe_openai
    except ImportError:
        return None
    return bpe_openai.get_encoding("o200k_base")


def count(text: str, chunk: int = 20_000) -> int:
    """o200k_base tokens of `text`: exact with bpe-openai (counted in chunks cut at spaces, since it refuses very
    long strings), else estimate()."""
    encoding = _o200k()
    if encoding is None:
        return tokens.estimate(text)
    total, i = 0, 0
    while i < len(text):
        j = min(len(text), i + chunk)
        if j < len(text):  # cut at a space so no token straddles two chunks
            k = text.rfind(" ", i + chunk // 2, j)
            j = k if k > 0 else j
        total += len(encoding.encode(text[i:j], disallowed_special=()))
        i = j
    return total
