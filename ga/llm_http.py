"""The HTTP side of the model client: a total deadline and a size cap on every response body.

The HTTP library's timeouts are per read: a server that sends a keep-alive every 2 s never trips them. So the
client's response hook wraps each body in a guard that checks the clock and counts the bytes at every chunk;
the per-read timeout (set to the time left) covers a server that sends nothing at all.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator

import openai

from ga.llm_stream import IncompleteReply

MAX_REPLY_BYTES = 16_000_000
"""Bytes accepted for one reply. SSE framing costs about 200 bytes per token, so this allows some 80,000 streamed
tokens; a larger body is a broken server or proxy, and reading it whole would only fill memory."""


class ReplyTooLarge(IncompleteReply):
    """The body passed MAX_REPLY_BYTES: it is dropped unread, like a broken reply."""


class DeadlinePassed(Exception):
    """The request's total deadline passed while its body was still coming."""


class BodyGuard:
    """The response hook. Set `deadline` (time.monotonic()) before each request."""

    def __init__(self, max_bytes: int = MAX_REPLY_BYTES):
        self.max_bytes = max_bytes
        self.deadline: float | None = None

    def __call__(self, response: object) -> None:
        stream = response.stream  # type: ignore[attr-defined]
        response.stream = _guarded_class(type(stream))(stream, self)  # type: ignore[attr-defined]

    def check(self, received: int) -> None:
        if received > self.max_bytes:
            raise ReplyTooLarge(f"reply larger than {self.max_bytes / 1e6:g} MB; dropped")
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise DeadlinePassed


def http_client(guard: BodyGuard) -> openai.DefaultHttpxClient:
    """The SDK's own HTTP client (its defaults kept) with the guard as a response hook."""
    return openai.DefaultHttpxClient(event_hooks={"response": [guard]})


@functools.cache
def _guarded_class(stream_type: type) -> type:
    # The HTTP library checks isinstance(stream, SyncByteStream): subclass whichever library the SDK uses.
    base = next((c for c in stream_type.__mro__ if c.__name__ == "SyncByteStream"), object)

    class GuardedStream(base):  # type: ignore[misc, valid-type]
        def __init__(self, inner: object, guard: BodyGuard):
            self._inner, self._guard = inner, guard

        def __iter__(self) -> Iterator[bytes]:
            received = 0
            for chunk in self._inner:  # type: ignore[attr-defined]
                received += len(chunk)
                self._guard.check(received)
                yield chunk

        def close(self) -> None:
            self._inner.close()  # type: ignore[attr-defined]

    return GuardedStream
