"""The one token counter: estimates without a tokenizer, and fitting text into a token budget.

One estimator for the whole runtime (the context budget, the client's usage fallback, web_scan's page budget):
a regex over the pieces a BPE tokenizer splits text into, weighted per kind. Fitted against o200k_base on
English, code, Chinese, Japanese, Korean, Russian, German, JSON and shell output; on each it lands within 10%
(tests/ga/tooling/test_tokens.py measures it against bench/harness/meter.py's exact count). Random base64 is the
known weak spot (about 20% low)."""

from __future__ import annotations

import functools
import json
import re

_CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff00-\uffef"
_PIECES = r"([{cjk}]+)|([^\W\d_{cjk}]+)|(\d+)|(\n)|([ \t]{{2,}})|([^\w\s{cjk}]+)"
_NO_CJK = re.compile(_PIECES.format(cjk="").replace("([]+)", r"(\b\B)"))
"""The pieces of a text without CJK: the same groups (the first never matches). The full pattern's three CJK classes
take ~20 ms to compile (a 64K-entry map each), which a run whose text has no CJK never pays."""
_CASE_SWITCH = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
MESSAGE_OVERHEAD = 4
"""Tokens a chat template spends on each message besides its text (role markers, separators)."""
CHARS_PER_TOKEN = 4
"""For limits that tools count in characters: English and code run at about 4 characters a token."""


@functools.cache
def _with_cjk() -> re.Pattern:
    return re.compile(_PIECES.format(cjk=_CJK))


def estimate(text: str) -> int:
    """Tokens of `text`, as o200k_base would count them (within about 10% on ordinary text and code)."""
    total = 0.0
    pieces = _with_cjk() if text and max(text) >= _CJK[0] else _NO_CJK
    for cjk, word, number, newline, spaces, _symbols in pieces.findall(text):
        if cjk:
            total += 0.8 * len(cjk)  # common pairs of CJK characters are single tokens
        elif word and word.isascii():  # long identifiers and camelCase split into several tokens
            total += 1 + 0.3 * max(0, len(word) - 8) + 0.6 * len(_CASE_SWITCH.findall(word))
        elif word:  # accented, Cyrillic, Greek...: fewer merges in the vocabulary
            total += 1 + 0.3 * max(0, len(word) - 4)
        elif number:
            total += 1.5 * -(-len(number) // 3)  # digits go in groups of three
        elif newline:
            total += 0.25  # mostly merged with indentation or the next word
        elif spaces:
            total += 1
        else:
            total += 0.9
    return round(total)


@functools.lru_cache(maxsize=8192)
def estimate_cached(text: str) -> int:
    """estimate() for short texts counted again and again (lines of a page being fitted)."""
    return estimate(text)


def message_tokens(message: dict) -> int:
    """Tokens of one chat message: its text, its tool calls, and the template's overhead."""
    total = MESSAGE_OVERHEAD
    content = message.get("content")
    if isinstance(content, str):
        total += estimate(content)
    elif content:  # content parts
        total += estimate(json.dumps(content, ensure_ascii=False))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        total += 8 + estimate(str(function.get("name", ""))) + estimate(str(function.get("arguments", "")))
    return total


def request_tokens(messages: list[dict], tools: list[dict] | None = None) -> int:
    """Tokens of a whole request: every message plus the tool schemas."""
    schemas = estimate(json.dumps(tools, ensure_ascii=False)) if tools else 0
    return schemas + sum(message_tokens(m) for m in messages)


def shares(sizes: list[int], budget: int) -> list[int]:
    """Water-filling: how much of `budget` each of several results may keep. Results under the common level keep
    all they have; the largest are cut first, all to the same level. The shares never add up to more than budget."""
    if sum(sizes) <= budget:
        return list(sizes)
    level, left, rest = 0, max(0, budget), sorted(sizes)
    for i, size in enumerate(rest):
        fair = left // (len(rest) - i)
        if size > fair:
            level = fair
            break
        left -= size
    return [min(size, level) for size in sizes]


def clip(text: str, budget: int, head_share: float = 2 / 3) -> tuple[str, str]:
    """A head and a tail of `text` that together take at most `budget` tokens; the middle is what was cut. Both
    are whole lines where the text has them; only a line too long to keep whole is cut inside, at a character."""
    if estimate(text) <= budget:
        return text, ""
    lines = text.splitlines(keepends=True)
    costs = [estimate_cached(line) if len(line) < 2000 else estimate(line) for line in lines]
    head_budget = int(max(0, budget) * head_share)
    head_n, used = 0, 0
    while head_n < len(lines) and used + costs[head_n] <= head_budget:
        used += costs[head_n]
        head_n += 1
    tail_n, tail_used = 0, 0
    while (tail_n < len(lines) - head_n - 1 and
           used + tail_used + costs[len(lines) - 1 - tail_n] <= budget):
        tail_used += costs[len(lines) - 1 - tail_n]
        tail_n += 1
    head = "".join(lines[:head_n])
    tail = "".join(lines[len(lines) - tail_n:]) if tail_n else ""
    if head_n == 0 and tail_n == 0:  # one huge first line: keep what fits of its start
        head = _prefix_within(lines[0], budget)
    return _within(head, tail, budget)


def _prefix_within(line: str, budget: int) -> str:
    """The longest start of `line` within `budget` tokens (binary search: estimates grow with length)."""
    low, high = 0, len(line)
    while low < high:
        mid = (low + high + 1) // 2
        if estimate(line[:mid]) <= budget:
            low = mid
        else:
            high = mid - 1
    return line[:low]


def _within(head: str, tail: str, budget: int) -> tuple[str, str]:
    # The sum of line estimates can differ from the estimate of the joined text by a token or two per piece
    # boundary: trim whole lines until the joined text fits too.
    while tail and estimate(head) + estimate(tail) > budget:
        tail = tail.split("\n", 1)[1] if "\n" in tail[:-1] else ""
    while head and estimate(head) > budget:
        head = head[: head.rstrip("\n").rfind("\n") + 1] if "\n" in head.rstrip("\n") else _prefix_within(head, budget)
    return head, tail
