"""A scripted fake of the Chat Completions API: in-process (ScriptedModel) or over real HTTP (ScriptedServer).

A script is a list of steps, one per request:

    {"content": "text",
     "tool_calls": [{"name": "file_read", "arguments": {...} or "raw string", "id": "optional"}],
     "finish_reason": "stop" | "tool_calls" | "length",   # default: tool_calls when there are calls, else stop
     "usage": {"prompt_tokens": N, "completion_tokens": N} or False,   # default: chars/4 of request and reply
     "args_as_object": True,       # send arguments as JSON objects instead of strings (a known server quirk)
     "fault": "500" | "429" | "drop" | "cut" | "reject_stream_options" | "no_stream" | ...,
     "retry_after": 1,             # Retry-After header sent with a status fault
     "delay": 0.5}                 # seconds to wait before answering

Faults (server only): a status ("500", "429", "401", ...) answers it with an OpenAI-style error body; "drop"
closes the connection without a response; "cut" streams the text and half of the first tool call's arguments,
then closes without [DONE] (without streaming it drops). A "reject_<param>" step answers 400 naming the parameter
to every request that carries it and stays in place; the first request without the parameter gets the step's
reply and consumes it. A "no_stream" step answers streamed requests with plain JSON (a server that ignores
stream=true) and stays in place likewise. Every other fault consumes its step.
Past the last step: HTTP 500, and assert_complete fails.

Try ga without a model:  python -m ga.testing script.json [--port N]
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ga.llm import ModelError
from ga.protocols import Reply, ToolCall, Usage

log = logging.getLogger(__name__)

_PATHS = ("/v1/chat/completions", "/chat/completions")
_FAULT_MESSAGES = {
    "401": "Incorrect API key provided",
    "404": "The model does not exist or you do not have access to it",
    "429": "Rate limit reached; please try again later",
}


def tool_call(name: str, **arguments: object) -> dict:
    """A script's tool call: tool_call("file_read", path="a.txt")."""
    return {"name": name, "arguments": arguments}


def _normalise(step: dict, number: int) -> dict:
    calls = [
        {"id": call.get("id") or f"call_{number}_{i}", "name": call["name"], "arguments": call.get("arguments", {})}
        for i, call in enumerate(step.get("tool_calls") or [])
    ]
    for call in calls:
        if not isinstance(call["arguments"], str) and not step.get("args_as_object"):
            call["arguments"] = json.dumps(call["arguments"])
    finish = step.get("finish_reason") or ("tool_calls" if calls else "stop")
    return {**step, "content": step.get("content") or "", "tool_calls": calls, "finish_reason": finish}


def _usage(step: dict, request: dict) -> dict | None:
    if step.get("usage") is False:
        return None
    reply_text = step["content"] + "".join(json.dumps(c["arguments"]) for c in step["tool_calls"])
    usage = {
        "prompt_tokens": len(json.dumps(request.get("messages", [])) + json.dumps(request.get("tools", []))) // 4,
        "completion_tokens": max(1, len(reply_text) // 4),
        **(step.get("usage") or {}),
    }
    return {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}


class _Script:
    """Steps consumed one per request; shared by the server and the in-process model."""

    def __init__(self, steps: Iterable[dict]):
        self._steps: deque[dict] = deque()
        self.requests: list[dict] = []
        self._served = 0
        self.exhausted = ""
        self._lock = threading.Lock()
        self.add(steps)

    def add(self, steps: Iterable[dict]) -> None:
        with self._lock:
            for step in steps:
                self._steps.append(_normalise(step, len(self._steps) + self._served + 1))

    def take(self, request: dict) -> dict | None:
        """Record the request and return its step (None when the script is exhausted)."""
        with self._lock:
            self.requests.append(request)
            if not self._steps:
                self.exhausted = f"scripted server: script exhausted after {self._served} steps"
                return None
            fault = self._steps[0].get("fault") or ""
            if fault.startswith("reject_") and fault.removeprefix("reject_") in request:
                return self._steps[0]
            if fault == "no_stream" and request.get("stream"):
                return self._steps[0]
            self._served += 1
            return self._steps.popleft()

    def assert_complete(self) -> None:
        with self._lock:
            if self.exhausted:
                raise AssertionError(f"{self.exhausted}: a request came after the last step")
            if self._steps:
                raise AssertionError(
                    f"script not finished: {len(self._steps)} of {self._served + len(self._steps)} steps unused"
                )


class _Scripted:
    """What both fakes offer tests: the recorded requests, more steps, and a check that the script was used up."""

    _script: _Script

    @property
    def requests(self) -> list[dict]:
        return self._script.requests

    def add(self, steps: Iterable[dict]) -> None:
        self._script.add(steps)

    def assert_complete(self) -> None:
        self._script.assert_complete()


class ScriptedModel(_Scripted):
    """An in-process Model answering from a script (faults need ScriptedServer); records messages and tools."""

    def __init__(self, steps: Iterable[dict] = ()):
        self._script = _Script(steps)

    def complete(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None] | None = None) -> Reply:
        request = {"messages": copy.deepcopy(messages), "tools": copy.deepcopy(tools)}
        step = self._script.take(request)
        if step is None:
            raise ModelError(self._script.exhausted)
        if step.get("fault"):
            raise ValueError(f"ScriptedModel does not inject faults ({step['fault']!r}): use ScriptedServer")
        if on_text and step["content"]:
            on_text(step["content"])
        counts = _usage(step, request) or _usage({**step, "usage": None}, request)
        return Reply(
            content=step["content"],
            tool_calls=[ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in step["tool_calls"]],
            finish_reason=step["finish_reason"],
            usage=Usage(
                requests=1, prompt_tokens=counts["prompt_tokens"], completion_tokens=counts["completion_tokens"]
            ),
            estimated_usage=step.get("usage") is False,
        )


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
    usage = _usage(step, request)
    if usage and (request.get("stream_options") or {}).get("include_usage"):
        yield {"usage": usage}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        log.debug("scripted server: " + format, *args)

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
        usage = _usage(step, request)
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


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    script: _Script


class ScriptedServer(_Scripted):
    """A real OpenAI-compatible HTTP server on 127.0.0.1 answering from a script. Use as a context manager."""

    def __init__(self, steps: Iterable[dict] = (), *, port: int = 0):
        self._script = _Script(steps)
        self._port = port
        self._httpd: _Server | None = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("ScriptedServer is not started: use `with ScriptedServer(steps) as server:`")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedServer:
        self._httpd = _Server(("127.0.0.1", self._port), _Handler)
        self._httpd.script = self._script
        threading.Thread(target=self._httpd.serve_forever, name="scripted-server", daemon=True).start()
        return self

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ga.testing", description="Serve a scripted model over HTTP.")
    parser.add_argument("script", help="JSON file: a list of steps (see ga/testing.py)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as f:
        steps = json.load(f)
    with ScriptedServer(steps, port=args.port) as server:
        print(f"scripted model at {server.url} ({len(steps)} steps); try:", flush=True)
        print(f'  OPENAI_BASE_URL={server.url} OPENAI_API_KEY=test GA_MODEL=scripted python run.py "hello"', flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
        try:
            server.assert_complete()
            print("script complete")
        except AssertionError as err:
            print(err)


if __name__ == "__main__":
    main()
