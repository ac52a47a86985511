"""The scripted fake itself: wire format over raw HTTP, faults, recording, exhaustion, the in-process model."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ga.errors import ModelError
from tests.scripted import ScriptedModel, ScriptedServer, tool_call

MESSAGES = [{"role": "user", "content": "hi"}]


@dataclass
class Response:
    status_code: int
    headers: dict
    text: str

    def json(self) -> dict:
        return json.loads(self.text)


def _post(target: ScriptedServer | str, body: dict, path: str = "/chat/completions") -> Response:
    """One raw HTTP request (stdlib only, so the wire format is checked without the SDK in between)."""
    url = urlsplit((target if isinstance(target, str) else target.url) + path)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        connection.request("POST", url.path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        text = response.read().decode()
        return Response(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
    finally:
        connection.close()


def _events(response: Response) -> list:
    lines = [line.removeprefix("data: ") for line in response.text.split("\n\n") if line]
    return [line if line == "[DONE]" else json.loads(line) for line in lines]


def test_stream_wire_format():
    calls = [tool_call("file_read", path="a.txt"), tool_call("file_write", path="b.txt", content="hello")]
    with ScriptedServer([{"content": "Two calls coming.", "tool_calls": calls}]) as server:
        body = {"model": "m", "messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}}
        response = _post(server, body)
    assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
    events = _events(response)
    assert events[-1] == "[DONE]"
    deltas = [e["choices"][0]["delta"] for e in events[:-2]]
    assert deltas[0]["role"] == "assistant"
    assert "".join(d.get("content", "") for d in deltas) == "Two calls coming."
    assert sum("content" in d for d in deltas) > 2
    parts = [p for d in deltas for p in d.get("tool_calls", [])]
    heads = [p for p in parts if "id" in p]
    assert [(h["index"], h["id"], h["function"]["name"]) for h in heads] == [
        (0, "call_1_0", "file_read"),
        (1, "call_1_1", "file_write"),
    ]
    for index, call in enumerate(calls):
        pieces = [p["function"]["arguments"] for p in parts if p["index"] == index]
        assert len(pieces) > 2 and json.loads("".join(pieces)) == call["arguments"]
    assert events[-2]["choices"] == [] and set(events[-2]["usage"]) >= {"prompt_tokens", "completion_tokens"}
    assert events[-3]["choices"][0]["finish_reason"] == "tool_calls"


def test_stream_without_include_usage_sends_no_usage_chunk():
    with ScriptedServer([{"content": "hi"}]) as server:
        events = _events(_post(server, {"messages": MESSAGES, "stream": True}))
    assert events[-1] == "[DONE]" and all(e == "[DONE]" or "usage" not in e for e in events)


def test_non_stream_completion_and_request_recording():
    step = {
        "content": "ok",
        "tool_calls": [tool_call("file_read", path="a")],
        "finish_reason": "length",
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
        "args_as_object": True,
    }
    with ScriptedServer([step]) as server:
        body = {"model": "m", "messages": MESSAGES}
        completion = _post(server, body, "/chat/completions").json()
        assert server.requests == [body]
        server.assert_complete()
    choice = completion["choices"][0]
    assert choice["finish_reason"] == "length" and choice["message"]["content"] == "ok"
    assert choice["message"]["tool_calls"][0]["function"]["arguments"] == {"path": "a"}
    assert completion["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}


def test_status_faults_and_unknown_route():
    with ScriptedServer([{"fault": "429", "retry_after": 3}, {"fault": "500"}]) as server:
        limited = _post(server, {"messages": MESSAGES})
        failed = _post(server.url.removesuffix("/v1"), {"messages": MESSAGES}, "/v1/chat/completions")
        missing = _post(server, {}, "/embeddings")
    assert limited.status_code == 429 and limited.headers["retry-after"] == "3"
    assert "message" in limited.json()["error"]
    assert failed.status_code == 500
    assert missing.status_code == 404 and len(server.requests) == 2


@pytest.mark.parametrize("stream", [True, False])
def test_drop_and_cut_break_the_connection(stream):
    cut = {"content": "partial", "tool_calls": [tool_call("file_read", path="x" * 30)], "fault": "cut"}
    with ScriptedServer([{"fault": "drop"}, cut]) as server:
        for _ in range(2):
            with pytest.raises((http.client.HTTPException, ConnectionError)):
                _post(server, {"messages": MESSAGES, "stream": stream})
        server.assert_complete()


def test_reject_answers_400_while_the_parameter_is_sent():
    with ScriptedServer([{"fault": "reject_stream_options", "content": "fine"}]) as server:
        rejected = _post(server, {"messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}})
        again = _post(server, {"messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}})
        accepted = _post(server, {"messages": MESSAGES})
        server.assert_complete()
    assert rejected.status_code == again.status_code == 400
    assert rejected.json()["error"]["param"] == "stream_options" and "stream_options" in rejected.text
    assert accepted.json()["choices"][0]["message"]["content"] == "fine"


def test_exhausted_script_answers_500_and_fails_assert_complete():
    with ScriptedServer([{"content": "one"}]) as server:
        _post(server, {"messages": MESSAGES})
        server.assert_complete()
        extra = _post(server, {"messages": MESSAGES})
        assert extra.status_code == 500
        assert extra.json()["error"]["message"] == "scripted server: script exhausted after 1 steps"
        with pytest.raises(AssertionError, match="exhausted after 1 steps"):
            server.assert_complete()


def test_unused_steps_fail_assert_complete_and_add_appends():
    with ScriptedServer([{"content": "one"}]) as server:
        server.add([{"content": "two"}])
        assert _post(server, {"messages": MESSAGES}).json()["choices"][0]["message"]["content"] == "one"
        with pytest.raises(AssertionError, match="1 of 2 steps unused"):
            server.assert_complete()
        assert _post(server, {"messages": MESSAGES}).json()["choices"][0]["message"]["content"] == "two"
        server.assert_complete()


def test_url_needs_a_started_server():
    with pytest.raises(RuntimeError, match="not started"):
        _ = ScriptedServer([]).url


def test_scripted_model_in_process():
    model = ScriptedModel(
        [
            {"content": "Reading.", "tool_calls": [tool_call("file_read", path="a.txt")]},
            {"content": "Done.", "usage": False},
        ]
    )
    shown: list[str] = []
    first = model.complete(MESSAGES, [{"type": "function"}], on_text=shown.append)
    assert (first.finish_reason, first.tool_calls[0].name, first.tool_calls[0].arguments) == (
        "tool_calls",
        "file_read",
        '{"path": "a.txt"}',
    )
    assert first.usage.requests == 1 and not first.estimated_usage
    second = model.complete([*MESSAGES, {"role": "assistant", "content": "Reading."}], [])
    assert (second.content, second.finish_reason, second.estimated_usage) == ("Done.", "stop", True)
    assert shown == ["Reading."]
    assert model.requests[0] == {"messages": MESSAGES, "tools": [{"type": "function"}]}
    assert len(model.requests[1]["messages"]) == 2
    model.assert_complete()
    with pytest.raises(ModelError, match="exhausted after 2 steps"):
        model.complete(MESSAGES, [])
    with pytest.raises(AssertionError):
        model.assert_complete()


def test_scripted_model_passes_object_arguments_through():
    model = ScriptedModel([{"tool_calls": [tool_call("file_read", path="a")], "args_as_object": True}])
    assert model.complete(MESSAGES, []).tool_calls[0].arguments == {"path": "a"}


def test_command_line_serves_a_script_file(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "hello from the script"}]))
    checkout = Path(__file__).resolve().parents[2]  # `python -m tests.scripted` runs from a checkout
    process = subprocess.Popen([sys.executable, "-m", "tests.scripted", str(script)], stdout=subprocess.PIPE, text=True,
                               cwd=checkout)
    try:
        url = process.stdout.readline().split()[3]
        reply = _post(url, {"messages": MESSAGES}).json()
        assert reply["choices"][0]["message"]["content"] == "hello from the script"
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("stream", [True, False])
def test_broken_200_faults_on_the_wire(stream):
    steps = [{"fault": "truncated_json"}, {"fault": "bad_sse"}, {"fault": "no_choices"},
             {"fault": "huge", "size": 300_000}]
    with ScriptedServer(steps) as server:
        cut, junk, empty, huge = (_post(server, {"messages": MESSAGES, "stream": stream}) for _ in steps)
        server.assert_complete()
    assert all(r.status_code == 200 for r in (cut, junk, empty, huge))
    body = cut.text.split("\n\n")[0].removeprefix("data: ") if stream else cut.text
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)
    assert "502 Bad Gateway" in junk.text and (junk.text.startswith("data: <html>") == stream)
    first = _events(empty)[0] if stream else empty.json()
    assert first["choices"] == []
    sent = "".join(e["choices"][0]["delta"]["content"] for e in _events(huge)) if stream else huge.text
    assert len(sent) >= 300_000  # streamed: random hex pieces (a reply too big, not one that repeats itself)


@pytest.mark.parametrize("fault", ["silent", "keepalive"])
def test_hanging_faults_never_answer(fault):
    with ScriptedServer([{"fault": fault, "interval": 0.1}]) as server:
        url = urlsplit(server.url)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=1)
        connection.request("POST", "/v1/chat/completions", json.dumps({"messages": MESSAGES, "stream": True}))
        if fault == "silent":
            with pytest.raises(TimeoutError):
                connection.getresponse()
        else:
            response = connection.getresponse()
            assert response.status == 200
            assert response.read(40).count(b": keep-alive") >= 2  # a comment every 0.1 s, and nothing else
        connection.close()
