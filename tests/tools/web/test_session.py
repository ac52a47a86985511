"""The browser session: finding a browser, stable tab ids, any calling thread, crash recovery, profiles, CDP.

Also home of the fixtures the web tool tests share: the local test site and a module-wide browser context.
"""

from __future__ import annotations

import functools
import http.server
import os
import socket
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ga.config import load_settings
from ga.errors import ToolError
from ga.runs.folder import Run
from ga.tooling.spec import ToolContext
from tests.scripted import ScriptedTerminal
from tools import web_scan
from tools.web import launch
from tools.web.launch import locate_browser
from tools.web.session import BrowserSession, get_session

PAGES = Path(__file__).parents[1] / "pages"
CHROMIUM = locate_browser({}, None)
# skipped on a developer machine without a browser; under CI (CI=true) a missing browser fails loudly
NEEDS_CHROMIUM = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                                    reason="no Chromium: apt-get install chromium")
pytestmark = NEEDS_CHROMIUM


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site():
    """tests/tools/pages served by a real HTTP server on 127.0.0.1."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(PAGES)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _context(home: Path, task: str | None = None, *, interactive: bool = False, answers: list | None = None,
             **overrides) -> ToolContext:
    """A tool context; with a task, it is that of a run whose trajectory starts with the task (as ga writes it)."""
    home.mkdir(parents=True, exist_ok=True)
    settings = load_settings(env={}, home=home, workdir=home, **overrides)
    run_dir = home / "runs" / "r1"
    run_dir.mkdir(parents=True, exist_ok=True)
    if task is not None:
        Run(run_dir, {}).append({"type": "message", "message": {"role": "user", "content": task}})
    return ToolContext(settings=settings, run_dir=run_dir, ui=ScriptedTerminal(answers), interactive=interactive)


@pytest.fixture(scope="module")
def web(tmp_path_factory, site):
    """The tool context of a run whose task names the local site; its browser lives for the whole module."""
    ctx = _context(tmp_path_factory.mktemp("home"), f"Work with the site at {site}/", browser_profile=False)
    yield ctx
    ctx.close()


def scan(ctx: ToolContext, **args) -> str:
    return web_scan.run(args, ctx).content


def test_locate_browser_order(tmp_path):
    exe = tmp_path / "chrome"
    exe.write_text("")
    pw = tmp_path / "pw-chromium"
    pw.write_text("")
    which = {"chromium": "/usr/bin/chromium"}.get
    assert locate_browser({"GA_BROWSER": str(exe)}, str(pw), which) == str(exe)
    assert locate_browser({}, str(pw), which) == str(pw)
    assert locate_browser({}, str(tmp_path / "missing"), which) == "/usr/bin/chromium"
    assert locate_browser({}, None, lambda name: None) is None
    with pytest.raises(ToolError, match="GA_BROWSER"):
        locate_browser({"GA_BROWSER": str(tmp_path / "nope")}, None, lambda name: None)


def test_no_browser_gives_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    ctx = _context(tmp_path, browser_profile=False)
    session = BrowserSession(ctx, env={"PLAYWRIGHT_BROWSERS_PATH": str(tmp_path)})
    try:
        with pytest.raises(ToolError) as e:
            session.call(lambda s: s.ensure())
        assert "apt-get install chromium" in str(e.value) and "playwright install chromium" in str(e.value)
    finally:
        session.close()


def test_tabs_have_stable_ids_and_any_thread_may_call(web, site):
    scan(web, url=f"{site}/login.html")
    session = get_session(web)
    with ThreadPoolExecutor(4) as pool:
        ids = list(pool.map(lambda _: session.call(lambda s: s.page()[0]), range(8)))
    assert len(set(ids)) == 1 and ids[0].startswith("t")
    second = session.call(lambda s: s._open(f"{site}/cookie.html"))
    assert second != ids[0]
    listing = scan(web, tabs_only=True)
    assert f"{ids[0]} 'Sign in - Acme'" in listing and f"{second}* 'Shop'" in listing
    assert "Tabs:" in scan(web, tab=ids[0]).splitlines()[0] or "Tabs" in scan(web, tab=ids[0])
    with pytest.raises(ToolError, match="No tab 't99'"):
        scan(web, tab="t99")


def test_crashed_tab_is_reopened_and_the_model_told(web, site):
    scan(web, url=f"{site}/login.html")
    session = get_session(web)

    def crash(s: BrowserSession) -> None:
        try:
            s.tabs[s.current].goto("chrome://crash", timeout=5000)
        except Exception:
            pass

    session.call(crash)
    out = scan(web)
    assert "crashed and was reopened" in out
    assert "Sign in to Acme" in out


def test_closed_browser_is_restarted(web, site):
    scan(web, url=f"{site}/cookie.html")
    session = get_session(web)
    session.call(lambda s: s.context.close())
    out = scan(web)
    assert "browser had crashed and was restarted" in out
    assert "Fresh coffee beans" in out


def test_hung_session_thread_is_replaced_not_queued_behind(web, site):
    scan(web, url=f"{site}/login.html")
    session = get_session(web)
    with pytest.raises(ToolError, match="did not answer within 2s"):
        session.call(lambda s: s.tabs[s.current].evaluate("while (true) {}"), timeout=2)
    started = time.monotonic()
    out = scan(web)
    assert "stopped answering and was restarted" in out and "Sign in to Acme" in out
    assert time.monotonic() - started < 30


def test_persistent_profile_keeps_cookies(tmp_path, site):
    for run in range(2):
        ctx = _context(tmp_path)
        try:
            scan(ctx, url=f"{site}/login.html")
            script = "document.cookie = 'seen=yes; max-age=3600'" if run == 0 else "document.cookie"
            got = get_session(ctx).call(lambda s, sc=script: s.tabs[s.current].evaluate(sc))
        finally:
            ctx.close()
    assert "seen=yes" in got
    assert (tmp_path / "browser-profile").is_dir()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connects_to_a_running_chrome_over_cdp(tmp_path, site, monkeypatch):
    port = _free_port()
    chrome = subprocess.Popen([CHROMIUM, "--headless", f"--remote-debugging-port={port}", "--no-sandbox",
                               "--disable-gpu", "--disable-background-networking", f"--user-data-dir={tmp_path / 'u'}",
                               "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        monkeypatch.setenv("GA_BROWSER_CDP", f"http://127.0.0.1:{port}")
        ctx = _context(tmp_path, browser_profile=False)
        assert "Sign in to Acme" in scan(ctx, url=f"{site}/login.html")
        ctx.close()
        assert chrome.poll() is None, "closing the run must not close the user's browser"
    finally:
        chrome.kill()
        chrome.wait()
    assert os.environ.get("GA_BROWSER_CDP")


def test_a_tmpdir_too_deep_for_chromiums_socket_does_not_stop_the_browser(tmp_path, site, monkeypatch):
    deep = tmp_path / ("trial-" * 12) / "tmp"  # a bench trial's tmp: Chromium aborts with "Socket path too long"
    deep.mkdir(parents=True)
    monkeypatch.setenv("TMPDIR", str(deep))
    assert launch.browser_env()["TMPDIR"] == "/tmp"
    ctx = _context(tmp_path / "home", f"open {site}/login.html")  # the persistent profile, then a fresh one
    try:
        out = scan(ctx, url=f"{site}/login.html", text_only=True)
    finally:
        ctx.close()
    assert "Sign in to Acme" in out and "could not be used" not in out
    monkeypatch.setenv("TMPDIR", "/tmp")
    assert launch.browser_env() is None  # a short TMPDIR is left as it is (tmp_path may be long: pytest -n)
