"""The metering proxy: one meter for every agent. It listens on 127.0.0.1, forwards each request to the real
endpoint and records the exchange: tokens (the server's usage, else a local count), latency, the reply's tool calls.

    POST /v1/chat/completions, /v1/responses   → the OpenAI-compatible upstream (its base URL ends in /v1), metered
    POST /anthropic/v1/messages                → the Anthropic upstream, metered
    GET  /v1/models[/ID], /anthropic/v1/models → forwarded as they are (a model list costs no tokens)
    anything else                              → refused, never forwarded: what the proxy cannot count does not go up

A streamed Chat Completions request without `stream_options.include_usage` gets it added on the way up, so the
server reports usage, and the extra usage chunk is taken out on the way back: the agent sees the stream it asked for.

The proxy adds the real key (when it has one) on the way up, so it must not be an open relay: every request must
carry this trial's token (`Authorization: Bearer TOKEN` or `x-api-key: TOKEN`), which the adapters give the agent
as its API key. Any other local process gets 401, and the token itself never goes up.
"""

from __future__ import annotations

import hmac
import http.client
import json
import logging
import secrets
import threading
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench.harness.cassette import Cassette
from bench.harness.meter import ANTHROPIC, CHAT, RESPONSES
from bench.harness.relay import Exchange, Relay, Upstream, UpstreamCall

__all__ = ["Exchange", "MeteringProxy", "Upstream"]

log = logging.getLogger(__name__)


METERED = {"/v1/chat/completions": CHAT, "/v1/responses": RESPONSES, "/anthropic/v1/messages": ANTHROPIC}
MODEL_LISTS = ("/v1/models", "/anthropic/v1/models")


def _route(path: str) -> str:
    return path.split("?", maxsplit=1)[0].rstrip("/")


def _is_model_list(path: str) -> bool:
    route = _route(path)
    return route in MODEL_LISTS or (route.startswith(MODEL_LISTS[0] + "/") and route.count("/") == 3)


