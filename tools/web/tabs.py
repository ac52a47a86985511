"""What a tab's page tells the session: dialogs (answered by policy), crashes, closes, navigations, requests in
flight; and the tab list and a bounded wait for a quiet network. Run on the session thread."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from tools.web import Session, network, stuck

if TYPE_CHECKING:
    from playwright.sync_api import Page


log = logging.getLogger("tools.web.session")


def watch(session: Session, tab_id: str, page: Page) -> None:
    """Wire a new tab's events to the session, and give it its own DevTools session (stuck.py, network.py)."""
    session.inflight[tab_id] = 0
    page.set_default_timeout(15_000)
    page.on("dialog", lambda dialog: answer_dialog(session, tab_id, dialog))
    page.on("crash", lambda _: session.crashed.add(tab_id))
    page.on("close", lambda _: session.forget(tab_id, page))
    page.on("framenavigated", lambda frame: _navigated(session, tab_id, page, frame))
    page.on("request", lambda _: _count(session, tab_id, 1))
    page.on("requestfinished", lambda _: _count(session, tab_id, -1))
    page.on("requestfailed", lambda _: _count(session, tab_id, -1))
    try:
        cdp = session.cdp[tab_id] = page.context.new_cdp_session(page)
        session.target_ids[tab_id] = cdp.send("Target.getTargetInfo")["targetInfo"]["targetId"]
        network.guard_tab(session, page, cdp)
    except Exception:  # a page closed at once; a browser without DevTools sessions
        log.debug("no DevTools session for %s", tab_id, exc_info=True)


def _count(session: Session, tab_id: str, delta: int) -> None:
    session.inflight[tab_id] = max(0, session.inflight.get(tab_id, 0) + delta)


def _navigated(session: Session, tab_id: str, page: Page, frame: Any) -> None:
    if frame == page.main_frame and session.tabs.get(tab_id) is page:
        session.last_urls[tab_id] = frame.url
        session.policy.visit(frame.url)


def answer_dialog(session: Session, tab_id: str, dialog: Any) -> None:
    """Accept alerts, confirms and leave-page prompts (a prompt() gets its default value); in plan mode, where
    nothing may change, confirms and prompts are dismissed. Each one is told to the model and to the user."""
    record = {"tab": tab_id, "type": dialog.type, "message": dialog.message[:500]}
    try:
        if session.settings.mode == "plan" and dialog.type in ("confirm", "prompt"):
            dialog.dismiss()
            record["answer"] = "dismissed (plan mode: nothing is confirmed)"
        elif dialog.type == "prompt":
            dialog.accept(dialog.default_value)
            record["answer"] = f"accepted with {dialog.default_value!r}"
        else:
            dialog.accept()
            record["answer"] = "accepted"
    except Exception as e:  # the page may already be gone
        record["answer"] = f"could not answer ({e})"
    session.dialogs.append(record)
    session.notice(f"browser: {tab_id} {record['type']} {record['message'][:120]!r} → {record['answer']}")


def tab_list(session: Session) -> list[dict]:
    """The tabs with their titles, asked of the browser itself: a page that never yields (it may block every tab
    of its site, which share a renderer) cannot hold the list up."""
    if session.context is not None and not session.dead:
        session.prune()
    titles = _titles(session)
    rows = []
    for tab_id, page in session.tabs.items():
        title = "(crashed)" if tab_id in session.crashed else titles.get(session.target_ids.get(tab_id, ""))
        if title is None:
            try:
                title = stuck.evaluate(page, "() => document.title", timeout_ms=500)
            except Exception:
                title = "(not responding)"
        rows.append({"id": tab_id, "title": title, "url": page.url, "current": tab_id == session.current})
    return rows


def _titles(session: Session) -> dict[str, str]:
    for cdp in list(session.cdp.values()):
        try:
            infos = cdp.send("Target.getTargets")["targetInfos"]
        except Exception:  # that tab's session is gone: try another
            continue
        # a page without a title is listed by the browser under its URL: that is no title
        return {t["targetId"]: "" if t["url"].endswith(t["title"]) else t["title"] for t in infos}
    return {}


def settle(session: Session, tab_id: str, page: Page, *, quiet: float = 0.1, limit: float = 1.5) -> None:
    """Bounded wait until the tab has had no request in flight for `quiet` seconds."""
    deadline, calm_since = time.monotonic() + limit, None
    while time.monotonic() < deadline:
        if session.inflight.get(tab_id, 0) == 0:
            calm_since = calm_since or time.monotonic()
            if time.monotonic() - calm_since >= quiet:
                return
        else:
            calm_since = None
        page.wait_for_timeout(25)
