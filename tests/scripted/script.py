"""A scripted fake of the Chat Completions API: in-process (ScriptedModel) or over real HTTP (ScriptedServer).

A script is a list of steps, one per request:

    {"content": "text",
     "tool_calls": [{"name": "file_read", "arguments": {...} or "raw string", "id": "optional"}],
     "finish_reason": "stop" | "tool_calls" | "length",   # default: tool_calls when there are calls, else stop
     "usage": {"prompt_tokens": N, "completion_tokens": N} or False,   # default: chars/4 of request and reply
     "args_as_object": True,       # send arguments as JSON objects instead of strings (a known server quirk)
     "fault": "500" | "429" | "drop" | "cut" | "reject_stream_options" | "no_stream" | ...,
     "retry_after": 1,             # Retry-After header sent with a status fault
     "size": 100_000_000,          # bytes of text a "huge" reply carries
     "interval": 2,                # seconds between the keep-alives of a "keepalive" fault
     "timings": {"prompt_n": 5},   # llama.cpp's timings object, sent with the reply
     "reasoning": "thinking",      # sent apart, as reasoning_content (a server with a reasoning parser)
     "delay": 0.5,                 # seconds to wait before answering
     "drip": 0.2}                  # seconds between the events of a streamed reply (a slow model)

Faults (server only): a status ("500", "429", "401", ...) answers it with an OpenAI-style error body; "drop"
closes the connection without a response; "cut" streams the text and half of the first tool call's arguments,
then closes without [DONE] (without streaming it drops). A "reject_<param>" step answers 400 naming the parameter
to every request that carries it and stays in place; the first request without the parameter gets the step's
reply and consumes it. A "no_stream" step answers streamed requests with plain JSON (a server that ignores
stream=true) and stays in place likewise. Broken 200 replies: "truncated_json" (the completion, or a stream
chunk, cut in half), "bad_sse" (an HTML error page as the body, or as a `data:` line), "no_choices" (an empty
`choices` list), "huge" (`size` bytes of text). "echo_auth" answers 401 with an error that repeats the request's
Authorization header, as some servers and proxies do. Hangs: "silent" accepts and never answers; "keepalive" sends
the headers, then an SSE comment (a space without streaming) every `interval` seconds, and never a reply.
"context_length" answers 400 as a server refusing a request longer than its
context ("flavour": "openai" | "llama.cpp" | "vllm", "window": N). Every fault but reject_ and no_stream
consumes its step. ScriptedServer(steps, window=N) refuses every request longer than N of its tokens (chars/4
of the request JSON) the way llama.cpp does, without using a step (counted in `refused`), and reports N on
GET /v1/models.
Past the last step: HTTP 500, and assert_complete fails.

Try ga without a model:  python -m tests.scripted script.json [--port N]
"""

from __future__ import annotations

import argparse
import copy
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable

from ga.errors import ModelError
from ga.invocation import invocation
from ga.protocols import Reply, ToolCall, Usage
from tests.scripted.server import ChatServer, step_usage


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


class _Script:
    """Steps consumed one per request; shared by the server and the in-process model."""

    def __init__(self, steps: Iterable[dict]):
        self._steps: deque[dict] = deque()
        self.requests: list[dict] = []
        self._served = 0
        self.refused = 0
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

    def refuse(self, request: dict) -> None:
        """Record a request the server refused for its length (no step is used)."""
        with self._lock:
            self.requests.append(request)
            self.refused += 1

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

    def __init__(self, steps: Iterable[dict] = (), *, window: int | None = None):
        self._script = _Script(steps)
        self.window = window
        """The context length it reports (None: it does not say)."""

    def context_window(self) -> int | None:
        return self.window

    def complete(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None] | None = None,
                 *, deadline: float | None = None) -> Reply:
        request = {"messages": copy.deepcopy(messages), "tools": copy.deepcopy(tools)}
        step = self._script.take(request)
        if step is None:
            raise ModelError(self._script.exhausted)
        if step.get("fault"):
            raise ValueError(f"ScriptedModel does not inject faults ({step['fault']!r}): use ScriptedServer")
        if on_text and step["content"]:
            on_text(step["content"])
        counts = step_usage(step, request) or step_usage({**step, "usage": None}, request)
        return Reply(
            content=step["content"],
            tool_calls=[ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in step["tool_calls"]],
            finish_reason=step["finish_reason"],
            usage=Usage(
                requests=1, prompt_tokens=counts["prompt_tokens"], completion_tokens=counts["completion_tokens"]
            ),
            estimated_usage=step.get("usage") is False,
        )


class ScriptedServer(_Scripted):
    """A real OpenAI-compatible HTTP server on 127.0.0.1 answering from a script. Use as a context manager."""

    def __init__(self, steps: Iterable[dict] = (), *, port: int = 0, window: int = 0, flavour: str = "llama.cpp"):
        self._script = _Script(steps)
        self._port = port
        self._window, self._flavour = window, flavour
        self._httpd: ChatServer | None = None

    @property
    def refused(self) -> int:
        """Requests refused as longer than the window."""
        return self._script.refused

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("ScriptedServer is not started: use `with ScriptedServer(steps) as server:`")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedServer:
        self._httpd = ChatServer(("127.0.0.1", self._port))
        self._httpd.script = self._script
        self._httpd.window, self._httpd.flavour = self._window, self._flavour
        threading.Thread(target=self._httpd.serve_forever, name="scripted-server", daemon=True).start()
        return self

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.stopping.set()
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


Script = _Script
"""The steps consumed one per request, for fakes of other APIs (the benchmark tests' Responses and Anthropic ones)."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.scripted", description="Serve a scripted model over HTTP.")
    parser.add_argument("script", help="JSON file: a list of steps (see tests/scripted/)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    parser.add_argument("--window", type=int, default=0,
                        help="refuse requests longer than N tokens (chars/4), as llama.cpp does, and report N")
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as f:
        steps = json.load(f)
    with ScriptedServer(steps, port=args.port, window=args.window) as server:
        print(f"scripted model at {server.url} ({len(steps)} steps); try:", flush=True)
        print(f'  OPENAI_BASE_URL={server.url} OPENAI_API_KEY=test GA_MODEL=scripted {invocation()} "hello"',
              flush=True)
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
