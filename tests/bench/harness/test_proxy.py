"""The metering proxy against scripted upstreams over real HTTP: what it meters equals what the fake served."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest

from bench.harness.cassette import Cassette
from bench.harness.meter import CHAT, from_json
from bench.harness.meter import count as count_tokens
from bench.harness.proxy import MeteringProxy, Upstream
from tests.bench.harness.fake_apis import APIServer
from tests.scripted import ScriptedServer

CALL = {"name": "file_read", "arguments": {"path": "a.txt"}}
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
"""An exception left in a thread here (a cut-off agent request) is a failure, not a warning in another test."""

TOKEN = "trial-token-0123"
"""The proxies here are started with this token: post() sends it unless told otherwise."""


def chat(proxy: MeteringProxy, stream: bool, content: str = "hi", **extra):
    client = openai.OpenAI(base_url=proxy.openai_url, api_key=proxy.token, max_retries=0)
    response = client.chat.completions.create(model="m", messages=[{"role": "user", "content": content}],
                                              stream=stream, **extra)
    return list(response) if stream else response


def metered(totals: dict) -> dict:
    """The totals a fake can be checked against (not the timings)."""
    return {k: v for k, v in totals.items() if k not in ("server_s", "wait_s")}


def post(url: str, body: object, headers: dict | None = None, *, method: str = "POST") -> tuple[int, bytes]:
    """A request with the proxy's token (it refuses any without), unless `headers` give another key."""
    token = {"Authorization": f"Bearer {TOKEN}"}
    data = json.dumps(body).encode() if method == "POST" else None
    request = urllib.request.Request(url, data, {"Content-Type": "application/json", **token, **(headers or {})},
                                     method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.mark.parametrize("stream", [False, True])
def test_chat_usage_and_tool_calls_are_the_servers(stream):
    usage = {"prompt_tokens": 1234, "completion_tokens": 56, "prompt_tokens_details": {"cached_tokens": 1000}}
    steps = [{"content": "reading", "tool_calls": [CALL], "usage": usage}]
    with ScriptedServer(steps) as server, MeteringProxy(Upstream(openai_base=server.url), token=TOKEN) as proxy:
        reply = chat(proxy, stream)
        totals = proxy.totals()
    assert metered(totals) == {"requests": 1, "failed_requests": 0, "input_tokens": 1234, "cached_tokens": 1000,
                      "output_tokens": 56, "tool_calls": 1, "usage_local": 0}
    (exchange,) = proxy.exchanges
    assert exchange.tool_calls == [{"id": "call_1_0", "name": "file_read", "arguments": '{"path": "a.txt"}'}]
    assert exchange.content == "reading" and exchange.stream is stream and exchange.latency_s >= 0
    if stream:
        # the proxy asked for usage on the agent's behalf and kept the extra usage chunk from it
        assert server.requests[0]["stream_options"] == {"include_usage": True}
        assert all(chunk.usage is None for chunk in reply)
        assert exchange.ttft_s is not None
    else:
        assert reply.usage.prompt_tokens == 1234


def test_stream_that_asked_for_usage_keeps_it():
    steps = [{"content": "ok", "usage": {"prompt_tokens": 10, "completion_tokens": 2}}]
    with ScriptedServer(steps) as server, MeteringProxy(Upstream(openai_base=server.url), token=TOKEN) as proxy:
        chunks = chat(proxy, True, stream_options={"include_usage": True})
    assert chunks[-1].usage.prompt_tokens == 10
    assert proxy.totals()["input_tokens"] == 10


def test_no_usage_from_the_server_is_counted_locally():
    steps = [{"content": "a reply without usage", "usage": False}]
    with ScriptedServer(steps) as server, MeteringProxy(Upstream(openai_base=server.url), token=TOKEN) as proxy:
        chat(proxy, False)
    (exchange,) = proxy.exchanges
    assert exchange.usage_source == "local"
    assert exchange.output_tokens == count_tokens("a reply without usage")
    assert exchange.input_tokens == count_tokens(json.dumps([{"role": "user", "content": "hi"}]))


def test_server_refusing_stream_options_still_answers_and_is_counted_locally():
    steps = [{"fault": "reject_stream_options", "content": "fine"}]
    with ScriptedServer(steps) as server, MeteringProxy(Upstream(openai_base=server.url), token=TOKEN) as proxy:
        chunks = chat(proxy, True)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "fine"
    assert proxy.exchanges[0].usage_source == "local"
    assert "stream_options" not in server.requests[-1]


def test_llama_cpp_timings_give_the_cached_tokens():
    # llama.cpp reports no cached_tokens but says how many prompt tokens it processed anew
    metered = from_json(CHAT, {"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": 31,
                               "completion_tokens": 5}, "timings": {"prompt_n": 26, "prompt_ms": 646.4,
                                                                    "predicted_ms": 465.4}})
    assert (metered.input_tokens, metered.cached_tokens, metered.output_tokens) == (31, 5, 5)
    assert metered.server_ms == 1111.8