class MeteringProxy:
    """Use as a context manager: `with MeteringProxy(upstream, log_path) as proxy: agent(proxy.openai_url)`."""

    def __init__(self, upstream: Upstream, log_path: Path | None = None, *, cassette: Cassette | None = None,
                 rewrite: dict[str, str] | None = None, token: str | None = None):
        self.upstream, self.log_path, self.cassette = upstream, log_path, cassette
        self.token = token or secrets.token_urlsafe(24)
        """What an agent must send as its API key: the proxy serves no one else (it adds the real key)."""
        self.refused: list[str] = []
        """Requests turned away (`401 GET /v1/files`): without the token, or to a route the proxy cannot meter."""
        self.rewrite = rewrite or {}
        """Trial-specific strings (its folder) → placeholders, for cassette keys."""
        self.exchanges: list[Exchange] = []
        self._lock = threading.Condition()
        self._in_flight = 0
        self.closing = False
        """True once close() began: an upstream failing then was cut off by us, not unreachable."""
        self._upstreams: set[UpstreamCall] = set()
        """Connections to the upstream still open: closed with the proxy, so a model stops working for an agent
        that was killed (a single-slot local server would otherwise finish the reply for nobody)."""
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("MeteringProxy is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_url(self) -> str:
        return self.url + "/anthropic"

    def start(self) -> MeteringProxy:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # close() never waits on a handler stuck with a silent upstream
        self._httpd.proxy = self  # type: ignore[attr-defined]
        threading.Thread(target=self._httpd.serve_forever, name="metering-proxy", daemon=True).start()
        return self

    def close(self) -> None:
        """Stop; a request still waiting on the upstream (its agent is gone) is cut off and recorded as abandoned.
        Safe to call twice."""
        if self._httpd is None:
            return
        self.settle(2)
        with self._lock:
            self.closing = True
            for call in list(self._upstreams):
                call.cut()
        self.settle(5)  # the cut-off exchanges get recorded
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd = None

    def __enter__(self) -> MeteringProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def begin(self) -> None:
        with self._lock:
            self._in_flight += 1

    def track(self, call: UpstreamCall, open_: bool) -> None:
        with self._lock:
            (self._upstreams.add if open_ else self._upstreams.discard)(call)

    def record(self, exchange: Exchange | None) -> None:
        """Ends an exchange begun with begin(); None: nothing to record (the agent went away)."""
        with self._lock:
            self._in_flight -= 1
            self._lock.notify_all()
            if exchange is None:
                return
            self.exchanges.append(exchange)
            if self.log_path is not None:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(asdict(exchange), ensure_ascii=False) + "\n")

    def settle(self, timeout: float = 10) -> None:
        """Wait until every exchange in flight is recorded: a reply reaches the agent just before it is metered."""
        with self._lock:
            self._lock.wait_for(lambda: self._in_flight <= 0, timeout)

    def totals(self) -> dict:
        """Sums over the metered exchanges: `requests` counts the answered ones (status 200), tokens also count
        replies the agent abandoned mid-way (499: the model worked for them), tool calls only answered ones."""
        self.settle()
        with self._lock:
            done = [e for e in self.exchanges if e.status == 200]
            spent = [e for e in self.exchanges if e.status in (200, 499)]
            return {"requests": len(done), "failed_requests": len(self.exchanges) - len(done),
                    "input_tokens": sum(e.input_tokens for e in spent),
                    "cached_tokens": sum(e.cached_tokens for e in spent),
                    "output_tokens": sum(e.output_tokens for e in spent),
                    "tool_calls": sum(len(e.tool_calls) for e in done),
                    "usage_local": sum(1 for e in spent if e.usage_source == "local"),
                    "server_s": round(sum(e.server_ms or 0 for e in spent) / 1000, 3),
                    "wait_s": round(sum(max(0.0, e.latency_s - e.server_ms / 1000) for e in spent
                                        if e.server_ms is not None), 3)}

    def target(self, path: str) -> str:
        """The upstream URL for a path the agent requested ('' when the path is not ours)."""
        if path.startswith("/anthropic/"):
            return self.upstream.anthropic_base.rstrip("/") + path[len("/anthropic"):]
        if path.startswith("/v1/") and self.upstream.openai_base:
            return self.upstream.openai_base.rstrip("/") + path[len("/v1"):]
        return ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: object) -> None:
        log.debug("proxy: " + format, *args)

    @property
    def proxy(self) -> MeteringProxy:
        return self.server.proxy  # type: ignore[attr-defined]

    def do_GET(self) -> None:
        if not self._admitted():
            return
        if not _is_model_list(self.path):
            self._refuse(404, "is not a route the proxy meters, so it is not forwarded (model requests go to "
                              "/v1/chat/completions, /v1/responses or /anthropic/v1/messages)")
            return
        self._forward_plain(b"")

    def do_POST(self) -> None:
        try:
            raw = self.rfile.read(max(0, int(self.headers.get("Content-Length") or 0)))
        except ValueError:
            self.close_connection = True
            raw = b""
        if not self._admitted():
            return
        api = METERED.get(_route(self.path), "")
        if not api:
            self._refuse(404, "is not a route the proxy meters, so it is not forwarded (model requests go to "
                              "/v1/chat/completions, /v1/responses or /anthropic/v1/messages)")
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._refuse(400, "needs a JSON object as its body: anything else could not be metered, so it is not "
                              "forwarded")
            return
        self.proxy.begin()
        exchanger = Relay(self, api, body)
        try:
            exchanger.run()
        except (OSError, http.client.HTTPException):  # the agent went away, or the proxy cut off its upstream
            log.debug("proxy: exchange abandoned mid-reply")
            self.proxy.record(exchanger.abandoned())
        except BaseException:
            self.proxy.record(None)
            raise

    def _admitted(self) -> bool:
        """Whether the request carries this trial's token; if not it is answered 401 here."""
        bearer = self.headers.get("Authorization") or ""
        given = [bearer[7:].strip() if bearer[:7].lower() == "bearer " else "", self.headers.get("x-api-key") or ""]
        token = self.proxy.token.encode()
        if any(hmac.compare_digest(g.encode(), token) for g in given if g):
            return True
        self._refuse(401, "needs this trial's key: the proxy adds the real key upstream, so it serves only the "
                          "agent it was started for")
        return False

    def _refuse(self, status: int, why: str) -> None:
        self.proxy.refused.append(f"{status} {self.command} {_route(self.path)}")
        self.close_connection = True
        self.send_json(status, {"error": {"message": f"metering proxy: {self.command} {_route(self.path)} {why}",
                                          "type": "metering_proxy"}})

    def _forward_plain(self, raw: bytes) -> None:
        """Model lists go up and come back as they are."""
        target = self.proxy.target(self.path)
        if not target:
            self.send_json(404, {"error": {"message": f"metering proxy: no route for {self.path}"}})
            return
        try:
            call = UpstreamCall(self, target, raw, self.proxy.upstream)
            data = call.response.read()
        except OSError as e:
            self.send_json(502, {"error": {"message": f"metering proxy: upstream {target} unreachable: {e}"}})
            return
        call.close()
        self.send_bytes(call.response.status, call.response.getheader("Content-Type", "application/json"), data)

    def send_json(self, status: int, body: dict) -> None:
        self.send_bytes(status, "application/json", json.dumps(body).encode())

    def send_bytes(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self, status: int, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")  # the body ends when the connection does
        self.end_headers()
        self.close_connection = True
