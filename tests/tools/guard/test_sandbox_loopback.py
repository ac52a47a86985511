"""The sandbox's own network: the host's 127.0.0.1 is not there, and a refused connection to it says so, names the
ways out, and is offered to run outside on a terminal (as a DNS failure is); GA_SANDBOX_PORTS lets the host's ports
the user names through, and only those."""

from __future__ import annotations

import http.server
import tempfile
import threading
from collections.abc import Iterator

import pytest

from tests.tools.code_runs import dispatch, run
from tools.guard import sandbox, sandbox_ports, sandbox_probe

needs_bwrap = pytest.mark.skipif(bool(sandbox_probe.problem()), reason="bubblewrap missing or not permitted here")


@pytest.fixture
def host_server() -> Iterator[int]:
    """A web server on the host's loopback (a dev server, say): its port."""
    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"HOST-SERVER-SAYS-HI\n")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def curl(port: int) -> str:
    return f"curl -sS --max-time 10 http://127.0.0.1:{port}/"


@needs_bwrap
def test_a_refused_connection_to_loopback_tells_the_model_the_sandbox_has_its_own_network(make_ctx, host_server,
                                                                                           monkeypatch):
    monkeypatch.delenv(sandbox.NETWORK_ENV, raising=False)
    result = run(make_ctx(sandbox=True), curl(host_server), type="bash")
    assert result.is_error and "HOST-SERVER-SAYS-HI" not in result.content
    assert "hint: the sandbox has its own network: 127.0.0.1 (localhost) inside it is not the host's" in result.content
    assert "GA_SANDBOX_NET=1" in result.content and "--no-sandbox" in result.content
    assert result.details["sandbox_blocked"].startswith("its network is its own")
    python = f"import urllib.request; urllib.request.urlopen('http://localhost:{host_server}/', timeout=10)"
    refused = run(make_ctx(sandbox=True), python)  # Python's ConnectionRefusedError names no address
    assert "inside it is not the host's" in refused.content and "sandbox_blocked" in refused.details


@needs_bwrap
def test_a_silent_fetch_that_got_nothing_is_told_the_same_and_the_way_to_a_page(make_ctx, host_server, monkeypatch):
    # `curl -s` says nothing and a pipe hides its exit code: a small model sent it again and again over "(no output)"
    monkeypatch.delenv(sandbox.NETWORK_ENV, raising=False)
    for script in (f"curl -s http://127.0.0.1:{host_server}/page.html > page.txt",
                   f"curl -s http://127.0.0.1:{host_server}/page.html | grep -o 'Widget.*' > price.txt"):
        result = run(make_ctx(sandbox=True), script, type="bash")
        assert "inside it is not the host's" in result.content
        assert "To read a web page, use web_scan URL" in result.content
    offline = run(make_ctx(sandbox=True), "curl -s https://example.com/ | head -3", type="bash").content
    assert "hint: the sandbox has no network" in offline and "web_scan URL" in offline
    shared = make_ctx(sandbox=True)
    monkeypatch.setenv(sandbox.NETWORK_ENV, "1")
    assert "hint" not in run(shared, f"curl -s http://127.0.0.1:{host_server}/ | grep -c NOPE", type="bash").content


@needs_bwrap
def test_on_a_terminal_the_user_may_let_the_one_command_reach_the_host(make_ctx, host_server, monkeypatch):
    monkeypatch.delenv(sandbox.NETWORK_ENV, raising=False)
    ctx = make_ctx(sandbox=True, interactive=True, answers=[("approve", "")])
    result = run(ctx, curl(host_server), type="bash")
    assert "its network is its own" in ctx.ui.asked[0][1] and "run this one command outside it?" in ctx.ui.asked[0][1]
    assert "HOST-SERVER-SAYS-HI" in result.content and result.details["sandbox"] is False


@needs_bwrap
def test_with_the_network_shared_the_host_s_loopback_answers(make_ctx, host_server, monkeypatch):
    monkeypatch.setenv(sandbox.NETWORK_ENV, "1")
    result = run(make_ctx(sandbox=True), curl(host_server), type="bash")
    assert not result.is_error and "HOST-SERVER-SAYS-HI" in result.content, result.content


@needs_bwrap
def test_in_plan_mode_a_refused_connection_gets_plan_mode_s_hint(make_ctx, host_server, monkeypatch):
    monkeypatch.delenv(sandbox.NETWORK_ENV, raising=False)
    result = run(make_ctx(mode="plan"), curl(host_server), type="bash")
    assert "hint: this is plan mode" in result.content and "GA_SANDBOX_NET" not in result.content


@needs_bwrap
def test_the_host_ports_the_user_names_are_let_through_and_no_others(make_ctx, host_server, monkeypatch, tmp_path):
    monkeypatch.delenv(sandbox.NETWORK_ENV, raising=False)
    other = host_server + 1 if host_server < 65535 else host_server - 1
    monkeypatch.setenv(sandbox_ports.PORTS_ENV, f"{host_server},{other}")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the bridge's folder goes: seen after the call
    script = f"{curl(host_server)} && echo ---; curl -sS --max-time 5 http://127.0.0.1:{host_server + 7}/"
    ctx = make_ctx(sandbox=True)
    result = run(ctx, script, type="bash")
    assert "HOST-SERVER-SAYS-HI\n---" in result.content, result.content  # the named port answers from the host
    assert "Failed to connect" in result.content or "Couldn't connect" in result.content  # an unnamed one does not
    python = (f"import urllib.request; print(urllib.request.urlopen('http://localhost:{host_server}/', "
              "timeout=10).read().decode())")
    assert "HOST-SERVER-SAYS-HI" in run(ctx, python).content  # Python, via localhost, too
    ctx.close()
    assert "ga-ports-" not in " ".join(p.name for p in tmp_path.iterdir())  # the bridge is gone with the run
    assert not run(make_ctx(sandbox=True), "sleep 0.2; echo later", type="bash").is_error  # no stale forwarder
    refused = run(make_ctx(sandbox=True), f"curl -sS --max-time 5 http://127.0.0.1:{other}/", type="bash")
    assert refused.is_error and "HOST-SERVER" not in refused.content  # named, but nothing listens on the host


def test_a_bad_ports_list_is_a_clear_error_and_runs_nothing(make_ctx, workspace, monkeypatch):
    monkeypatch.setenv(sandbox_ports.PORTS_ENV, "8799,db")
    result = dispatch(make_ctx(sandbox=True), script="open('ran', 'w')")
    assert result.is_error and "'db' is not a port" in result.content and "nothing was run" in result.content
    assert not (workspace / "ran").exists()
