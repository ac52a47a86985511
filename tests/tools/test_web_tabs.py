"""Tabs, dialogs and pages that never yield, in a real Chromium: the current tab stays where the model put it,
every dialog is told with its answer, and a busy page costs seconds, not the browser's two-minute limit."""

from __future__ import annotations

import re
import time

import pytest

from ga.errors import PermissionDenied, ToolError
from tests.tools.test_web_scan import ref_of
from tests.tools.web import test_session as shared
from tests.tools.web.test_session import _context, scan
from tools import web_execute_js
from tools.web import stuck
from tools.web.session import get_session

site, web = shared.site, shared.web
pytestmark = shared.NEEDS_CHROMIUM


def js(ctx, script: str, **args) -> str:
    return web_execute_js.run({"script": script, **args}, ctx).content


def test_a_fresh_browser_uses_its_blank_tab_for_the_first_page(tmp_path, site):
    ctx = _context(tmp_path, f"open {site}/login.html")  # the persistent profile: Chromium starts with a blank tab
    try:
        out = scan(ctx, url=f"{site}/login.html")
        listing = scan(ctx, tabs_only=True)
    finally:
        ctx.close()
    assert re.fullmatch(r"Tabs \(\* current\): t1\* 'Sign in - Acme' \S+/login.html", listing), listing
    assert "about:blank" not in out


def test_the_first_page_opens_in_the_tab_named_when_none_is_open_yet(tmp_path, site):
    ctx = _context(tmp_path, f"open {site}/login.html", browser_profile=False)  # a browser with no tab at all
    try:
        out = scan(ctx, url=f"{site}/login.html", tab="t1", text_only=True)  # what a small model sends first
        with pytest.raises(ToolError, match=r"No tab 't7' \(open tabs: t1\)"):  # once one is open, a wrong name is
            scan(ctx, tab="t7")                                                 # an error
    finally:
        ctx.close()
    assert "Sign in to Acme" in out


def test_a_page_to_open_in_a_tab_that_is_not_open_gets_the_blank_tab_or_a_new_one(tmp_path, site):
    ctx = _context(tmp_path, f"open {site}/login.html")  # Chromium's own blank tab is t1
    try:
        first = scan(ctx, url=f"{site}/login.html", tab="t2", text_only=True)  # a 1.5B model's first call
        second = scan(ctx, url=f"{site}/cookie.html", tab="t9", text_only=True)
        with pytest.raises(ToolError, match=r"No tab 't7' \(open tabs: t1, t2\)"):  # nothing to open: an error
            scan(ctx, tab="t7")
        listing = scan(ctx, tabs_only=True)
    finally:
        ctx.close()
    assert "No tab 't2' was open, so the page opened in blank tab t1." in first and "Sign in to Acme" in first
    assert "No tab 't9' was open, so the page opened in new tab t2." in second
    assert re.search(r"t1 'Sign in - Acme' \S+/login.html \| t2\* 'Shop'", listing), listing


def test_popups_are_listed_and_the_current_tab_and_its_refs_stay(web, site):
    out = scan(web, url=f"{site}/popups.html")
    count = ref_of(out, r"\[button: Count")
    result = js(web, "document.getElementById('open').click()")
    current = re.search(r"Tabs \(\* current\):.*?(t\d+)\* 'Offers'", result)
    assert current, result
    assert re.search(r"New tabs opened by the page: (t\d+ \S+/login.html\?offer=\d+, ){4}t\d+ \S+ and 7 more\. "
                     rf"The current tab stays {current.group(1)}; pass tab=\"t\d+\" to use one\.", result), result
    assert "(+3 older: web_scan(tabs_only=true) lists all)" in result  # 13 tabs here, 10 shown
    assert "Counted 1" in js(web, f"$ga({count}).click(); $ga({count}).textContent")  # the refs still work
    assert "# Offers" in scan(web)
    assert len(re.findall(r"offer=", scan(web, tabs_only=True))) == 12


def test_tabs_only_with_a_url_opens_it_then_lists(web, site):
    out = scan(web, url=f"{site}/cookie.html", tabs_only=True)
    assert re.search(r"t\d+\* 'Shop' \S+/cookie.html", out) and "page content" not in out, out
    assert "Fresh coffee beans" in scan(web)


def test_a_page_s_confirm_is_dismissed_and_told_on_terminal_and_to_the_model(web, site):
    out = scan(web, url=f"{site}/confirm_onload.html")
    assert re.search(r"Dialog confirm in t\d+: 'Really delete your account\?' → dismissed", out) and \
        "Account kept." in out and "Account deleted." not in out
    assert any("'Really delete your account?' → dismissed" in n for n in web.ui.notices)