def test_upstream_errors_reach_the_agent_and_are_recorded():
    with ScriptedServer([{"fault": "429", "retry_after": 3}]) as server, \
            MeteringProxy(Upstream(openai_base=server.url), token=TOKEN) as proxy:
        with pytest.raises(openai.RateLimitError):
            chat(proxy, False)
    assert proxy.totals()["failed_requests"] == 1 and proxy.exchanges[0].status == 429
    nobody = Upstream(openai_base="http://127.0.0.1:9/v1")  # nothing listens on port 9
    with MeteringProxy(nobody, token=TOKEN) as proxy:
        status, body = post(proxy.openai_url + "/chat/completions", {"model": "m", "messages": []})
    assert status == 502 and b"unreachable" in body


def test_the_real_key_goes_up_and_never_reaches_the_agent():
    steps = [{"content": "ok", "usage": {"input_tokens": 1, "output_tokens": 1}}]
    with APIServer(steps) as server, \
            MeteringProxy(Upstream(openai_base=server.url + "/v1", api_key="sk-real"), token=TOKEN) as proxy:
        post(proxy.openai_url + "/responses", {"model": "m", "input": "hi"})
    assert server.headers_seen[0]["Authorization"] == "Bearer sk-real"


@pytest.mark.parametrize("stream", [False, True])
def test_responses_api(stream):
    steps = [{"content": "thinking", "tool_calls": [CALL],
              "usage": {"input_tokens": 700, "output_tokens": 40, "input_tokens_details": {"cached_tokens": 512}}}]
    with APIServer(steps) as server, MeteringProxy(Upstream(openai_base=server.url + "/v1"), token=TOKEN) as proxy:
        client = openai.OpenAI(base_url=proxy.openai_url, api_key=proxy.token, max_retries=0)
        if stream:
            events = list(client.responses.create(model="m", input="hi", stream=True))
            assert events[-1].type == "response.completed"
        else:
            assert client.responses.create(model="m", input="hi").output[1].name == "file_read"
    assert metered(proxy.totals()) == {"requests": 1, "failed_requests": 0, "input_tokens": 700, "cached_tokens": 512,
                              "output_tokens": 40, "tool_calls": 1, "usage_local": 0}
    assert proxy.exchanges[0].api == "responses"


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_messages_api(stream):
    steps = [{"content": "on it", "tool_calls": [CALL],
              "usage": {"input_tokens": 20, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 100,
                        "output_tokens": 77}}]
    with APIServer(steps) as server, \
            MeteringProxy(Upstream(anthropic_base=server.url, anthropic_key="sk-ant-real"), token=TOKEN) as proxy:
        status, body = post(proxy.anthropic_url + "/v1/messages",
                            {"model": "claude", "max_tokens": 100, "stream": stream,
                             "messages": [{"role": "user", "content": "hi"}]}, {"x-api-key": proxy.token})
    assert status == 200 and (b"message_stop" in body if stream else json.loads(body)["content"][1]["name"])
    assert server.headers_seen[0]["x-api-key"] == "sk-ant-real"
    # input counts every prompt token, cached ones included (ATIF's convention)
    assert metered(proxy.totals()) == {"requests": 1, "failed_requests": 0, "input_tokens": 3120, "cached_tokens": 3000,
                              "output_tokens": 77, "tool_calls": 1, "usage_local": 0}
    assert proxy.exchanges[0].tool_calls == [{"id": "call_1_0", "name": "file_read",
                                              "arguments": '{"path": "a.txt"}'}]


