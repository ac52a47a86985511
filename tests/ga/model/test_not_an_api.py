"""A base URL that is no OpenAI-compatible API (a web server, a wrong path) fails at the first answer, saying what
answered and never showing the page; a 500 or a gateway's 502-504 is retried (by the openai SDK). Real HTTP
servers: Python's own http.server (what `python -m http.server` runs) and a web server of canned answers."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ga.config import load_settings
from ga.errors import ModelError, NotAnAPI, ServerUnreachable
from ga.model.client import OpenAIModel

MESSAGES = [{"role": "user", "content": "hello"}]
PAGE = ("<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome</h1>"
        + "<p>filler</p>" * 500 + "</body></html>")


class Canned(BaseHTTPRequestHandler):
    """Answers with the server's (status, content type, body) answers in order; counts the requests."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.hits += 1
        answers = self.server.answers  # in order; the last one stays
        status, kind, body = answers.pop(0) if len(answers) > 1 else answers[0]
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


class Counted(SimpleHTTPRequestHandler):
    def do_POST(self) -> None:  # what http.server does (501 "Unsupported method"), counted
        self.server.hits += 1
        self.send_error(501, "Unsupported method ('POST')")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web(tmp_path):
    """web(answer=None, path="/v1") -> (server, model); answer None: Python's own http.server."""
    servers = []

    def start(answer: tuple[int, str, str] | list | None = None, path: str = "/v1", retries: int = 6):
        server = ThreadingHTTPServer(("127.0.0.1", 0), Canned if answer else Counted)
        server.hits, server.answers = 0, answer if isinstance(answer, list) else [answer]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        settings = load_settings(env={}, base_url=f"http://127.0.0.1:{server.server_address[1]}{path}",
                                 api_key="k", model="m", home=tmp_path, workdir=tmp_path, retries=retries)
        return server, OpenAIModel(settings)

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("stream", [True, False])
def test_python_http_server_is_named_as_no_api_after_one_try(web, stream):
    server, model = web()
    model.streaming = stream
    with pytest.raises(NotAnAPI) as caught:
        model.complete(MESSAGES, [])
    message = str(caught.value)
    assert f"127.0.0.1:{server.server_address[1]}/v1 is not an OpenAI-compatible API (it answered 501 text/html" \
        in message
    assert "<" not in message and "/v1" in message and server.hits == 1
    assert isinstance(caught.value, ServerUnreachable)  # a run that had not started is not kept


@pytest.mark.parametrize(("answer", "shown"), [
    ((404, "text/html", PAGE), '404 text/html: "Welcome to nginx!"'),
    ((404, "text/plain; charset=utf-8", "404 page not found"), "404 text/plain"),  # Ollama without /v1
    ((405, "text/plain", "Method Not Allowed"), "405 text/plain"),
    ((200, "text/html; charset=utf-8", PAGE), '200 text/html: "Welcome to nginx!"'),  # a web app's catch-all page
    ((400, "text/html", PAGE), "400 text/html"),
])
@pytest.mark.parametrize("stream", [True, False])
def test_a_web_page_or_a_bare_404_fails_at_once(web, answer, shown, stream):
    server, model = web(answer, path="")
    model.streaming = stream
    with pytest.raises(NotAnAPI, match=f"it answered {shown}") as caught:
        model.complete(MESSAGES, [])
    assert server.hits == 1 and "filler" not in str(caught.value)
    assert "end in /v1" in str(caught.value)


def test_a_json_404_is_an_api_refusing_the_model_not_a_web_page(web):
    server, model = web((404, "application/json", '{"error": {"message": "model \\"m\\" not found"}}'))
    with pytest.raises(ModelError, match="HTTP 404") as caught:
        model.complete(MESSAGES, [])
    assert not isinstance(caught.value, NotAnAPI) and "GA_MODEL" in str(caught.value)
    assert server.hits == 1


def test_a_500_is_retried_as_often_as_ga_retries_says(web):
    server, model = web((500, "application/json", '{"error": {"message": "template error"}}'), retries=2)
    with pytest.raises(ModelError, match=r"after 3 attempts: the server at \S+ answered 500 server error: template"):
        model.complete(MESSAGES, [])
    assert server.hits == 3


def test_a_gateway_error_page_is_retried_in_full_and_never_shown(web):
    server, model = web((502, "text/html", "<html><head><title>502 Bad Gateway</title></head>"
                                           "<body>nginx</body></html>"), retries=2)
    with pytest.raises(ModelError) as caught:
        model.complete(MESSAGES, [])
    assert not isinstance(caught.value, NotAnAPI) and server.hits == 3
    assert "502 server error: a web page (502 Bad Gateway)" in str(caught.value) and "<" not in str(caught.value)


def test_a_login_page_in_front_is_no_api_either(web):
    server, model = web((401, "text/html", PAGE))
    with pytest.raises(NotAnAPI, match='401 text/html: "Welcome to nginx!"'):
        model.complete(MESSAGES, [])
    assert server.hits == 1


def test_after_a_reply_a_web_page_is_a_passing_proxy_trouble_and_retried(web):
    completion = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]})
    server, model = web([(200, "application/json", completion), (200, "text/html", PAGE),
                         (200, "application/json", completion)])
    model.streaming = False
    assert model.complete(MESSAGES, []).content == "hi"
    assert model.complete(MESSAGES, []).content == "hi"  # the page in between: one retry
    assert server.hits == 3