def test_plan_mode_dismisses_confirms(tmp_path, site):
    ctx = _context(tmp_path, f"Check the account page at {site}/confirm_onload.html", mode="plan",
                   browser_profile=False)
    try:
        out = scan(ctx, url=f"{site}/confirm_onload.html")  # a page on a host the user named: no approval needed
    finally:
        ctx.close()
    assert "'Really delete your account?' → dismissed (plan mode: nothing is confirmed)" in out
    assert "Account kept." in out


def test_plan_mode_navigation_needs_approval_except_to_a_named_host(tmp_path, site):
    task = f"Plan the changes for {site}/login.html"
    ctx = _context(tmp_path / "a", task, mode="plan", browser_profile=False)
    try:
        assert "Sign in to Acme" in scan(ctx, url=f"{site}/login.html")  # named in the task
        with pytest.raises(PermissionDenied, match=r"plan mode: opening pages needs approval.*no human"):
            scan(ctx, url="https://docs.example.org/guide")
    finally:
        ctx.close()
    ctx = _context(tmp_path / "b", task, mode="plan", browser_profile=False, interactive=True,
                   answers=[("reject", ""), ("approve", "")])
    try:
        with pytest.raises(PermissionDenied, match="did not approve"):
            scan(ctx, url="https://docs.example.org/guide")
        with pytest.raises(ToolError, match=r"Could not open https://docs\.example\.org/guide"):  # offline here
            scan(ctx, url="https://docs.example.org/guide")
    finally:
        ctx.close()
    assert [a[0] for a in ctx.ui.asked] == ["approve", "approve"] and "docs.example.org" in ctx.ui.asked[0][2]


@pytest.fixture
def quick_hangs(monkeypatch, web):
    """Hangs found within seconds; the browser is up first (under pytest -n a test may be its worker's first web test,
    and its time bound is for the hang, not for starting Chromium)."""
    get_session(web).call(lambda s: s.ensure())
    monkeypatch.setattr(stuck, "HANG_MS", 2_000)
    monkeypatch.setattr(stuck, "STEP_MS", 1_000)


def test_a_page_that_stops_yielding_once_parsed_is_stopped_and_read(web, site, quick_hangs):
    started = time.monotonic()
    out = scan(web, url=f"{site}/hang_after_parse.html")
    assert time.monotonic() - started < 20, out
    assert re.search(r"Tab t\d+ did not answer \(a script that never yields\): its running script was stopped", out)
    assert "This page's script never yields" in out
    started = time.monotonic()
    assert "Value: 2" in js(web, "1 + 1") and time.monotonic() - started < 5


def test_a_page_busy_on_every_tick_gets_its_scripts_switched_off(web, site, quick_hangs):
    started = time.monotonic()
    out = scan(web, url=f"{site}/hang_ticks.html")
    assert time.monotonic() - started < 30, out
    assert "scripts kept it busy, so they are switched off" in out and "Every tick of this page's timer" in out
    assert "are switched off: it never yielded" in out
    started = time.monotonic()
    assert "Ticking page" in scan(web) and time.monotonic() - started < 5


def test_a_page_stuck_while_loading_is_stopped(web, site, quick_hangs):
    started = time.monotonic()
    out = scan(web, url=f"{site}/hang_head.html")
    assert time.monotonic() - started < 30, out
    assert "did not answer (a script that never yields)" in out and "Status: stopped while loading" in out
    assert "Never parsed" in out  # once the head script is stopped, the document is parsed


def test_a_tab_that_hangs_the_browser_is_not_reopened_at_the_same_url(tmp_path, site):
    ctx = _context(tmp_path, f"see {site}/", browser_profile=False)
    session = get_session(ctx)
    try:
        scan(ctx, url=f"{site}/login.html")
        tab = session.current
        with pytest.raises(ToolError, match="did not answer within 3s"):
            session.call(lambda s: s.on_tab(None, lambda t, p: p.evaluate("while (true) {}")), timeout=3)
        # the abandoned job ends there: it does not restart the browser beside the next call, nor hang it again
        assert "abandoned" in str(session._stale.exception(30))
        out = scan(ctx, tab=tab)
    finally:
        ctx.close()
    assert f"{tab} is blank: {site}/login.html never yielded and was not reopened" in out
    assert f"Tab {tab} is blank" in out