def test_cassette_replays_without_upstream_and_meters_the_same(tmp_path):
    steps = [{"content": "one", "tool_calls": [CALL], "usage": {"prompt_tokens": 50, "completion_tokens": 5}},
             {"content": "two", "usage": {"prompt_tokens": 60, "completion_tokens": 6}}]
    trial = tmp_path / "trial-a"
    path = tmp_path / "cassette.jsonl"
    with ScriptedServer(steps) as server, MeteringProxy(Upstream(openai_base=server.url), token=TOKEN,
                                                        cassette=Cassette(path, "record"),
                                                        rewrite={str(trial): "{trial}"}) as proxy:
        first = [chat(proxy, True), chat(proxy, False, content=f"work in {trial}/workspace")]
        recorded = proxy.totals()
    other = tmp_path / "trial-b"
    with MeteringProxy(Upstream(), token=TOKEN, cassette=Cassette(path, "replay"),
                       rewrite={str(other): "{trial}"}) as proxy:
        again = [chat(proxy, True), chat(proxy, False, content=f"work in {other}/workspace")]
        assert proxy.totals() == recorded
        assert [e.replay for e in proxy.exchanges] == ["key", "key"]
        status, _ = post(proxy.openai_url + "/chat/completions", {"model": "m", "messages": []})
    assert status == 599  # the cassette is used up: the agent is told, nothing is invented
    assert "".join(c.choices[0].delta.content or "" for c in again[0] if c.choices) == "one"
    assert again[1].choices[0].message.content == first[1].choices[0].message.content == "two"


