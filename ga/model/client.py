"""The OpenAI-compatible model client: Chat Completions with native tool calling, streaming and our own retries."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable

import openai

from ga.config import Settings
from ga.errors import LimitReached, ModelError, NotAnAPI, ServerUnreachable
from ga.model.http import MAX_REPLY_BYTES, BodyGuard, DeadlinePassed, http_client
from ga.model.server_errors import (
    RETRYABLE,
    backoff_delay,
    context_overflow,
    not_an_api,
    retry_after_seconds,
    server_message,
)
from ga.model.settings import ModelSettings
from ga.model.stream import IncompleteReply, ReplyBuilder
from ga.protocols import Reply
from ga.tooling.encoding import scrub

log = logging.getLogger(__name__)

FIRST_CONTACT_TRIES = 3
"""Attempts when the server cannot be reached at all before any reply: a typo'd URL or a server not started
should fail in seconds, not after minutes of backoff."""
SERVER_ERROR_TRIES = 3
"""Attempts after a 500: more often a bug the same request meets again than a passing state, so a few tries, not a
minute of backoff (502, 503 and 504, a gateway or a server starting or overloaded, get the full schedule)."""
CONNECT_TIMEOUT = 15.0
"""Seconds to open a connection: a host that does not answer is as good as down."""
PAGE_START = 16_384
"""Bytes of a web page read to find its title."""
_BROKEN = (openai.APIError, IncompleteReply, DeadlinePassed, json.JSONDecodeError, UnicodeDecodeError)
"""What a failed attempt raises: the SDK's errors, and a 200 reply whose body is not a reply."""

_WINDOW_FIELDS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx")
"""Fields of a /models entry that some servers use for the context length."""


def _root(base_url: str) -> str:
    return base_url.removesuffix("/v1")


