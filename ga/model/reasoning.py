"""A reasoning model's thinking, set apart from its reply.

Servers with a reasoning parser send it in its own field (`reasoning_content`: DeepSeek, vLLM, llama.cpp;
`reasoning`: OpenRouter); a server without one leaves it in the text as `<think>…</think>` (Qwen3, DeepSeek-R1
distills), sometimes without the opening tag, which the chat template already wrote. The thinking is kept in the
trajectory and out of everything else: the answer, the history sent back, the text-call parse, distilled SOPs.
"""

from __future__ import annotations

import re

_OPEN, _CLOSE = "<think>", "</think>"
_LEADING_OPEN = re.compile(r"\A\s*<think>", re.IGNORECASE)


def split_reasoning(content: str) -> tuple[str, str]:
    """(thinking, reply) of a reply's text: a leading `<think>` block, or what comes before a lone `</think>`; a
    block never closed (the reply was cut) is all thinking."""
    opened = _LEADING_OPEN.match(content)
    start = opened.end() if opened else 0
    end = content.lower().find(_CLOSE, start)
    if end < 0:
        return (content[start:].strip(), "") if opened else ("", content)
    if not opened and _OPEN in content[:end].lower():
        return "", content  # a <think> further in: part of what the model says, not a block of its own
    return content[start:end].strip(), content[end + len(_CLOSE):].lstrip()
