"""The HTTP side of the model client: a total deadline and a size cap on every response body.

The HTTP library's timeouts are per read: a server that sends a keep-alive every 2 s never trips them, and one
that sends its headers late restarts the clock for the body. So the client's response hook wraps each body in a
guard that counts the bytes and checks the clock at every chunk, and arms a watchdog that shuts the socket at
the deadline, which wakes a read that is waiting on a silent server. Until the headers arrive, the per-read
timeout (the time left when the request is sent) holds.
"""

from __future__ import annotations

import functools
import socket
import threading
import time
from collections.abc import Iterator

import openai

from ga.model.stream import IncompleteReply

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
        watchdog = _Watchdog(response, self.deadline) if self.deadline is not None else None
        response.stream = _guarded_class(type(stream))(stream, self, watchdog)  # type: ignore[attr-defined]

    def check(self, received: int) -> None:
        if received > self.max_bytes:
            raise ReplyTooLarge(f"reply larger than {self.max_bytes / 1e6:g} MB; dropped")
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise DeadlinePassed


class _Watchdog:
    """Shuts the response's socket at the deadline: a blocked read then returns at once."""

    def __init__(self, response: object, deadline: float):
        self.fired = False
        self._response = response
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        stream = getattr(self._response, "extensions", {}).get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
            else:  # no socket to reach: closing the response is the next best thing
                self._response.close()  # type: ignore[attr-defined]
        except (OSError, RuntimeError):
            pass  # already closed: the read ends anyway

    def cancel(self) -> None:
        self._timer.cancel()


def http_client(guard: BodyGuard) -> openai.DefaultHttpxClient:
    """The SDK's own HTTP client (its defaults kept) with the guard as a response hook."""
    return openai.DefaultHttpxClient(event_hooks={"response": [guard]})


@functools.cache
def _guarded_class(stream_type: type) -> type:
    # The HTTP library checks isinstance(stream, SyncByteStream): subclass whichever library the SDK uses.
    base = next((c for c in stream_type.__mro__ if c.__name__ == "SyncByteStream"), object)

    class GuardedStream(base):  # type: ignore[misc, valid-type]
        def __init__(self, inner: object, guard: BodyGuard, watchdog: _Watchdog | None):
            self._inner, self._guard, self._watchdog = inner, guard, watchdog

        def __iter__(self) -> Iterator[bytes]:
            received = 0
            try:
                for chunk in self._inner:  # type: ignore[attr-defined]
                    received += len(chunk)
                    self._guard.check(received)
                    yield chunk
            except Exception as err:
                if self._watchdog is not None and self._watchdog.fired:
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
