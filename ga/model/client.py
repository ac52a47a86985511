"""The OpenAI-compatible model client: Chat Completions with native tool calling and streaming; the openai SDK
retries, ga/model/http.py adds what it cannot know."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable

import openai

from ga.config import Settings
from ga.errors import LimitReached, ModelError, NotAnAPI, ServerUnreachable
from ga.model.http import MAX_REPLY_BYTES, DeadlinePassed, Exchange, http_client
from ga.model.server_errors import RETRYABLE, context_overflow, not_an_api, server_message
from ga.model.settings import ModelSettings
from ga.model.stream import IncompleteReply, ReplyBuilder
from ga.protocols import Reply
from ga.tooling.encoding import scrub

log = logging.getLogger(__name__)

PAGE_START = 16_384
"""Bytes of a web page read to find its title."""
_BROKEN = (IncompleteReply, DeadlinePassed, json.JSONDecodeError, UnicodeDecodeError)
"""What a reply broken after it began raises (the SDK has returned by then: it retries nothing of it)."""

LIST_TIMEOUT = 10.0
"""Seconds GET /models and /props may take, one try: a start or a listing must not hang on a dead server."""
_WINDOW_FIELDS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx")
"""Fields of a /models entry that some servers use for the context length."""

class OpenAIModel:
    """A Model (ga.protocols) for any OpenAI-compatible Chat Completions server."""

    def __init__(self, settings: Settings, on_retry: Callable[[str], None] | None = None,
                 max_reply_bytes: int = MAX_REPLY_BYTES, model_settings: ModelSettings | None = None,
                 http: object | None = None):
        self.settings = settings
        self.model_settings = model_settings or ModelSettings()
        """This model's behaviour (ga/model/settings.py): here, when a streamed reply counts as a loop."""
        self.on_retry = on_retry
        self.send_stream_options = self.send_parallel_tool_calls = True  # off for good once the server rejects one
        self.output_cap = "max_tokens"
        """The parameter that bounds a completion: max_tokens, else max_completion_tokens, else none ("")."""
        self.streaming = settings.stream
        """Turned off for good when a streamed request comes back with no stream events at all."""
        self.began = False
        """The reply of the request under way began to come (a status of 2xx and its headers)."""
        self.exchange = Exchange(request_timeout=settings.request_timeout, retries=settings.retries,
                                 max_bytes=max_reply_bytes, on_retry=on_retry)
        # Local servers need no key, but the SDK refuses an empty one.
        self.client = openai.OpenAI(base_url=settings.base_url or None, api_key=settings.api_key or "none",
                                    max_retries=settings.retries, timeout=settings.request_timeout,
                                    http_client=http_client(self.exchange, http))  # `http`: ga/cli/warm.py's

    @property
    def retries(self) -> int:
        """Retries done so far over all requests (they are not counted in Usage.requests)."""
        return self.exchange.retried

    def complete(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None] | None = None,
                 *, deadline: float | None = None) -> Reply:
        """One reply; `deadline` (time.monotonic()) is the run's end. The SDK retries what failed before the reply
        began; a reply broken after it began (a stream cut short, a body that is no reply) is asked for again, up
        to GA_RETRIES times. Streamed text that reached on_text before it broke comes again, after on_retry's notice."""
        broken = 0
        while True:
            self.exchange.begin(deadline)
            self.began = False
            try:
                reply = self._request(messages, tools, on_text)
                self.exchange.replied = True
                return reply
            except openai.APIStatusError as err:
                if not self._fall_back(err):
                    raise self._refused(err) from None
            except (openai.APIConnectionError, *_BROKEN) as err:
                if isinstance(err, openai.APIConnectionError) and not self.began:
                    raise self._unreachable(err) from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise self._out_of_time("the reply in progress is dropped") from None
                if broken >= self.settings.retries:
                    raise ModelError(f"Model request failed after {broken + 1} attempts; last error: "
                                     f"{self._broken(err)}. Check the server at {self._base_url()}.") from None
                broken += 1
                self.exchange.retried += 1
                if self.on_retry:
                    self.on_retry(f"{self._broken(err)}; asking again (retry {broken} of {self.settings.retries})")

    def _request(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None] | None) -> Reply:
        builder = ReplyBuilder(on_text, self.model_settings)
        raw = self.client.chat.completions.with_raw_response.create(**self._arguments(messages, tools))
        self.began = True  # from here on a failure breaks a reply that began: the SDK retries none of it
        if "html" in raw.headers.get("content-type", "") and not self.exchange.replied:  # a web page, even with 200
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
                    if builder.looped or builder.past(self.exchange.run_deadline):  # closing it stops the server
                        break
            if builder.chunks == 0:  # a server that ignores stream=true and answers with plain JSON
                self.streaming = False
                log.info("server sent no stream events; sending requests without streaming")
                return self._request(messages, tools, on_text)
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
        if self.output_cap and self._cap():
            arguments[self.output_cap] = self._cap()
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
        elif self.send_parallel_tool_calls and "parallel_tool_calls" in text:
            self.send_parallel_tool_calls = False
        elif self.output_cap and self._cap() and self.output_cap in text:
            # newer OpenAI models want max_completion_tokens; a server that knows neither gets none
            self.output_cap = "max_completion_tokens" if self.output_cap == "max_tokens" else ""
        else:
            return False
        log.info("server rejected a parameter; now stream_options: %s, parallel_tool_calls: %s, output cap: %s",
                 self.send_stream_options, self.send_parallel_tool_calls, self.output_cap or "none")
        return True

    def _cap(self) -> int:
        """The completion cap: GA_MAX_OUTPUT_TOKENS, lowered by the model's own setting (0: none of either)."""
        return min((c for c in (self.settings.max_output_tokens, self.model_settings.max_reply_tokens) if c), default=0)

    def _not_an_api(self, answered: str) -> NotAnAPI:
        url = self._base_url()
        hint = ("most servers expect it to end in /v1, e.g. http://localhost:11434/v1 (Ollama), "
                "http://localhost:8080/v1 (llama.cpp), http://localhost:8000/v1 (vLLM)")
        return NotAnAPI(f"{url} is not an OpenAI-compatible API (it answered {answered}). Check the base URL "
                        f"(OPENAI_BASE_URL, or base_url in {self.settings.home}/config.toml): {hint}.")

    def _out_of_time(self, why: str) -> LimitReached:
        return LimitReached(f"Reached the time limit ({self.settings.max_time:g} s) while waiting for the model; "
                            f"{why}. The run is saved.")

    def _refused(self, err: openai.APIStatusError) -> Exception:
        """What a status the SDK did not (or no longer) retry means: a context overflow, no API at all, the run's
        time up, retries spent, or a refusal that retrying will not fix (what the server said, what to check)."""
        if overflow := context_overflow(err):
            return overflow
        if not self.exchange.replied and (answered := not_an_api(err.status_code, err.response.headers,
                                                                  err.response.text)):
            return self._not_an_api(answered)
        if self.exchange.out_of_time:
            return self._out_of_time(f"the retry after {self.exchange.last} would end after it")
        if err.status_code >= 500 or err.status_code in RETRYABLE:
            # it answered: it is up, and failing on this request (never "check it is reachable")
            return ModelError(f"Model request failed after {self.exchange.attempts} attempts: the server at "
                              f"{self._base_url()} answered {self.exchange.last}: {server_message(err)[:200]}. It is "
                              "reachable but could not serve this request: its log says why (a crash, an overload, "
                              "a request it cannot handle).")
        message = f"Model request failed: HTTP {err.status_code}: {server_message(err)}"
        if err.status_code in (401, 403):
            message += f"\nCheck OPENAI_API_KEY: the server at {self._base_url()} refused the key"
            message += f" for model {self.settings.model!r}." if err.status_code == 403 else "."
        elif err.status_code == 404:
            message += (f"\nCheck the model name (GA_MODEL or --model: {self.settings.model!r}) and the base URL "
                        f"(OPENAI_BASE_URL: {self._base_url()}; most servers expect it to end in /v1).")
        return ModelError(message)

    def _unreachable(self, err: openai.APIConnectionError) -> Exception:
        deadline = self.exchange.run_deadline
        if self.exchange.out_of_time or (isinstance(err, openai.APITimeoutError) and deadline is not None
                                         and time.monotonic() >= deadline - 0.05):
            return self._out_of_time("the reply in progress is dropped")
        tries = f"{self.exchange.attempts} {'try' if self.exchange.attempts == 1 else 'tries'}"
        if not self.exchange.reached:
            cause = f": {err.__cause__}" if err.__cause__ else ""
            return ServerUnreachable(f"Cannot reach the model server at {self._base_url()}{cause} ({tries}). Start "
                                     "the server, or check OPENAI_BASE_URL (host, port, and usually a trailing /v1).")
        what = (f"no complete reply within {self.settings.request_timeout:g} s"
                if isinstance(err, openai.APITimeoutError) else f"connection failed ({err.__cause__ or err})")
        return ModelError(f"Model request failed after {tries}; last error: {what}. Check that the server at "
                          f"{self._base_url()} is up and reachable.")

    def _broken(self, err: Exception) -> str:
        if isinstance(err, DeadlinePassed):
            return f"no complete reply within {self.settings.request_timeout:g} s"
        if isinstance(err, openai.APIConnectionError):
            return f"the connection broke mid-reply ({err.__cause__ or err})"
        if isinstance(err, ValueError):  # JSON or UTF-8 decoding of a 200 body
            return f"broken reply (not valid JSON: {str(err)[:120]})"
        return f"broken reply ({str(err)[:200]})"

    def model_list(self) -> list[dict]:
        """GET /models as JSON entries, one try (the SDK's typed list costs a start ~40 ms of imports for two
        fields); ValueError when the answer is not a model list."""
        listed = self.client.with_options(timeout=LIST_TIMEOUT, max_retries=0).get("/models", cast_to=object)
        data = listed.get("data") if isinstance(listed, dict) else None
        if not isinstance(data, list):
            raise ValueError("not a model list")
        return [m for m in data if isinstance(m, dict)]

    def context_window(self, listed: list[dict] | None = None) -> int | None:
        """The model's context length as the server reports it (vLLM's max_model_len, OpenRouter's context_length,
        llama.cpp's n_ctx from /props), or None when it does not say; `listed`: model_list() already read."""
        if listed is None:
            try:
                listed = self.model_list()
            except (openai.APIError, ValueError):
                return None
        extra = next((m for m in listed if m.get("id") == self.settings.model), listed[0] if len(listed) == 1 else {})
        for name in _WINDOW_FIELDS:
            if isinstance(extra.get(name), int) and extra[name] > 0:
                return extra[name]
        meta = extra.get("meta")
        if isinstance(meta, dict) and isinstance(meta.get("n_ctx_train"), int):  # llama.cpp: the server's own n_ctx
            try:
                once = self.client.with_options(timeout=LIST_TIMEOUT, max_retries=0)
                props = once.get(self._base_url().removesuffix("/v1") + "/props", cast_to=object)
                return int(props["default_generation_settings"]["n_ctx"])
            except (openai.APIError, KeyError, TypeError, ValueError):
                return meta["n_ctx_train"]
        return None

    def _base_url(self) -> str:
        return str(self.client.base_url).rstrip("/")
