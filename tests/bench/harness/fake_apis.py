"""Scripted fakes of the OpenAI Responses API and the Anthropic Messages API (JSON and server-sent events), built on
tests.scripted's script plumbing, so the metering proxy is tested on every API it meters without a model."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.scripted import Script


def _usage(step: dict) -> dict:
    return step.get("usage") or {}


def responses_body(step: dict) -> dict:
    output: list[dict] = []
    if step["content"]:
        output.append({"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": step["content"]}]})
    for call in step["tool_calls"]:
        output.append({"type": "function_call", "call_id": call["id"], "name": call["name"],
                       "arguments": call["arguments"]})
    return {"id": "resp_1", "object": "response", "status": "completed", "output": output, "usage": _usage(step)}


def anthropic_body(step: dict) -> dict:
    content: list[dict] = [{"type": "text", "text": step["content"]}] if step["content"] else []
    content += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": json.loads(c["arguments"])}
                for c in step["tool_calls"]]
    return {"id": "msg_1", "type": "message", "role": "assistant", "content": content,
            "stop_reason": "tool_use" if step["tool_calls"] else "end_turn", "usage": _usage(step)}


def responses_events(step: dict) -> list[tuple[str, dict]]:
    events = [("response.created", {"type": "response.created", "response": {"id": "resp_1"}})]
    if step["content"]:
        events.append(("response.output_text.delta", {"type": "response.output_text.delta",
                                                      "delta": step["content"]}))
    events.append(("response.completed", {"type": "response.completed", "response": responses_body(step)}))
    return events


def anthropic_events(step: dict) -> list[tuple[str, dict]]:
    usage = _usage(step)
    start_usage = {k: v for k, v in usage.items() if k != "output_tokens"}
    events = [("message_start", {"type": "message_start", "message": {"id": "msg_1", "usage": start_usage}})]
    index = 0
    if step["content"]:
        events += [("content_block_start", {"type": "content_block_start", "index": 0,
                                            "content_block": {"type": "text", "text": ""}}),
                   ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "text_delta", "text": step["content"]}}),
                   ("content_block_stop", {"type": "content_block_stop", "index": 0})]
        index = 1
    for i, call in enumerate(step["tool_calls"], start=index):
        half = len(call["arguments"]) // 2
        events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                        "type": "tool_use", "id": call["id"], "name": call["name"], "input": {}}}),
                   *[("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "input_json_delta", "partial_json": part}})
                     for part in (call["arguments"][:half], call["arguments"][half:])],
                   ("content_block_stop", {"type": "content_block_stop", "index": i})]
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                  "usage": {"output_tokens": usage.get("output_tokens", 0)}}),
               ("message_stop", {"type": "message_stop"})]
    return events


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.server.headers_seen.append(dict(self.headers))  # type: ignore[attr-defined]
        step = self.server.script.take(request)  # type: ignore[attr-defined]
        anthropic = self.path.endswith("/messages")
        if step is None:
            self._send(500, "application/json", b'{"error": {"message": "script exhausted"}}')
        elif request.get("stream"):
            events = anthropic_events(step) if anthropic else responses_events(step)
            data = "".join(f"event: {name}\ndata: {json.dumps(body)}\n\n" for name, body in events).encode()
            self._send(200, "text/event-stream", data)
        else:
            body = anthropic_body(step) if anthropic else responses_body(step)
            self._send(200, "application/json", json.dumps(body).encode())

    def _send(self, status: int, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class APIServer:
    """`with APIServer(steps) as server:` serves /v1/responses and /v1/messages from the steps, one per request."""

    def __init__(self, steps: list[dict]):
        self.script = Script(steps)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.script = self.script  # type: ignore[attr-defined]
        self.httpd.headers_seen = []  # type: ignore[attr-defined]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def headers_seen(self) -> list[dict]:
        return self.httpd.headers_seen  # type: ignore[attr-defined]

    def __enter__(self) -> APIServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
