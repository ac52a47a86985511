"""Tool calls written as text, and streamed debris, in what a model replies.

Small and local models often write a call as text instead of a native call: a fenced ```json block holding
{"name": ..., "arguments": ...}, <tool_call>...</tool_call> tags (Hermes, Qwen), <function=NAME>{...}</function>
(Llama 3.1), a bare JSON object, or a list of them. A reply with no native calls whose whole text is such calls
to known tools is run as those calls; any other text around them means it was not meant as a call."""

from __future__ import annotations

import json
import re

from ga.protocols import ToolCall

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")
_FENCE = re.compile(r"```[\w-]*[ \t]*\n?")
_TAG = re.compile(r"<(tool_calls?|function_calls?|tools)>")
_FUNCTION = re.compile(r"<function=([\w.-]+)>")
_DEBRIS = re.compile(r"(?:\s|[{}\[\],]|</?(?:tools?|tool_calls?|tool_response|function_calls?)>)*")
"""Text that carries nothing: braces and brackets, empty tool tags (`{`, `{}\\n\\n{{}`, `<tools></tools>`)."""


def is_debris(text: str) -> bool:
    return _DEBRIS.fullmatch(text) is not None


def text_calls(content: str, known: set[str] | dict) -> list[ToolCall]:
    """The calls the whole text makes, or [] when it is anything else (prose, an unknown tool, bad JSON)."""
    text, at, found = content.strip(), 0, []
    while at < len(text):
        step = _one_block(text, at, known)
        if step is None:
            return []
        calls, at = step
        found += calls
        at = _SPACE.match(text, at).end()
    return [ToolCall(id=f"text_call_{i}", name=name, arguments=arguments) for i, (name, arguments) in
            enumerate(found)]


def _one_block(text: str, at: int, known: set[str] | dict) -> tuple[list[tuple[str, str]], int] | None:
    """The calls of one wrapped (or bare) block at `at`, and where the block ends."""
    fence, tag, function = _FENCE.match(text, at), _TAG.match(text, at), _FUNCTION.match(text, at)
    close = "```" if fence else f"</{tag.group(1)}>" if tag else "</function>" if function else ""
    start = _SPACE.match(text, (fence or tag or function).end() if close else at).end()
    try:
        value, end = _DECODER.raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError):
        return None
    if function:
        value = {"name": function.group(1), "arguments": value}
    end = _SPACE.match(text, end).end()
    if not text.startswith(close, end):  # "" (a bare block) always does
        return None
    end += len(close)
    calls = [_as_call(item, known) for item in (value if isinstance(value, list) else [value])]
    if not calls or None in calls:
        return None
    return calls, end  # type: ignore[return-value]


def _as_call(item: object, known: set[str] | dict) -> tuple[str, str] | None:
    """(name, arguments as a JSON string) of {"name", "arguments" | "parameters"}, maybe inside "function"."""
    if isinstance(item, dict) and isinstance(item.get("function"), dict):
        item = item["function"]
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or item["name"] not in known:
        return None
    if set(item) - {"name", "arguments", "parameters", "type", "id"}:
        return None  # an object that merely has a "name" field, not a call
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        return item["name"], arguments
    if not isinstance(arguments, dict):
        return None
    return item["name"], json.dumps(arguments, ensure_ascii=False)
