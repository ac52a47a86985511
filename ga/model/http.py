"""The HTTP side of the model client: what the openai SDK's own retries cannot know, as the HTTP client's hooks.

The SDK retries a request that failed before its reply began (408, 409, 429 and 5xx, honouring Retry-After; a
dropped connection; a timeout) with jittered backoff. Around each attempt the hooks add: a deadline per attempt
(GA_REQUEST_TIMEOUT) and for the run (--max-time), both total, since the HTTP library's timeouts are per read and a
server sending a keep-alive every 2 s never trips them; a size cap on every body; no retry of an answer that shows
the server is no OpenAI-compatible API, of a wait that would end after the run's deadline, or of a first contact
that reached nothing after a few tries; and a notice for every retry."""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import time
from collections.abc import Callable, Iterator

import openai

from ga.model.server_errors import RETRYABLE, not_an_api
from ga.model.stream import IncompleteReply

MAX_REPLY_BYTES = 16_000_000
"""Bytes accepted for one reply. SSE framing costs about 200 bytes per token, so this allows some 80,000 streamed
tokens; a larger body is a broken server or proxy, and reading it whole would only fill memory."""
CONNECT_TIMEOUT = 15.0
"""Seconds to open a connection: a host that does not answer is as good as down."""
FIRST_CONTACT_TRIES = 3
"""Attempts while nothing has ever answered: a typo'd URL or a server not started fails in seconds."""


class ReplyTooLarge(IncompleteReply):
    """The body passed MAX_REPLY_BYTES: it is dropped unread, like a broken reply."""


class DeadlinePassed(Exception):
    """The attempt's total deadline passed while its body was still coming."""


class NotRetried(openai.APIConnectionError):
    """Raised by the request hook to end the SDK's retries (it passes its own errors through): the run's deadline
    passed, or nothing ever answered."""


class Exchange:
    """The HTTP client's event hooks, and what they saw. Call begin() before each request of the model."""

    def __init__(self, *, request_timeout: float, retries: int, max_bytes: int = MAX_REPLY_BYTES,
                 on_retry: Callable[[str], None] | None = None):
        self.request_timeout, self.retries, self.max_bytes = request_timeout, retries, max_bytes
        self.on_retry = on_retry
        self.run_deadline: float | None = None
        self.deadline: float | None = None
        """This attempt's end (time.monotonic())."""
        self.attempts = 0
        self.retried = 0
        """Retries over all requests (not counted in Usage.requests)."""
        self.reached = False
        """Some answer (even an error status) has come from the server: it exists."""
        self.replied = False
        """A reply has come: the server is an API, and a web page from it now is a proxy's passing trouble."""
        self.last = ""
        """What the last attempt's answer was when it failed ("429 rate limited"), for the notice and the error."""
        self.out_of_time = False

    def begin(self, run_deadline: float | None) -> None:
        self.run_deadline, self.attempts, self.out_of_time = run_deadline, 0, False

    def on_request(self, request: object) -> None:
        now, retry = time.monotonic(), int(request.headers.get("x-stainless-retry-count") or 0)  # type: ignore[attr-defined]
        if retry and self.run_deadline is not None and now >= self.run_deadline:
            self.out_of_time = True
            raise NotRetried(message="the run's time is up", request=request)  # type: ignore[arg-type]
        if retry and not self.reached and self.attempts >= FIRST_CONTACT_TRIES:
            raise NotRetried(message="nothing answered", request=request)  # type: ignore[arg-type]
        if retry:
            self.retried += 1
            timed_out = self.deadline is not None and now >= self.deadline  # the attempt before was given up
            why = self.last or (f"no complete reply within {self.request_timeout:g} s" if timed_out else
                                "the connection failed")
            most = self.retries if self.reached else min(self.retries, FIRST_CONTACT_TRIES - 1)
            if self.on_retry:  # a server never heard from gets fewer tries: the count says so
                self.on_retry(f"{why}; retrying (retry {retry} of {most})")
        self.attempts, self.last = self.attempts + 1, ""
        ends = now + self.request_timeout
        self.deadline = ends if self.run_deadline is None else min(ends, self.run_deadline)
        left = max(0.1, self.deadline - now)  # until the headers come, the per-read timeout is the time left
        given = request.extensions.get("timeout") or {}  # type: ignore[attr-defined]
        most = {"connect": min(left, CONNECT_TIMEOUT), "read": left, "write": left, "pool": left}
        request.extensions["timeout"] = {k: min(given.get(k) or most[k], most[k]) for k in most}  # type: ignore[attr-defined]

    def on_response(self, response: object) -> None:
        self.reached = True
        status, headers = response.status_code, response.headers  # type: ignore[attr-defined]
        if status >= 400:
            self.last = f"{status} {RETRYABLE.get(status, 'server error')}"
            if (status in RETRYABLE or status >= 500) and self.run_deadline is not None:
                self.out_of_time = time.monotonic() + _wait_asked(headers) >= self.run_deadline
            if self.out_of_time or (not self.replied and not_an_api(status, headers)):
                headers["x-should-retry"] = "false"  # the SDK's own switch
        stream = response.stream  # type: ignore[attr-defined]
        watchdog = _watchdog(response, self.deadline) if self.deadline is not None else None
        response.stream = _guarded_class(type(stream))(stream, self, watchdog)  # type: ignore[attr-defined]

    def check(self, received: int) -> None:
        if received > self.max_bytes:
            raise ReplyTooLarge(f"reply larger than {self.max_bytes / 1e6:g} MB; dropped")
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise DeadlinePassed


