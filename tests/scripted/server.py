"""The HTTP side of the scripted fake (tests/scripted/): OpenAI-style JSON and SSE answers; the injected faults that are
more than a status code are in faults.py."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.scripted import faults

log = logging.getLogger("tests.scripted")


_PATHS = ("/v1/chat/completions", "/chat/completions")


def prompt_tokens(request: dict) -> int:
    """The fake's own token count of a request (its "tokenizer": chars/4 of the JSON it was sent)."""
    return len(json.dumps(request.get("messages", [])) + json.dumps(request.get("tools", []))) // 4


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
    for piece in _pieces(step.get("reasoning") or ""):  # a server with a reasoning parser sends thinking apart
        yield {"reasoning_content": piece}
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


class ChatHandler(faults.BrokenReplies, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ChatServer

    def log_message(self, format: str, *args: object) -> None:
        log.debug("scripted server: " + format, *args)

    def do_GET(self) -> None:
        """What OpenAI-compatible servers answer besides completions: llama.cpp's /health, the model list."""
        path = self.path.split("?")[0].rstrip("/")
        if path == "/health":
            self.send_json(200, {"status": "ok"})
        elif path in ("/v1/models", "/models"):
            model: dict = {"id": "scripted", "object": "model"}
            if self.server.window:
                model["max_model_len"] = self.server.window  # as vLLM reports it
            self.send_json(200, {"object": "list", "data": [model]})
        else:
            self.send_api_error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.split("?")[0].rstrip("/") not in _PATHS:
            self.send_api_error(404, f"no route {self.path}: use /v1/chat/completions")
            return
        try:
            request = json.loads(raw)
        except ValueError:
            self.send_api_error(400, "request body is not JSON")
            return
        window = self.server.window
        if window and prompt_tokens(request) > window:  # refused before any step is used, as a real server does
            self.server.script.refuse(request)
            self.send_json(400, faults.context_length_error(self.server.flavour, window, prompt_tokens(request)))
            return
        step = self.server.script.take(request)
        if step is None:
            self.send_api_error(500, self.server.script.exhausted, "server_error")
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
            message = faults.MESSAGES.get(fault, "scripted server: injected server error")
            self.send_api_error(int(fault), message, "scripted_fault", headers=headers)
        elif fault == "echo_auth":  # some servers and proxies repeat the credentials they refused
            self.send_api_error(401, f"Invalid header: Authorization: {self.headers.get('Authorization')}",
                                "invalid_api_key")
        elif fault.startswith("reject_") and fault.removeprefix("reject_") in request:
            param = fault.removeprefix("reject_")
            self.send_api_error(400, f"Unrecognized request argument supplied: {param}", param=param)
        elif fault == "context_length":
            flavour, window = step.get("flavour", "openai"), step.get("window", 4096)
            self.send_json(400, faults.context_length_error(flavour, window, prompt_tokens(request)))
        elif fault == "drop" or (fault == "cut" and not stream):
            self.close_connection = True
        elif fault in faults.BROKEN:
            faults.BROKEN[fault](self, step, request, stream)
        elif stream and fault != "no_stream":
            self._send_stream(step, request, cut=fault == "cut")
        else:
            self.send_json(200, self.completion(step, request))

    def completion(self, step: dict, request: dict) -> dict:
        message: dict = {"role": "assistant", "content": step["content"] or None}
        if step.get("reasoning"):
            message["reasoning_content"] = step["reasoning"]
        if step["tool_calls"]:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in step["tool_calls"]
            ]
        choice = {"index": 0, "message": message, "finish_reason": step["finish_reason"]}
        body = {**self.envelope(request, "chat.completion"), "choices": [choice]}
        if step.get("timings"):
            body["timings"] = step["timings"]
        usage = step_usage(step, request)
        return {**body, "usage": usage} if usage else body

    def _send_stream(self, step: dict, request: dict, cut: bool) -> None:
        base = self.envelope(request, "chat.completion.chunk")
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
        self.send_events(events if cut else [*events, "[DONE]"], cut=cut, drip=step.get("drip") or 0)

    def start(self, status: int, content_type: str, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def send_events(self, events: Iterator[str] | list[str] | None, *, raw: bytes | None = None,
                     cut: bool = False, drip: float = 0) -> None:
        """SSE `data:` events, chunked, `drip` seconds apart; or, with raw, a 200 body sent as it is (broken bodies)."""
        if raw is not None:
            self.start(200, "application/json", length=len(raw))  # what a broken API says it sends
            self.wfile.write(raw)
            return
        self.start(200, "text/event-stream")
        for event in events or []:
            self.write_chunk(f"data: {event}\n\n".encode())
            time.sleep(drip)
        if not cut:
            self.wfile.write(b"0\r\n\r\n")

    def envelope(self, request: dict, kind: str) -> dict:
        number = len(self.server.script.requests)
        return {
            "id": f"chatcmpl-scripted-{number}",
            "object": kind,
            "created": int(time.time()),
            "model": request.get("model", "scripted"),
        }

    def write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def send_api_error(
        self,
        status: int,
        message: str,
        kind: str = "invalid_request_error",
        *,
        headers: dict | None = None,
        param: str | None = None,
    ) -> None:
        error = {"message": message, "type": kind, "param": param, "code": None}
        self.send_json(status, {"error": error}, headers)

    def send_json(self, status: int, body: dict, headers: dict | None = None) -> None:
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
    """Answers /v1/chat/completions from `script` (a tests.scripted.script._Script), one thread per request."""

    daemon_threads = True
    script: Any
    window = 0
    """The model's context in the fake's tokens: longer requests are refused (0: no limit); /v1/models reports it."""
    flavour = "llama.cpp"
    """Whose context-length error a refused request gets: openai, llama.cpp or vllm."""

    def __init__(self, address: tuple[str, int]):
        super().__init__(address, ChatHandler)
        self.stopping = threading.Event()
        """Set on close: handlers that hold a connection open (silent, keepalive) let go."""
