"""What a server's refusal says (a context overflow, the wait it asks for, its message) and how long to back off."""

from __future__ import annotations

import email.utils
import math
import random
import re
import time
from collections.abc import Mapping
from datetime import timezone

import openai

from ga.errors import ContextOverflow

MAX_DELAY = 60.0
"""Longest wait between two attempts, whatever the backoff or the server's Retry-After says."""


_OVERFLOW = re.compile(r"context_length_exceeded|exceed_context_size|maximum context length|context (?:size|window)|"
                       r"prompt is too long|input is too long|too many (?:input )?tokens", re.IGNORECASE)
_WINDOW = re.compile(r"maximum context length is (\d+)|context (?:size|window|length)(?: is| of)? (\d+)", re.IGNORECASE)
_SENT = re.compile(r"(?:resulted in|requested|you have|prompt has|contains) (\d+) tokens", re.IGNORECASE)


def context_overflow(err: openai.APIStatusError) -> ContextOverflow | None:
    """The server's "request too long for the context" refusal (OpenAI, vLLM, llama.cpp and kin), else None."""
    if err.status_code not in (400, 413, 422):
        return None
    body = err.body if isinstance(err.body, Mapping) else {}
    text = f"{err.message} {body.get('code', '')} {body.get('type', '')}"
    if not _OVERFLOW.search(text):
        return None
    number = (lambda m: int(next(g for g in m.groups() if g)) if m else None)  # noqa: E731
    window = body.get("n_ctx") if isinstance(body.get("n_ctx"), int) else number(_WINDOW.search(text))
    sent = body.get("n_prompt_tokens") if isinstance(body.get("n_prompt_tokens"), int) else number(_SENT.search(text))
    return ContextOverflow(f"The server refused the request as too long for the model's context: "
                           f"{server_message(err)}", window=window, sent=sent)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The server's requested wait: retry-after-ms, or Retry-After in seconds or as an HTTP date."""
    try:
        if headers.get("retry-after-ms"):
            return _finite(float(headers["retry-after-ms"]) / 1000)
        raw = headers.get("retry-after")
        if not raw:
            return None
        try:
            return _finite(float(raw))
        except ValueError:
            when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - time.time())


def _finite(value: float) -> float | None:
    return max(0.0, value) if math.isfinite(value) else None


def backoff_delay(attempt: int, base: float, retry_after: float | None = None) -> float:
    """Seconds to wait after failed attempt number `attempt` (1-based): the server's wish, else jittered doubling."""
    if retry_after is not None:
        return min(MAX_DELAY, retry_after)
    return min(MAX_DELAY, base * 2 ** (attempt - 1) * random.uniform(0.8, 1.2))


def server_message(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, Mapping):
        body = body.get("message") or body.get("detail") or body
    text = str(body if body is not None else err.message).strip()
    return text[:500] or "(no message)"
