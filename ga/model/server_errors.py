"""What a server's refusal says: a context overflow, that it is no API at all, its message."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

import openai

from ga.errors import ContextOverflow

RETRYABLE = {408: "request timeout", 409: "conflict", 429: "rate limited"}
"""Statuses below 500 that a later attempt may get past."""
_TITLE = re.compile(r"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
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


def not_an_api(status: int, headers: Mapping[str, str], text: str = "") -> str | None:
    """What shows that the server is no OpenAI-compatible API, e.g. '501 text/html: "Error response"' (None when it
    may be one): a web page where an API sends JSON, or a 404, 405 or 501 without JSON. 5xx and the statuses worth
    retrying are not judged here: a gateway in front of a real API answers them in HTML too."""
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if status in RETRYABLE or (status >= 500 and status not in (501, 505)):
        return None
    if not _is_html(kind, text) and ("json" in kind or status not in (404, 405, 501)):
        return None
    title = page_title(text)
    return f"{status} {kind or 'with no content type'}" + (f': "{title}"' if title else "")


def page_title(text: str) -> str:
    """An HTML page's <title>, on one line and short ("" without one)."""
    found = _TITLE.search(text[:20_000])
    return " ".join(html.unescape(found.group(1)).split())[:80] if found else ""


def _is_html(kind: str, text: str) -> bool:
    return "html" in kind or text.lstrip()[:15].lower().startswith(("<!doctype", "<html"))


def server_message(err: openai.APIStatusError) -> str:
    """What the server said, short: its JSON message, or a text body cut at 500 characters; never a web page."""
    body = err.body
    if isinstance(body, Mapping):
        body = body.get("message") or body.get("detail") or body
    text = str(body if body is not None else err.message).strip()
    if isinstance(body, str) and _is_html(err.response.headers.get("content-type", ""), text):
        title = page_title(text)
        return f"a web page ({title})" if title else "a web page"
    return text[:500] or "(no message)"
