"""The HTTP side of the scripted fake (ga/testing.py): OpenAI-style JSON and SSE answers, and injected faults."""

from __future__ import annotations

import json
import logging
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


def step_usage(step: dict, request: dict) -> dict | None:
    if step.get("usage") is False:
        return None
    reply_text = step["content"] + "".join(json.dumps(c["arguments"]) for c in step["tool_calls"])
    usage = {
        "prompt_tokens": len(json.dumps(request.get("messages", [])) + json.dumps(request.get("tools", []))) // 4,
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
    yield {"finish_reason": step["finish_reason"]}
    usage = step_usage(step, request)
    if usage and (request.get("stream_options") or {}).get("include_usage"):
        yield {"usage": usage}


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
            self._send_json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
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
        elif fault == "drop" or (fault == "cut" and not stream):
            self.close_connection = True
        elif stream and fault != "no_stream":
            self._send_stream(step, request, cut=fault == "cut")
        else:
            self._send_json(200, self._completion(step, request))

    def _completion(self, step: dict, request: dict) -> dict:
        message: dict = {"role": "assistant", "content": step["content"] or None}
        if step["tool_calls"]:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in step["tool_calls"]
            ]
        choice = {"index": 0, "message": message, "finish_reason": step["finish_reason"]}
        body = {**self._envelope(request, "chat.completion"), "choices": [choice]}
        usage = step_usage(step, request)
        return {**body, "usage": usage} if usage else body

    def _send_stream(self, step: dict, request: dict, cut: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        base = self._envelope(request, "chat.completion.chunk")
        for part in _chunks(step, request, cut):
            if "usage" in part:
                chunk = {**base, "choices": [], "usage": part["usage"]}
            else:
                finish = part.pop("finish_reason", None)
                chunk = {**base, "choices": [{"index": 0, "delta": part, "finish_reason": finish}]}
            self._write_chunk(f"data: {json.dumps(chunk)}\n\n".encode())
        if cut:
            self.close_connection = True  # no terminating chunk: the client sees a broken body
            return
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True

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


class ChatServer(ThreadingHTTPServer):
    """Answers /v1/chat/completions from `script` (a ga.testing._Script), one thread per request."""

    daemon_threads = True
    script: Any

    def __init__(self, address: tuple[str, int]):
        super().__init__(address, _Handler)
