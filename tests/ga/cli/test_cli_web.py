"""The web tools through the real run.py: a page served on 127.0.0.1, a real Chromium, the browser closed at the end."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

from tests.ga.cli.test_cli import ga
from tests.scripted import ScriptedServer, tool_call
from tests.tools.test_web_network import _serve
from tests.tools.web.test_session import NEEDS_CHROMIUM

PAGES = Path(__file__).resolve().parents[2] / "tools" / "pages"
pytestmark = NEEDS_CHROMIUM


@pytest.fixture
def site():
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(PAGES))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_scan_fill_and_submit_a_login_form(tmp_path, workspace, site):
    fill = ("document.querySelector('input[name=email]').value = 'ann@example.com';"
            "document.querySelector('button[type=submit]').click();"
            "document.getElementById('msg').textContent")
    steps = [{"tool_calls": [tool_call("web_scan", url=f"{site}/login.html")]},
             {"tool_calls": [tool_call("web_execute_js", script=fill)]},
             {"content": "Logged in."}]
    with ScriptedServer(steps) as server:
        proc = ga([f"log in at {site}/login.html"], server, tmp_path / "home", workspace, timeout=120)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    scanned = server.requests[1]["messages"][-1]["content"]
    assert "Sign in to Acme" in scanned and "Log in" in scanned and "SECRET-TOKEN" not in scanned
    assert "Welcome, ann@example.com" in server.requests[2]["messages"][-1]["content"]
    assert (tmp_path / "home" / "browser-profile").is_dir()  # cookies persist between runs by default


def test_the_browser_reaches_the_local_site_the_task_names_and_no_other(tmp_path, workspace, site):
    service, service_url = _serve("127.0.0.2")  # a local service nobody named
    steps = [{"tool_calls": [tool_call("web_scan", url=f"{site}/login.html")]},
             {"tool_calls": [tool_call("web_scan", url=f"{service_url}/admin")]},
             {"tool_calls": [tool_call("web_scan", url="http://169.254.169.254/latest/meta-data/")]},
             {"content": "The title is Sign in to Acme."}]
    try:
        with ScriptedServer(steps) as server:
            proc = ga([f"Open {site}/login.html and report the title"], server, tmp_path / "home", workspace,
                      timeout=120)
            server.assert_complete()
    finally:
        service.shutdown()
    assert proc.returncode == 0, proc.stderr
    results = [server.requests[i]["messages"][-1]["content"] for i in (1, 2, 3)]
    assert "Sign in to Acme" in results[0]
    assert "127.0.0.2" in results[1] and "rule: web-local-hosts" in results[1]
    assert "link-local" in results[2] and "rule: web-local-hosts" in results[2]
    assert service.hits == []


def test_plan_mode_opens_only_named_hosts_when_unattended(tmp_path, workspace, site):
    steps = [{"tool_calls": [tool_call("web_scan", url=f"{site}/login.html")]},
             {"tool_calls": [tool_call("web_scan", url="https://docs.example.org/setup")]},
             {"content": "Plan: ..."}]
    with ScriptedServer(steps) as server:
        proc = ga([f"Plan how to test {site}/login.html", "--plan"], server, tmp_path / "home", workspace,
                  timeout=120)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert "Sign in to Acme" in server.requests[1]["messages"][-1]["content"]
    refused = server.requests[2]["messages"][-1]["content"]
    assert "plan mode: opening pages needs approval" in refused and "no human is at a terminal" in refused


def test_the_text_format_reads_a_page_with_a_block_of_one_web_scan_line(tmp_path, workspace, site):
    # the sandbox's shell has no network: in the text format a block that starts with `web_scan URL` is the web
    # tool; a pipe after it cannot run on a tool's text, and the model is told so
    steps = [{"content": f"```bash\nweb_scan {site}/login.html\n```"},
             {"content": f"```bash\nweb_scan {site}/login.html | grep -o 'Sign in[a-zA-Z ]*' > title.txt\n```"},
             {"content": "```bash\necho 'Sign in to Acme' > title.txt\n```"},
             {"content": "The title is Sign in to Acme, written to title.txt."}]
    with ScriptedServer(steps) as server:
        proc = ga([f"Write the title of {site}/login.html into title.txt", "--json"], server, tmp_path / "home",
                  workspace, timeout=120, GA_MODEL_SETTINGS="small:action_format=bash")
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    first, second, third, _ = server.requests
    assert "web_scan URL" in first["messages"][0]["content"] and not first.get("tools")
    assert second["messages"][-2]["content"] == f"```bash\nweb_scan {site}/login.html\n```"
    page = second["messages"][-1]["content"]
    assert "Sign in to Acme" in page and "SECRET-TOKEN" not in page and page.endswith("reply without a block.)")
    assert third["messages"][-1]["content"].startswith(f"(Only `web_scan {site}/login.html` ran: a script cannot pipe")
    assert "Sign in to Acme" in third["messages"][-1]["content"]