def _wait_asked(headers: object) -> float:
    """Seconds a refusal asks to wait (retry-after-ms or Retry-After in seconds; 0 when it names none)."""
    for name, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            return float(headers.get(name) or "") / scale  # type: ignore[attr-defined]
        except ValueError:
            continue
    return 0.0


def _watchdog(response: object, deadline: float) -> threading.Timer:
    """A timer that shuts the response's socket at the deadline (a blocked read then returns at once); its `fired`
    says it did."""
    def fire() -> None:
        timer.fired = True  # type: ignore[attr-defined]
        stream = getattr(response, "extensions", {}).get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        with contextlib.suppress(OSError, RuntimeError):  # already closed: the read ends anyway
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
            else:  # no socket to reach: closing the response is the next best thing
                response.close()  # type: ignore[attr-defined]

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), fire)
    timer.fired, timer.daemon = False, True  # type: ignore[attr-defined]
    timer.start()
    return timer


def http_client(exchange: Exchange, made: openai.DefaultHttpxClient | None = None) -> openai.DefaultHttpxClient:
    """The SDK's own HTTP client (its defaults kept) with the exchange's hooks; `made`: one built ahead with those
    defaults (on a background thread at start-up), given the hooks here."""
    hooks = {"request": [exchange.on_request], "response": [exchange.on_response]}
    if isinstance(made, openai.DefaultHttpxClient):
        made.event_hooks = hooks
        return made
    return openai.DefaultHttpxClient(event_hooks=hooks)


@functools.cache
def _guarded_class(stream_type: type) -> type:
    # The HTTP library checks isinstance(stream, SyncByteStream): subclass whichever library the SDK uses.
    base = next((c for c in stream_type.__mro__ if c.__name__ == "SyncByteStream"), object)

    class GuardedStream(base):  # type: ignore[misc, valid-type]
        def __init__(self, inner: object, exchange: Exchange, watchdog: threading.Timer | None):
            self._inner, self._exchange, self._watchdog = inner, exchange, watchdog

        def __iter__(self) -> Iterator[bytes]:
            received = 0
            try:
                for chunk in self._inner:  # type: ignore[attr-defined]
                    received += len(chunk)
                    self._exchange.check(received)
                    yield chunk
            except Exception as err:
                if self._watchdog is not None and self._watchdog.fired:  # type: ignore[attr-defined]
                    raise DeadlinePassed from err  # the watchdog shut the socket: not a broken server
                raise
            finally:
                self._stop()

        def close(self) -> None:
            self._stop()
            self._inner.close()  # type: ignore[attr-defined]

        def _stop(self) -> None:
            if self._watchdog is not None:
                self._watchdog.cancel()

    return GuardedStream