class OpenAIModel:
    """A Model (ga.protocols) for any OpenAI-compatible Chat Completions server."""

    def __init__(self, settings: Settings, on_retry: Callable[[str], None] | None = None,
                 max_reply_bytes: int = MAX_REPLY_BYTES, model_settings: ModelSettings | None = None):
        self.settings = settings
        self.model_settings = model_settings or ModelSettings()
        """This model's behaviour (ga/model/settings.py): here, when a streamed reply counts as a loop."""
        self.on_retry = on_retry
        self.retries = 0
        """Retries done so far over all requests (they are not counted in Usage.requests)."""
        self.reached = False
        """Some answer (even an error status) has come from the server: it exists."""
        self.replied = False
        """A reply has come: the server is an API, and a web page from it now is a proxy's passing trouble."""
        self.send_stream_options = True
        """Turned off for good once the server rejects stream_options."""
        self.send_parallel_tool_calls = True
        """Turned off for good once the server rejects parallel_tool_calls."""
        self.output_cap = "max_tokens"
        """The parameter that bounds a completion: max_tokens, else max_completion_tokens, else none ("")."""
        self.streaming = settings.stream
        """Turned off for good when a streamed request comes back with no stream events at all."""
        self.guard = BodyGuard(max_reply_bytes)
        # Local servers need no key, but the SDK refuses an empty one.
        self.client = openai.OpenAI(
            base_url=settings.base_url or None,
            api_key=settings.api_key or "none",
            max_retries=0,
            timeout=settings.request_timeout,
            http_client=http_client(self.guard),
        )

    def complete(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None] | None = None,
                 *, deadline: float | None = None) -> Reply:
        """One reply, retried as a whole on transient failures; `deadline` (time.monotonic()) is the run's end.
        With streaming, text that reached on_text before a broken stream is sent again by the retry (the
        on_retry notice comes in between)."""
        attempt = 1
        while True:
            try:
                reply = self._request(messages, tools, on_text, deadline)
                self.replied = True
                return reply
            except _BROKEN as err:
                if isinstance(err, openai.APIStatusError) and self._fall_back(err):
                    continue
                self._check_time(deadline)
                reason, detail, retry_after = self._transient(err)
                attempts = self._attempts(err)
                if attempt >= attempts:
                    raise self._gave_up(err, attempts, detail) from None
            delay = backoff_delay(attempt, self.settings.retry_base, retry_after)
            if deadline is not None and time.monotonic() + delay >= deadline:
                raise self._out_of_time(f"the retry after {reason} would end after it")
            self._wait(reason, delay, attempt + 1, attempts)
            attempt += 1

    def _request(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None] | None,
                 deadline: float | None) -> Reply:
        builder = ReplyBuilder(on_text, self.model_settings)
        ends = time.monotonic() + self.settings.request_timeout
        self.guard.deadline = ends if deadline is None else min(ends, deadline)
        left = max(0.1, self.guard.deadline - time.monotonic())
        timeout = openai.Timeout(left, connect=min(left, CONNECT_TIMEOUT))
        raw = self.client.chat.completions.with_raw_response.create(**self._arguments(messages, tools),
                                                                    timeout=timeout)
        self.reached = True
        if "html" in raw.headers.get("content-type", "") and not self.replied:  # a web page, even with 200
            try:
                start = next(raw.http_response.iter_bytes(PAGE_START), b"").decode("utf-8", "replace")
            finally:
                raw.http_response.close()
            raise self._not_an_api(not_an_api(raw.status_code, raw.headers, start) or "a web page")
        response = raw.parse()
        if self.streaming:
            with response:
                for chunk in response:
                    builder.add_chunk(chunk)
                    if builder.looped:  # closing the stream stops the server generating
                        log.info("reply stopped: it repeated one block %d times", builder.looped)
                        break
            if builder.chunks == 0:  # a server that ignores stream=true and answers with plain JSON
                self.streaming = False
                log.info("server sent no stream events; sending requests without streaming")
                return self._request(messages, tools, on_text, deadline)
        else:
            builder.add_completion(response)
        return builder.build(messages, tools)

    def _arguments(self, messages: list[dict], tools: list[dict]) -> dict:
        # Text that cannot be encoded (a lone surrogate from a tool or the model) would fail on the wire.
        arguments: dict = {"model": self.settings.model, "messages": scrub(messages)}
        if tools:
            arguments["tools"] = scrub(tools)
            if self.send_parallel_tool_calls:
                arguments["parallel_tool_calls"] = True
        if self.output_cap and (cap := _cap(self.settings.max_output_tokens, self.model_settings.max_reply_tokens)):
            arguments[self.output_cap] = cap
        if self.streaming:
            arguments["stream"] = True
            if self.send_stream_options:
                arguments["stream_options"] = {"include_usage": True}
        return arguments

    def _fall_back(self, err: openai.APIStatusError) -> bool:
        """Drop an optional parameter the server rejected; True when the request should be sent again now."""
        if err.status_code not in (400, 422):
            return False
        text = f"{err.message} {err.body}"
        if self.streaming and self.send_stream_options and "stream_options" in text:
            self.send_stream_options = False
            log.info("server rejects stream_options; sending requests without it")
            return True
        if self.send_parallel_tool_calls and "parallel_tool_calls" in text:
            self.send_parallel_tool_calls = False
            log.info("server rejects parallel_tool_calls; sending requests without it")
            return True
        if self.output_cap and _cap(self.settings.max_output_tokens, self.model_settings.max_reply_tokens) \
                and self.output_cap in text:
            # newer OpenAI models want max_completion_tokens; a server that knows neither gets none
            self.output_cap = "max_completion_tokens" if self.output_cap == "max_tokens" else ""
            log.info("server rejects the output cap parameter; now: %s", self.output_cap or "none")
            return True
        return False

    def _attempts(self, err: Exception) -> int:
        attempts = self.settings.retries + 1
        if isinstance(err, openai.APIStatusError) and err.status_code == 500:
            return min(attempts, SERVER_ERROR_TRIES)
        return attempts if self.reached or not _cannot_connect(err) else min(attempts, FIRST_CONTACT_TRIES)

    def _gave_up(self, err: Exception, attempts: int, detail: str) -> ModelError:
        if not self.reached and _cannot_connect(err):
            return ServerUnreachable(
                f"Cannot reach the model server at {self._base_url()}: {detail} ({attempts} tries). "
                "Start the server, or check OPENAI_BASE_URL (host, port, and usually a trailing /v1).")
        return ModelError(f"Model request failed after {attempts} attempts; last error: {detail}. "
                          f"Check that the server at {self._base_url()} is up and reachable.")

    def _not_an_api(self, answered: str) -> NotAnAPI:
        url = self._base_url()
        hint = ("most servers expect it to end in /v1, e.g. http://localhost:11434/v1 (Ollama), "
                "http://localhost:8080/v1 (llama.cpp), http://localhost:8000/v1 (vLLM)")
        return NotAnAPI(f"{url} is not an OpenAI-compatible API (it answered {answered}). Check the base URL "
                        f"(OPENAI_BASE_URL, or base_url in {self.settings.home}/config.toml): {hint}.")

    def _check_time(self, deadline: float | None) -> None:
        if deadline is not None and time.monotonic() >= deadline:
            raise self._out_of_time("the reply in progress is dropped")

    def _out_of_time(self, why: str) -> LimitReached:
        return LimitReached(f"Reached the time limit ({self.settings.max_time:g} s) while waiting for the model; "
                            f"{why}. The run is saved.")

    def _transient(self, err: Exception) -> tuple[str, str, float | None]:
        """(short reason, detail, server's Retry-After) of a failure worth retrying; raises ModelError otherwise."""
        if isinstance(err, openai.APIStatusError):
            status = err.status_code
            if overflow := context_overflow(err):
                raise overflow from None
            if not self.replied and (answered := not_an_api(status, err.response.headers, err.response.text)):
                raise self._not_an_api(answered) from None
            if status not in RETRYABLE and status < 500:
                raise ModelError(self._refusal(err)) from None
            reason = f"{status} {RETRYABLE.get(status, 'server error')}"
            return reason, f"{reason}: {server_message(err)[:200]}", retry_after_seconds(err.response.headers)
        if isinstance(err, openai.APITimeoutError | DeadlinePassed):
            reason = f"no complete reply within {self.settings.request_timeout:g} s"
        elif isinstance(err, openai.APIConnectionError):
            reason = f"connection failed ({err.__cause__ or err})"
        elif isinstance(err, ValueError):  # JSON or UTF-8 decoding of a 200 body
            reason = f"broken reply (not valid JSON: {str(err)[:120]})"
        else:
            reason = f"broken reply ({str(err)[:200]})"
        return reason, reason, None

    def _refusal(self, err: openai.APIStatusError) -> str:
        """The message for a status that retrying will not fix: what the server said and what to check."""
        status = err.status_code
        message = f"Model request failed: HTTP {status}: {server_message(err)}"
        if status in (401, 403):
            message += f"\nCheck OPENAI_API_KEY: the server at {self._base_url()} refused the key"
            message += f" for model {self.settings.model!r}." if status == 403 else "."
        elif status == 404:
            message += (
                f"\nCheck the model name (GA_MODEL or --model: {self.settings.model!r}) and the base URL "
                f"(OPENAI_BASE_URL: {self._base_url()}; most servers expect it to end in /v1)."
            )
        return message

    def context_window(self) -> int | None:
        """The model's context length as the server reports it (vLLM's max_model_len, OpenRouter's context_length,
        llama.cpp's n_ctx from /props), or None when it does not say."""
        try:
            listed = self.client.with_options(timeout=10).models.list().data
        except (openai.APIError, ValueError):
            return None
        entry = next((m for m in listed if m.id == self.settings.model), listed[0] if len(listed) == 1 else None)
        extra = (entry.model_extra or {}) if entry is not None else {}
        for name in _WINDOW_FIELDS:
            if isinstance(extra.get(name), int) and extra[name] > 0:
                return extra[name]
        if isinstance((extra.get("meta") or {}).get("n_ctx_train"), int):  # llama.cpp: the server's own n_ctx
            try:
                props = self.client.with_options(timeout=10).get(_root(self._base_url()) + "/props", cast_to=object)
                return int(props["default_generation_settings"]["n_ctx"])
            except (openai.APIError, KeyError, TypeError, ValueError):
                return extra["meta"]["n_ctx_train"]
        return None

    def _wait(self, reason: str, delay: float, next_attempt: int, attempts: int) -> None:
        notice = f"{reason}; retrying in {delay:.1f} s (attempt {next_attempt}/{attempts})"
        log.info("model request: %s", notice)
        if self.on_retry:
            self.on_retry(notice)
        self.retries += 1
        time.sleep(delay)

    def _base_url(self) -> str:
        return str(self.client.base_url).rstrip("/")


def _cannot_connect(err: Exception) -> bool:
    """No connection at all (refused, unknown host): the SDK's connection error caused by a ConnectError."""
    cause = err.__cause__
    return (isinstance(err, openai.APIConnectionError) and not isinstance(err, openai.APITimeoutError)
            and cause is not None and any(c.__name__ == "ConnectError" for c in type(cause).__mro__))


def _cap(configured: int, model: int) -> int:
    """The completion cap: GA_MAX_OUTPUT_TOKENS, lowered by the model's own setting (0: none of that one)."""
    return min(c for c in (configured, model) if c) if configured or model else 0