class _SlowStream(BaseHTTPRequestHandler):
    """A model that streams one word every 0.2 s for a long time."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for _ in range(100):
                chunk = {"choices": [{"index": 0, "delta": {"content": "word "}, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            self.server.cut = True


def test_a_reply_the_agent_abandons_still_counts_its_tokens_and_stops_the_model():
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _SlowStream)
    upstream.cut = False
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        slow = Upstream(openai_base=f"http://127.0.0.1:{upstream.server_address[1]}/v1")
        with MeteringProxy(slow, token=TOKEN) as proxy:
            body = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "talk"}]})
            agent = socket.create_connection(("127.0.0.1", int(proxy.url.rsplit(":", 1)[1])), timeout=10)
            agent.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          f"Authorization: Bearer {proxy.token}\r\n"
                          f"Content-Length: {len(body)}\r\n\r\n{body}".encode())
            assert b"word" in agent.recv(4096) + agent.recv(4096)  # the first words arrive, then the agent dies
            agent.close()
            deadline = time.monotonic() + 10
            while not proxy.exchanges and time.monotonic() < deadline:
                time.sleep(0.05)
            totals = proxy.totals()
        (exchange,) = proxy.exchanges
        assert exchange.status == 499 and exchange.usage_source == "local" and "closed" in exchange.error
        assert totals["requests"] == 0 and totals["failed_requests"] == 1
        assert totals["input_tokens"] > 0 and totals["output_tokens"] >= 1
        deadline = time.monotonic() + 5
        while not upstream.cut and time.monotonic() < deadline:
            time.sleep(0.05)
        assert upstream.cut, "the proxy kept the model generating for an agent that is gone"
    finally:
        upstream.shutdown()
        upstream.server_close()


def test_closing_the_proxy_cuts_off_a_request_still_waiting_for_the_model():
    # a busy single-slot server: it reads the request and answers nothing
    listener = socket.create_server(("127.0.0.1", 0))
    seen = {}

    def serve():
        conn, _ = listener.accept()
        conn.settimeout(20)
        while conn.recv(65536):  # read the request, never answer; b"" when the proxy hangs up
            pass
        seen["closed"] = True
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    proxy = MeteringProxy(Upstream(openai_base=f"http://127.0.0.1:{listener.getsockname()[1]}/v1"), token=TOKEN).start()
    ended = {}

    def ask():  # the agent's request: answered with an error or cut off, it must end, and inside this thread
        try:
            ended["status"] = post(proxy.openai_url + "/chat/completions",
                                   {"model": "m", "messages": [{"role": "user", "content": "hi"}]})[0]
        except (OSError, http.client.HTTPException) as err:
            ended["error"] = err

    agent = threading.Thread(target=ask, daemon=True)
    agent.start()
    time.sleep(0.5)  # the request is up there, waiting; the agent is then killed and the trial ends
    started = time.monotonic()
    proxy.close()
    assert time.monotonic() - started < 8
    (exchange,) = proxy.exchanges
    assert exchange.status == 499 and exchange.input_tokens == 0  # not begun: nothing counted
    deadline = time.monotonic() + 5
    while "closed" not in seen and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seen.get("closed") is True
    agent.join(10)
    assert ended and not agent.is_alive()
    listener.close()


class _Recorder(BaseHTTPRequestHandler):
    """An upstream that notes every request it gets (method, path, credentials) and answers each with a small
    chat completion, or a model list."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append((self.command, self.path, self.headers.get("Authorization"),
                                 self.headers.get("x-api-key")))
        body = {"object": "list", "data": [{"id": "m"}]} if self.command == "GET" else {
            "id": "c", "object": "chat.completion", "model": "m", "usage": {"prompt_tokens": 9, "completion_tokens": 2},
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer


@pytest.fixture
def recorder():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


CHAT_BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_only_the_trials_token_is_served_and_it_never_goes_up(recorder):
    upstream = Upstream(openai_base=f"http://127.0.0.1:{recorder.server_address[1]}/v1", api_key="sk-real")
    with MeteringProxy(upstream) as proxy:  # a token of its own, as in a trial
        url = proxy.openai_url + "/chat/completions"
        for headers in ({"Authorization": ""}, {"Authorization": "Bearer bench-metered"},
                        {"Authorization": f"Bearer {proxy.token}x"}, {"x-api-key": "sk-guess"}):
            status, body = post(url, CHAT_BODY, headers)
            assert status == 401 and b"needs this trial's key" in body, headers
        assert post(proxy.openai_url + "/models", None, {"Authorization": ""}, method="GET")[0] == 401
        assert recorder.seen == []  # nothing went up, and no exchange is metered
        assert post(url, CHAT_BODY, {"Authorization": f"Bearer {proxy.token}"})[0] == 200
        assert post(url, CHAT_BODY, {"Authorization": "", "x-api-key": proxy.token})[0] == 200
        totals = proxy.totals()
    assert [s[2:] for s in recorder.seen] == [("Bearer sk-real", None)] * 2  # the real key, never the token
    assert totals["requests"] == 2 and len(proxy.refused) == 5
    upstream.api_key = ""  # a local server with no key: the agent's token does not go up either
    with MeteringProxy(upstream) as proxy:
        assert post(proxy.openai_url + "/chat/completions", CHAT_BODY, {"Authorization": f"Bearer {proxy.token}"})[0] \
            == 200
    assert recorder.seen[-1][2:] == (None, None)


@pytest.mark.parametrize(("method", "path", "body", "status"), [
    ("POST", "/v1/completions", {"model": "m", "prompt": "hi"}, 404),  # legacy completions: not metered
    ("POST", "/v1/chat/completions", [CHAT_BODY], 400),  # a chat body sent as a list
    ("POST", "/v1/chat/completions", "not json", 400),
    ("GET", "/v1/files", None, 404),
    ("POST", "/v1/files", {"purpose": "batch"}, 404),
    ("POST", "/v1/embeddings", {"model": "m", "input": "hi"}, 404),
    ("POST", "/v1/x/chat/completions", CHAT_BODY, 404),
    ("POST", "/anthropic/v1/messages/count_tokens", {"model": "m", "messages": []}, 404),
])
def test_what_the_proxy_cannot_meter_is_refused_not_forwarded(recorder, method, path, body, status):
    upstream = Upstream(openai_base=f"http://127.0.0.1:{recorder.server_address[1]}/v1",
                        anthropic_base=f"http://127.0.0.1:{recorder.server_address[1]}", api_key="sk-real")
    with MeteringProxy(upstream, token=TOKEN) as proxy:
        got, answer = post(proxy.url + path, body, method=method)
        assert got == status and b"metering proxy" in answer
        assert post(proxy.openai_url + "/models", None, method="GET")[0] == 200  # model lists go up as they are
        assert post(proxy.openai_url + "/chat/completions", CHAT_BODY)[0] == 200
    assert [(m, p) for m, p, *_ in recorder.seen] == [("GET", "/v1/models"), ("POST", "/v1/chat/completions")]
    assert len(proxy.exchanges) == 1 and proxy.exchanges[0].input_tokens == 9  # every model exchange is metered


@pytest.mark.parametrize("sent, expected", [({}, 64), ({"max_tokens": 10}, 10), ({"max_tokens": 5000}, 64),
                                            ({"max_completion_tokens": 900}, 64)])
def test_one_output_cap_for_every_agent_lowers_or_sets_each_requests_own(sent, expected):
    with ScriptedServer([{"content": "fine"}, {"content": "again"}]) as server, \
            MeteringProxy(Upstream(openai_base=server.url, output_cap=64), token=TOKEN) as proxy:
        chat(proxy, False, **sent)
        chat(proxy, True, **sent)
    for request in server.requests[-2:]:
        assert request.get("max_completion_tokens", request.get("max_tokens")) == expected
        assert set(request) & {"max_tokens", "max_completion_tokens"} == set(sent) or {"max_tokens"}
