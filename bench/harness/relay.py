"""One metered exchange between an agent and its model, as the proxy relays it: the request goes up (with usage
asked for when the agent did not), the reply comes back as it was sent, the meter reads it on the way, and the
exchange is recorded; a cassette may stand in for the upstream."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from bench.harness.cassette import Recording, request_key
from bench.harness.meter import CHAT, Metered, StreamMeter, count_locally, from_json


class AgentSide(Protocol):
    """What a relay needs of the proxy's request handler: the agent's request and the way back to it."""

    path: str
    command: str
    headers: Any
    wfile: Any
    proxy: Any
    """The MeteringProxy: its upstream, cassette, rewrite and the connections it tracks."""

    def send_bytes(self, status: int, content_type: str, data: bytes) -> None: ...

    def start_stream(self, status: int, content_type: str) -> None: ...

_HOP = {"host", "connection", "content-length", "accept-encoding", "transfer-encoding", "keep-alive"}
_CREDENTIALS = {"authorization", "x-api-key", "api-key", "proxy-authorization", "cookie"}


@dataclass(kw_only=True)
class Upstream:
    openai_base: str = ""
    """The OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (empty: cassette replay only)."""
    anthropic_base: str = "https://api.anthropic.com"
    """The Anthropic endpoint (the client's /v1/messages is appended)."""
    api_key: str = ""
    """Put on requests to the OpenAI-compatible upstream in place of the agent's key (the trial's token, which never
    goes up); empty: no key goes up."""
    anthropic_key: str = ""
    """Likewise for the Anthropic upstream (x-api-key)."""
    timeout: float = 600
    """Seconds to wait for the upstream."""
    output_cap: int = 0
    """Output tokens per request at most, for every agent alike: the request's own cap is lowered to it, or set when
    the agent sent none (a first reply that never ends would otherwise spend one agent's whole trial). 0: none."""


@dataclass(kw_only=True)
class Exchange:
    t: float
    api: str
    path: str
    model: str = ""
    stream: bool = False
    status: int = 0
    latency_s: float = 0.0
    ttft_s: float | None = None
    """Seconds to the first streamed event."""
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    usage_source: str = ""
    server_ms: float | None = None
    """The server's processing time, queueing left out (llama.cpp reports it)."""
    tool_calls: list[dict] = field(default_factory=list)
    content: str = ""
    finish_reason: str = ""
    replay: str = ""
    """"key" or "order" when served from a cassette."""
    error: str = ""
    request: dict = field(default_factory=dict)
    """The request body as the agent sent it."""


CAP_KEYS = {"responses": ("max_output_tokens",), "anthropic": ("max_tokens",)}
"""The fields that cap a reply, per API (Chat Completions: the default)."""


def capped(api: str, body: dict, cap: int) -> dict:
    """The request with its output cap at most `cap` (set to it where the agent sent none)."""
    keys = CAP_KEYS.get(api, ("max_tokens", "max_completion_tokens"))
    outgoing = dict(body)
    if cap <= 0:
        return outgoing
    sent = [k for k in keys if isinstance(outgoing.get(k), int) and not isinstance(outgoing.get(k), bool)]
    for key in sent or keys[:1]:
        outgoing[key] = min(outgoing.get(key) or cap, cap)
    return outgoing


class UpstreamCall:
    """One request to the upstream, its response in .response; close() when done. The proxy tracks open calls and
    cut()s them when it closes: the model stops working for an agent that is gone."""

    def __init__(self, handler: AgentSide, target: str, raw: bytes, upstream: Upstream):
        parts = urlsplit(target)
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.conn = kind(parts.netloc, timeout=upstream.timeout)
        self.tracker = handler.proxy
        # the agent's key is the trial's token: it never goes up; the real key does, when there is one
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP | _CREDENTIALS}
        anthropic = handler.path.startswith("/anthropic/")
        if key := (upstream.anthropic_key if anthropic else upstream.api_key):
            headers.update({"x-api-key": key} if anthropic else {"Authorization": f"Bearer {key}"})
        headers["Accept-Encoding"] = "identity"  # the meter reads the body
        self.conn.request(handler.command, parts.path + (f"?{parts.query}" if parts.query else ""), body=raw or None,
                          headers=headers)
        self.sock = self.conn.sock  # the response keeps using it after http.client lets go of it
        self.tracker.track(self, True)
        try:
            self.response = self.conn.getresponse()
        except BaseException:
            self.close()
            raise

    def cut(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked reading it; a plain close() would not
        except OSError:
            pass

    def close(self) -> None:
        self.conn.close()
        with contextlib.suppress(OSError):
            self.sock.close()
        self.tracker.track(self, False)


class Relay:
    """One metered exchange: replay or forward, relay the reply, meter it, record it."""

    def __init__(self, handler: AgentSide, api: str, body: dict):
        self.h, self.api, self.body = handler, api, body
        self.proxy = handler.proxy
        self.ex = Exchange(t=time.time(), api=api, path=handler.path.split("?")[0], model=str(body.get("model", "")),
                           stream=body.get("stream") is True, request=body)
        self.injected = False
        """True when the proxy added include_usage: the usage-only chunk is then kept from the agent."""
        self.started = time.monotonic()
        self.content_type = "application/json"
        self.stream_meter: StreamMeter | None = None
        self.received: list[bytes] = []
        """The reply as the upstream sent it (what a cassette keeps)."""

    def run(self) -> None:
        key = request_key(self.ex.path, self.body, self.proxy.rewrite)
        cassette = self.proxy.cassette
        try:
            if cassette is not None and cassette.mode == "replay":
                metered = self._replay(cassette.find(key))
            else:
                metered = self._forward()
        finally:
            self.ex.latency_s = round(time.monotonic() - self.started, 3)
        if metered is not None:
            if not metered.usage_source:
                count_locally(self.api, self.body, metered)
            for name in ("input_tokens", "cached_tokens", "output_tokens", "usage_source", "tool_calls", "content",
                         "finish_reason", "server_ms"):
                setattr(self.ex, name, getattr(metered, name))
        if cassette is not None and cassette.mode == "record" and self.ex.status:
            cassette.save(Recording(key=key, status=self.ex.status, content_type=self.content_type,
                                    body=b"".join(self.received).decode("utf-8", "replace")))
        self.proxy.record(self.ex)

    def _forward(self) -> Metered | None:
        target = self.proxy.target(self.h.path)
        if not target:
            return self._fail(404, f"metering proxy: no upstream for {self.h.path}")
        outgoing = base = capped(self.api, self.body, self.proxy.upstream.output_cap)
        if self._wants_usage_added():
            outgoing = dict(base)
            outgoing["stream_options"] = {**(self.body.get("stream_options") or {}), "include_usage": True}
            self.injected = True
        try:
            call = UpstreamCall(self.h, target, json.dumps(outgoing).encode(), self.proxy.upstream)
            if call.response.status in (400, 422) and self.injected:
                data = call.response.read()
                call.close()
                if b"stream_options" not in data:
                    return self._relay_error(call.response.status, call.response.getheader("Content-Type", ""), data)
                self.injected = False  # the server refuses the option: usage gets counted locally
                call = UpstreamCall(self.h, target, json.dumps(base).encode(), self.proxy.upstream)
        except OSError as e:
            if self.proxy.closing:
                raise  # cut off with its agent gone: recorded as abandoned
            return self._fail(502, f"metering proxy: upstream {target} unreachable: {e}")
        try:
            return self._relay(call.response)
        finally:
            call.close()

    def _wants_usage_added(self) -> bool:
        return (self.api == CHAT and self.ex.stream
                and not (self.body.get("stream_options") or {}).get("include_usage"))

    def _relay(self, response: http.client.HTTPResponse) -> Metered | None:
        self.ex.status = response.status
        self.content_type = response.getheader("Content-Type", "application/json")
        if response.status != 200:
            return self._relay_error(response.status, self.content_type, response.read())
        if "text/event-stream" in self.content_type:
            return self._relay_stream(iter(response.readline, b""))
        data = response.read()
        self.received.append(data)
        self._send(data)
        return self._meter_json(data)

    def _meter_json(self, data: bytes) -> Metered | None:
        try:
            return from_json(self.api, json.loads(data))
        except (ValueError, AttributeError) as e:
            self.ex.error = f"reply is not the JSON this API returns: {e}"
            return None

    def abandoned(self) -> Exchange:
        """The agent went away mid-reply (killed at its deadline...): the tokens the model spent so far still count,
        as a local estimate, under status 499 (not an answered request). A reply that had not started counts
        nothing: a busy single-slot server may not have begun the request at all."""
        partial = self.stream_meter.result() if self.stream_meter else Metered()
        if self.stream_meter is not None:
            count_locally(self.api, self.body, partial)
        self.ex.input_tokens, self.ex.output_tokens = partial.input_tokens, partial.output_tokens
        self.ex.content, self.ex.tool_calls = partial.content, partial.tool_calls
        self.ex.status, self.ex.usage_source = 499, "local"
        self.ex.error = "the agent closed the connection mid-reply"
        self.ex.latency_s = round(time.monotonic() - self.started, 3)
        return self.ex

    def _relay_stream(self, lines) -> Metered:
        self.h.start_stream(self.ex.status, self.content_type)
        meter, event, buffer = StreamMeter(self.api), "", []
        self.stream_meter = meter
        for line in lines:
            if self.ex.ttft_s is None:
                self.ex.ttft_s = round(time.monotonic() - self.started, 3)
            buffer.append(line)
            text = line.decode("utf-8", "replace").strip()
            if text.startswith("event:"):
                event = text[6:].strip()
            if text:
                continue
            self._relay_event(meter, event, buffer)
            event, buffer = "", []
        if buffer:
            self._relay_event(meter, event, buffer)
        if self.proxy.closing:
            raise ConnectionAbortedError("cut off by the proxy")  # not a whole reply: recorded as abandoned
        return meter.result()

    def _relay_event(self, meter: StreamMeter, event: str, lines: list[bytes]) -> None:
        raw = b"".join(lines)
        self.received.append(raw)
        data_lines = [ln[5:].strip() for ln in raw.decode("utf-8", "replace").splitlines() if ln.startswith("data:")]
        payload = "\n".join(data_lines)
        if payload and payload != "[DONE]":
            try:
                data = json.loads(payload)
            except ValueError:
                data = None
            if isinstance(data, dict):
                meter.feed(event, data)
                if self.injected and data.get("usage"):
                    if not data.get("choices"):
                        return  # the usage chunk only we asked for
                    raw = f"data: {json.dumps({k: v for k, v in data.items() if k != 'usage'})}\n\n".encode()
        self._send(raw, stream=True)

    def _replay(self, recording: Recording | None) -> Metered | None:
        if recording is None:
            return self._fail(599, "metering proxy: the cassette has no more exchanges for this trial")
        self.ex.status, self.ex.replay, self.content_type = recording.status, recording.match, recording.content_type
        self.injected = self._wants_usage_added()  # recorded with the usage the proxy asked for: keep it back again
        data = recording.body.encode()
        if recording.status != 200:
            return self._relay_error(recording.status, recording.content_type, data)
        if "text/event-stream" in recording.content_type:
            return self._relay_stream(iter(data.splitlines(keepends=True)))
        self._send(data)
        return self._meter_json(data)

    def _relay_error(self, status: int, content_type: str, data: bytes) -> None:
        self.ex.status, self.content_type = status, content_type or "application/json"
        self.ex.error = data.decode("utf-8", "replace")[:500]
        self.received.append(data)
        self.h.send_bytes(status, self.content_type, data)

    def _fail(self, status: int, message: str) -> None:
        return self._relay_error(status, "application/json", json.dumps({"error": {"message": message}}).encode())

    def _send(self, data: bytes, stream: bool = False) -> None:
        if stream:
            self.h.wfile.write(data)
            self.h.wfile.flush()
        else:
            self.h.send_bytes(self.ex.status, self.content_type, data)
