"""What both web tools do with a tab: check and permit a URL, open it within bounded time, and describe tabs,
dialogs and what else happened since the last call."""

from __future__ import annotations

import os
import re
import time
from typing import TYPE_CHECKING, Any

from ga.errors import PermissionDenied, ToolError
from tools.web import hosts, network, stuck, tabs
from tools.web.scan_budget import short

if TYPE_CHECKING:
    from ga.tooling.spec import ToolContext
    from tools.web.session import BrowserSession

NAV_TIMEOUT_MS = 30_000
LOAD_WAIT_MS = 5_000
TABS_SHOWN = 10
"""Tabs listed in a result (the current one always); web_scan(tabs_only=true) lists all."""
_PLAIN_HTTP = re.compile(r"(localhost|[\w.-]+\.localhost|127(\.\d{1,3}){3}|0\.0\.0\.0|\[::1\])(:\d+)?([/?#]|$)"
                         r"|[^/?#:\s]+:\d+([/?#]|$)", re.IGNORECASE)
"""Addresses without a scheme that mean a local or development server (host:port): opened with http://."""


def check_url(url: str, env: dict[str, str] | None = None) -> str:
    """The URL to open, or PermissionDenied for a scheme that is not allowed (http and https are).

    Without a scheme: http:// for localhost, 127.x.x.x, [::1] and host:port (a development server), else https://."""
    env = os.environ if env is None else env
    url = url.strip()
    if "://" not in url and not url.startswith(("about:", "data:", "javascript:", "file:")):
        url = ("http://" if _PLAIN_HTTP.match(url) else "https://") + url
    scheme = url.split(":", 1)[0].lower()
    allowed = {"http", "https", "about"} | {s.strip().lower() for s in env.get("GA_ALLOW_SCHEMES", "").split(",")}
    if scheme not in allowed:
        raise PermissionDenied(
            f"Refused to open {url[:100]}: only http and https pages may be opened (rule: web-schemes). "
            "The user can allow more schemes with GA_ALLOW_SCHEMES=file,data.")
    return url


def permit(url: str, ctx: ToolContext, session: BrowserSession) -> list[str]:
    """May the model open url? Raises PermissionDenied, or returns the notes its result must carry.

    Local addresses need a name (network.py). A URL carrying local data to a new host is shown to the user (and
    needs approval in confirm mode); in plan mode any navigation needs approval, except to a host the user named
    with no local data in the URL."""
    policy = session.policy
    policy.give(url)
    reason = policy.blocked(url)
    if reason:
        raise PermissionDenied(f"Refused to open {short(url, 100)}: {reason}")
    plan = ctx.settings.mode == "plan"
    pieces = policy.leak(url, any_host=plan)  # plan mode is read-only: local data goes nowhere unasked
    notes = [network.leak_note(url, pieces)] if pieces else []
    if notes:
        ctx.ui.notice(f"web_scan: opening {short(url, 200)} — {notes[0]}")
        session.leaked(url, pieces, shown=True)  # the browser's own check of this request says nothing more
    host, port = hosts.host_port(url)
    named = hosts.is_named(host, port, policy.named, policy.networks)
    if (plan and (pieces or not named)) or (ctx.settings.mode == "confirm" and pieces):
        why = "plan mode: opening pages needs approval" if plan else "its URL carries local data"
        _approve(url, why + (f"; {notes[0]}" if notes else ""), ctx)
    return notes


def _approve(url: str, why: str, ctx: ToolContext) -> None:
    if not ctx.interactive:
        raise PermissionDenied(
            f"Refused to open {short(url, 100)} ({why}; rule: web-navigation) and no human is at a terminal to "
            "approve it. Work from what you have, or give your plan as the final answer.")
    answer, _ = ctx.ui.approve(f"web_scan: open a page ({why})", url)
    if answer != "approve":
        raise PermissionDenied(f"The user did not approve opening {short(url, 100)} (rule: web-navigation). "
                               "Do without that page, or ask the user.")


def navigate(session: BrowserSession, tab_id: str, page: Any, url: str) -> tuple[Any, str]:
    """Open url in the tab; wait (bounded) for the document, a page that never yields included, then for load and
    a quiet network. Returns the tab's page (a replacement when it had to be) and a status such as 'HTTP 404'."""
    status = []
    stuck.scripts_on(session, tab_id)
    try:
        response = page.goto(url, wait_until="commit", timeout=NAV_TIMEOUT_MS)
    except Exception as e:
        reason = str(e).splitlines()[0]
        hint = " (a blocked local address: see the note)" if "BLOCKED_BY_CLIENT" in reason else ""
        raise ToolError(f"Could not open {url}: {reason}{hint}. Check the address, or try again.") from None
    if response is not None and response.status >= 400:
        status.append(f"HTTP {response.status}")
    page, loading = _wait_loaded(session, tab_id, page)
    status += loading
    network.empty_blocked_frames(session, page, session.note)
    tabs.settle(session, tab_id, page)
    return page, ", ".join(status)


def _wait_loaded(session: BrowserSession, tab_id: str, page: Any) -> tuple[Any, list[str]]:
    deadline = time.monotonic() + NAV_TIMEOUT_MS / 1000
    while True:
        try:
            page.wait_for_load_state("domcontentloaded", timeout=2_000)
            break
        except Exception:
            if time.monotonic() > deadline:
                return page, ["still loading"]
            if not stuck.answers(page, stuck.HANG_MS):  # a script that never yields holds the document back
                page = stuck.unstick(session, tab_id, page)
                return page, ["stopped while loading"]
    try:
        page.wait_for_load_state("load", timeout=LOAD_WAIT_MS)
    except Exception:
        return page, ["still loading"]
    return page, []


def tabs_line(rows: list[dict], limit: int | None = TABS_SHOWN) -> str:
    if not rows:
        return "Tabs: none open (web_scan with a url opens one)."
    shown = rows if limit is None or len(rows) <= limit else (
        [r for r in rows if r["current"]] + [r for r in reversed(rows) if not r["current"]][:limit - 1])
    shown = sorted(shown, key=lambda r: int(r["id"][1:]) if r["id"][1:].isdigit() else 0)
    text = " | ".join(f"{t['id']}{'*' if t['current'] else ''} {short(t['title'], 60)!r} {short(t['url'], 90)}"
                      for t in shown)
    more = f" (+{len(rows) - len(shown)} older: web_scan(tabs_only=true) lists all)" if len(shown) < len(rows) else ""
    return f"Tabs (* current): {text}{more}"


def dialog_lines(dialogs: list[dict]) -> list[str]:
    return [f"Dialog {d['type']} in {d['tab']}: {d['message']!r} → {d['answer']}" for d in dialogs]


def event_lines(events: dict, rows: list[dict]) -> list[str]:
    """The notes, the dialogs answered and the tabs pages opened since the last call."""
    lines = [*events["notes"], *dialog_lines(events["dialogs"])]
    new = events["new_tabs"]
    if new:
        by_id = {r["id"]: r for r in rows}
        listed = ", ".join(f"{t} {short(by_id[t]['url'], 70)}" for t in new[:5] if t in by_id)
        more = f" and {len(new) - 5} more" if len(new) > 5 else ""
        current = next((r["id"] for r in rows if r["current"]), "?")
        lines.append(f"New tab{'s' if len(new) > 1 else ''} opened by the page: {listed}{more}. The current tab "
                     f"stays {current}; pass tab=\"{new[0]}\" to use {'one' if len(new) > 1 else 'it'}.")
    return lines
