"""web_execute_js in a real Chromium: values, errors, and what changed (navigation, tabs, dialogs, toasts, DOM)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from ga.protocols import ToolCall
from ga.tooling.dispatch import Dispatcher
from tests.tools.test_web_scan import ref_of
from tests.tools.web import test_session as shared
from tests.tools.web.test_session import scan
from tools import web_execute_js

site, web = shared.site, shared.web  # the shared fixtures: local site, module browser
pytestmark = shared.NEEDS_CHROMIUM


def js(ctx, script: str, **args):
    return web_execute_js.run({"script": script, **args}, ctx)


def test_expressions_statements_await_and_return(web, site):
    scan(web, url=f"{site}/login.html")
    assert js(web, "document.title").content.startswith('Value: "Sign in - Acme"')
    assert "Value: 2" in js(web, "let a = 1;\nawait new Promise(r => setTimeout(r, 20));\na + 1").content
    assert "Value: 5" in js(web, "const x = 5; return x").content
    assert 'Value: {"n":1,"list":[1,2]}' in js(web, "({n: 1, list: [1, 2]})").content


def test_dom_nodes_come_back_as_short_html_with_refs(web, site):
    scan(web, url=f"{site}/login.html")
    out = js(web, "document.querySelector('form')").content
    assert '<form id="login"' in out and 'data-ga=' in out and "onsubmit" not in out
    assert len(out) < 1500


def test_errors_are_reported(web, site):
    result = js(web, "throw new Error('boom')")
    assert result.is_error and "Error: boom" in result.content


def test_fill_and_submit_a_form_reports_the_change(web, site):
    out = scan(web, url=f"{site}/login.html")
    email, button = ref_of(out, r"\[input email"), ref_of(out, r"\[button: Log in")
    result = js(web, f"$ga({email}).value = 'ada@example.com'; $ga({button}).click()")
    assert "Welcome, ada@example.com" in result.content and "Changed" in result.content


def test_toast_that_vanishes_is_still_reported(web, site):
    out = scan(web, url=f"{site}/toast.html")
    save = ref_of(out, r"\[button: Save")
    result = js(web, f"$ga({save}).click()")
    assert "Messages shown: 'Profile saved'" in result.content


def test_dialogs_are_answered_and_reported(web, site):
    scan(web, url=f"{site}/tabs.html")
    alert = js(web, "document.getElementById('alert').click()").content  # the module's browser: any current tab
    assert re.search(r"Dialog alert in t\d+: 'Saved!' → accepted", alert), alert
    confirm = js(web, "document.getElementById('confirm').click(); document.getElementById('out').textContent").content
    assert re.search(r"Dialog confirm in t\d+: 'Delete item\?' → dismissed", confirm) and '"kept"' in confirm
    assert "window.confirm = () => true" in confirm  # how to say yes on purpose
    prompt = js(web, "document.getElementById('prompt').click(); document.getElementById('out').textContent").content
    assert "Dialog prompt" in prompt and "→ dismissed" in prompt and 'Value: ""' in prompt, prompt
    said = js(web, "window.confirm = () => true; document.getElementById('confirm').click(); "
                   "document.getElementById('out').textContent").content
    assert '"deleted"' in said and "Dialog" not in said  # the model's script answered, in plain sight


def test_link_to_a_new_tab_is_listed_and_the_current_tab_stays(web, site):
    scan(web, url=f"{site}/tabs.html")
    result = js(web, "document.getElementById('newtab').click()").content
    new_tab = re.search(r"New tab opened by the page: (t\d+) \S+/login.html\. The current tab stays (t\d+)", result)
    assert new_tab, result
    assert "# Links" in scan(web) and "Value: \"Links\"" in js(web, "document.title").content
    assert "Sign in to Acme" in scan(web, tab=new_tab.group(1))  # naming a tab switches to it
    assert f"{new_tab.group(1)}*" in scan(web, tabs_only=True)


def test_single_page_route_change(web, site):
    scan(web, url=f"{site}/spa.html")
    out = js(web, "document.getElementById('settings-link').click()").content
    assert re.search(r"Navigated: \S+/spa/settings \(same page \(route change\)", out)
    assert "Change your display preferences" in out


def test_full_navigation(web, site):
    scan(web, url=f"{site}/tabs.html")
    out = js(web, "location.href = '/cookie.html'").content
    assert re.search(r"Navigated: \S+/cookie.html \(new page loaded; title 'Shop'\)", out)


def test_large_values_are_saved_with_a_preview(web, site):
    result = js(web, "'x'.repeat(20000)")
    assert "preview" in result.content and len(result.content) < 2500
    assert Path(result.details["full_output"]).read_text().count("x") == 20000


def test_timeout(web, site, monkeypatch):
    monkeypatch.setattr(web_execute_js, "TIMEOUT_MS", 300)
    result = js(web, "await new Promise(() => {})")
    assert result.is_error and "timed out" in result.content


def test_endless_loop_is_stopped_and_the_browser_still_works(web, site, monkeypatch):
    monkeypatch.setattr(web_execute_js, "TIMEOUT_MS", 1500)
    scan(web, url=f"{site}/login.html")
    started = time.monotonic()
    result = js(web, "while (true) {}")
    assert result.is_error and "timed out" in result.content and "was stopped" in result.content
    assert time.monotonic() - started < 10
    assert "Value: 2" in js(web, "1 + 1").content
    assert "Sign in to Acme" in scan(web)


def test_values_of_other_types_are_readable(web, site):
    out = js(web, "[10n, new Map([['a', 1]]), new Set([2]), new Date(0), /x+/g, Symbol('s')]").content
    assert out.startswith('Value: ["10n",{"Map(1)":[["a",1]]},{"Set(1)":[2]},"1970-01-01T00:00:00.000Z","/x+/g",'
                          '"Symbol(s)"]'), out
    assert "Value: \"1n\"" in js(web, "1n").content


def test_a_tab_closed_by_the_page_is_reported_and_forgotten(web, site):
    scan(web, url=f"{site}/login.html")
    scan(web, url=f"{site}/cookie.html")
    opened = js(web, "window.open('/tabs.html')").content
    tab = re.search(r"New tab opened by the page: (t\d+) \S+/tabs.html", opened).group(1)
    out = js(web, "window.close()", tab=tab).content
    assert f"Tab {tab} was closed by the page" in out and "Navigated" not in out
    assert not re.search(rf"\b{tab}\b", scan(web, tabs_only=True))


def test_plan_mode_refuses_it(make_ctx):
    ctx = make_ctx(mode="plan")
    [result] = Dispatcher([web_execute_js.SPEC]).dispatch(
        [ToolCall(id="c1", name="web_execute_js", arguments='{"script": "1"}')], ctx)
    assert result.is_error and "plan mode" in result.content
    assert "browser" not in ctx.resources


def test_texts_changed_in_place_are_reported_largest_first(web, site):
    out = scan(web, url=f"{site}/signin.html")
    user, button = ref_of(out, r"\[input name=user"), ref_of(out, r"\[button: Sign in")
    result = js(web, f"$ga({user}).value = 'ada'; $ga({button}).click()").content
    line = next(x for x in result.splitlines() if x.startswith("Text changed (largest first): "))
    parts = line.removeprefix("Text changed (largest first): ").split(" | ")
    assert parts[0].startswith("p 'You are not signed in. Sign in to see your projects and their open issues.' → "
                               "'You are signed in as ada."), parts  # the largest change first
    assert "h1 'Sign in' → 'Dashboard'" in parts and f"[button]#{button} 'Sign in' → 'Sign out'" in parts, parts
    # a small change in a long text: the changed part with a little context, not the whole paragraph
    assert re.search(r"p '…[^']{0,40}currently: never\) is kept[^']{0,30}…' → '…[^']{0,40}currently: "
                     r"today at 09:12\) is kept[^']{0,30}…'", line), line
    assert "Added (largest DOM change" in result and "Apollo: 3 open issues" in result
    assert not re.search(r"\d{4}-\d\d-\d\dT", line)  # the clock ticking outside the main region is no text change


def test_an_unchanged_page_says_so(web, site):
    scan(web, url=f"{site}/login.html")
    assert "No visible change on the page." in js(web, "1").content
