"""The HTTP side of the scripted fake (ga/testing.py): OpenAI-style JSON and SSE answers, and injected faults."""

from __future__ import annotations

import json
import logging
import os
import select
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

log = logging.getLogger("ga.testing")


_PATHS = ("/v1/chat/completions", "/chat/completions")
_FAULT_MESSAGES = {
    "401": "Incorrect API key provided",
    "404": "The model does not exist or you do not have access to it",
    "429": "Rate limit reached; please try again later",
}


def prompt_tokens(request: dict) -> int:
    """The fake's own token count of a request (its "tokenizer": chars/4 of the JSON it was sent)."""
    return len(json.dumps(request.get("messages", [])) + json.dumps(request.get("tools", []))) // 4


def context_length_error(flavour: str, window: int, sent: int) -> dict:
    """The 400 body real servers send for a request longer than the model's context."""
    if flavour == "llama.cpp":
        return {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                          "type": "exceed_context_size_error", "n_prompt_tokens": sent, "n_ctx": window}}
    if flavour == "vllm":
        return {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
                "message": f"This model's maximum context length is {window} tokens. However, you requested {sent} "
                           f"tokens ({sent} in the messages, 0 in the completion). Please reduce the length of the "
                           "messages or completion."}
    return {"error": {"message": f"This model's maximum context length is {window} tokens. However, your messages "
                                 f"resulted in {sent} tokens. Please reduce the length of the messages.",
                      "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}


def step_usage(step: dict, request: dict) -> dict | None:
    if step.get("usage") is False:
        return None
    reply_text = step["content"] + "".join(json.dumps(c["arguments"]) for c in step["tool_calls"])
    usage = {
        "prompt_tokens": prompt_tokens(request),
        "completion_tokens": max(1, len(reply_text) // 4),
        **(step.get("usage") or {}),
    }
    return {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}


def _pieces(text: str, count: int = 3) -> list[str]:
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _chunks(step: dict, request: dict, cut: bool = False) -> Iterator[dict]:
    """The stream's chunk bodies; with cut=True it stops mid-way through the first call's arguments."""
    yield {"role": "assistant", "content": ""}
    for piece in _pieces(step["content"]):
        yield {"content": piece}
    calls = step["tool_calls"]
    split = [_pieces(c["arguments"]) if isinstance(c["arguments"], str) else [c["arguments"]] for c in calls]
    if cut and calls:
        calls, split = calls[:1], [split[0][: len(split[0]) // 2]]
    for i, call in enumerate(calls):
        head = {"index": i, "id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": ""}}
        yield {"tool_calls": [head]}
    # Argument pieces of parallel calls are interleaved, so clients must key them by index.
    for round_ in range(max((len(s) for s in split), default=0)):
        for i, pieces in enumerate(split):
            if round_ < len(pieces):
                yield {"tool_calls": [{"index": i, "function": {"arguments": pieces[round_]}}]}
    if cut:
        return
    usage = step_usage(step, request)
    sends_usage = usage and (request.get("stream_options") or {}).get("include_usage")
    timings = {"timings": step["timings"]} if step.get("timings") else {}
    yield {"finish_reason": step["finish_reason"], **({} if sends_usage else timings)}
    if sends_usage:
        yield {"usage": usage, **timings}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ChatServer

    def log_message(self, format: str, *args: object) -> None:
        log.debug("scripted server: " + format, *args)

    def do_GET(self) -> None:
        """What OpenAI-compatible servers answer besides completions: llama.cpp's /health, the model list."""
        path = self.path.split("?")[0].rstrip("/")
        if path == "/health":
            self._send_json(200, {"status": "ok"})
        elif path in ("/v1/models", "/models"):
            model: dict = {"id": "scripted", "object": "model"}
            if self.server.window:
                model["max_model_len"] = self.server.window  # as vLLM reports it
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.split("?")[0].rstrip("/") not in _PATHS:
            self._send_error(404, f"no route {self.path}: use /v1/chat/completions")
            return
        try:
            request = json.loads(raw)
        except ValueError:
            self._send_error(400, "request body is not JSON")
            return
        window = self.server.window
        if window and prompt_tokens(request) > window:  # refused before any step is used, as a real server does
            self.server.script.refuse(request)
            self._send_json(400, context_length_error(self.server.flavour, window, prompt_tokens(request)))
            return
        step = self.server.script.take(request)
        if step is None:
            self._send_error(500, self.server.script.exhausted, "server_error")
            return
        time.sleep(step.get("delay") or 0)
        try:
            self._answer(step, request)
        except (BrokenPipeError, ConnectionResetError):
            log.debug("scripted server: client went away")

    def _answer(self, step: dict, request: dict) -> None:
        fault = step.get("fault") or ""
        stream = bool(request.get("stream"))
        if fault.isdigit():
            headers = {"Retry-After": str(step["retry_after"])} if "retry_after" in step else {}
            message = _FAULT_MESSAGES.get(fault, "scripted server: injected server error")
            self._send_error(int(fault), message, "scripted_fault", headers=headers)
        elif fault.startswith("reject_") and fault.removeprefix("reject_") in request:
            param = fault.removeprefix("reject_")
            self._send_error(400, f"Unrecognized request argument supplied: {param}", param=param)
        elif fault == "context_length":
            body = context_length_error(step.get("flavour", "openai"), step.get("window", 4096), prompt_tokens(request))
            self._send_json(400, body)
        elif fault == "drop" or (fault == "cut" and not stream):
            self.close_connection = True
        elif fault in _BROKEN:
            _BROKEN[fault](self, step, request, stream)
        elif stream and fault != "no_stream":
            self._send_stream(step, request, cut=fault == "cut")
        else:
            self._send_json(200, self._completion(step, request))

    def _broken_body(self, step: dict, request: dict, stream: bool) -> None:
        """truncated_json: the completion (or one stream chunk) cut in half; bad_sse: a body that is not JSON."""
        if step["fault"] == "bad_sse":
            junk = "<html><body>502 Bad Gateway</body></html>"
            self._send_events([junk] if stream else None, raw=None if stream else junk.encode())
            return
        body = json.dumps(self._completion(step, request))
        if not stream:
            self._send_events(None, raw=body[: len(body) // 2].encode())
            return
        chunk = json.dumps({**self._envelope(request, "chat.completion.chunk"),
                            "choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": None}]})
        self._send_events([chunk[: len(chunk) // 2], "[DONE]"])

    def _no_choices(self, step: dict, request: dict, stream: bool) -> None:
        body = {**self._envelope(request, "chat.completion"), "choices": [],
                "usage": {"prompt_tokens": 10, "completion_tokens": 0, "total_tokens": 10}}
        if stream:
            self._send_events([json.dumps({**body, "object": "chat.completion.chunk"}), "[DONE]"])
        else:
            self._send_json(200, body)

    def _huge(self, step: dict, request: dict, stream: bool) -> None:
        """A reply of step["size"] bytes of text (default 100 MB), sent in pieces so the fake never holds it; streamed
        pieces differ (random hex), so it is a reply too big, not one that repeats itself."""
        size, piece = int(step.get("size") or 100_000_000), "x" * 65_536
        if stream:
            envelope = self._envelope(request, "chat.completion.chunk")
            self._send_events(json.dumps({**envelope, "choices": [{"index": 0, "delta": {"content": os.urandom(
                len(piece) // 2).hex()}, "finish_reason": None}]}) for _ in range(-(-size // len(piece))))
            return
        head, tail = json.dumps(self._completion({**step, "content": "@@huge@@"}, request)).encode().split(b"@@huge@@")
        self._start(200, "application/json", length=len(head) + size + len(tail))
        self.wfile.write(head)
        for sent in range(0, size, len(piece)):
            self.wfile.write(piece[: min(len(piece), size - sent)].encode())
        self.wfile.write(tail)

    def _hold(self, step: dict, request: dict, stream: bool) -> None:
        """silent: accept and send nothing; keepalive: an SSE comment (or, without streaming, a space) every
        step["interval"] s (default 2) and never a reply. Both last until the client or the server goes away."""
        interval = float(step.get("interval") or 2)
        if step["fault"] == "keepalive":
            self._start(200, "text/event-stream" if stream else "application/json")
        while not self.server.stopping.wait(0 if step["fault"] == "keepalive" else 0.05):
            if step["fault"] == "silent":
                if select.select([self.connection], [], [], 0.2)[0] and not self.connection.recv(1):
                    return  # the client closed its side
                continue
            self._write_chunk(b": keep-alive\n\n" if stream else b" ")
            if self.server.stopping.wait(interval):
                return

    def _completion(self, step: dict, request: dict) -> dict:
        message: dict = {"role": "assistant", "content": step["content"] or None}
        if step["tool_calls"]:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in step["tool_calls"]
            ]
        choice = {"index": 0, "message": message, "finish_reason": step["finish_reason"]}
        body = {**self._envelope(request, "chat.completion"), "choices": [choice]}
        if step.get("timings"):
            body["timings"] = step["timings"]
        usage = step_usage(step, request)
        return {**body, "usage": usage} if usage else body

    def _send_stream(self, step: dict, request: dict, cut: bool) -> None:
        base = self._envelope(request, "chat.completion.chunk")
        events = []
        for part in _chunks(step, request, cut):
            extra = {"timings": part.pop("timings")} if "timings" in part else {}
            if "usage" in part:
                chunk = {**base, "choices": [], "usage": part["usage"], **extra}
            else:
                finish = part.pop("finish_reason", None)
                chunk = {**base, "choices": [{"index": 0, "delta": part, "finish_reason": finish}], **extra}
            events.append(json.dumps(chunk))
        # cut: no [DONE] and no terminating chunk, so the client sees a broken body
        self._send_events(events if cut else [*events, "[DONE]"], cut=cut)

    def _start(self, status: int, content_type: str, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _send_events(self, events: Iterator[str] | list[str] | None, *, raw: bytes | None = None,
                     cut: bool = False) -> None:
        """SSE `data:` events, chunked; or, with raw, a 200 body sent as it is (broken bodies)."""
        if raw is not None:
            self._start(200, "application/json" if raw[:1] == b"{" else "text/html", length=len(raw))
            self.wfile.write(raw)
            return
        self._start(200, "text/event-stream")
        for event in events or []:
            self._write_chunk(f"data: {event}\n\n".encode())
        if not cut:
            self.wfile.write(b"0\r\n\r\n")

    def _envelope(self, request: dict, kind: str) -> dict:
        number = len(self.server.script.requests)
        return {
            "id": f"chatcmpl-scripted-{number}",
            "object": kind,
            "created": int(time.time()),
            "model": request.get("model", "scripted"),
        }

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_error(
        self,
        status: int,
        message: str,
        kind: str = "invalid_request_error",
        *,
        headers: dict | None = None,
        param: str | None = None,
    ) -> None:
        error = {"message": message, "type": kind, "param": param, "code": None}
        self._send_json(status, {"error": error}, headers)

    def _send_json(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True


_BROKEN = {
    "truncated_json": _Handler._broken_body,
    "bad_sse": _Handler._broken_body,
    "no_choices": _Handler._no_choices,
    "huge": _Handler._huge,
    "silent": _Handler._hold,
    "keepalive": _Handler._hold,
}
"""Faults that answer 200 with something a client must not take for a reply."""


class ChatServer(ThreadingHTTPServer):
    """Answers /v1/chat/completions from `script` (a ga.testing._Script), one thread per request."""

    daemon_threads = True
    script: Any
    window = 0
    """The model's context in the fake's tokens: longer requests are refused (0: no limit); /v1/models reports it."""
    flavour = "llama.cpp"
    """Whose context-length error a refused request gets: openai, llama.cpp or vllm."""

    def __init__(self, address: tuple[str, int]):
        super().__init__(address, _Handler)
        self.stopping = threading.Event()
        """Set on close: handlers that hold a connection open (silent, keepalive) let go."""
