"""The session's tabs: short stable ids (t1, t2, ...), which tab is current, a crashed one reopened; what a tab's page
tells the session (dialogs answered by policy: a page's confirm() and prompt() dismissed; crashes, closes,
navigations, requests in flight); the tab list and a bounded wait for a quiet network. Run on the session thread."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ga.errors import ToolError
from tools.web import Session, network, stuck
from tools.web.launch import quietly

if TYPE_CHECKING:
    from playwright.sync_api import Page


log = logging.getLogger("tools.web.session")
T = TypeVar("T")


def watch(session: Session, tab_id: str, page: Page) -> None:
    """Wire a new tab's events to the session, and give it its own DevTools session (stuck.py, network.py). Setting
    that up takes round trips, on the greenlet Playwright gives each event listener: TabKeeping.armed waits for it."""
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
        session.arming.add(page)
        cdp = session.cdp[tab_id] = page.context.new_cdp_session(page)
        session.target_ids[tab_id] = cdp.send("Target.getTargetInfo")["targetInfo"]["targetId"]
        network.guard_tab(session, page, cdp)
    except Exception:  # a page closed at once; a browser without DevTools sessions
        log.debug("no DevTools session for %s", tab_id, exc_info=True)
    finally:
        session.arming.discard(page)


def _count(session: Session, tab_id: str, delta: int) -> None:
    session.inflight[tab_id] = max(0, session.inflight.get(tab_id, 0) + delta)


def _navigated(session: Session, tab_id: str, page: Page, frame: Any) -> None:
    if frame == page.main_frame and session.tabs.get(tab_id) is page:
        session.last_urls[tab_id] = frame.url
        session.policy.visit(frame.url)


DISMISSED = {
    "confirm": "dismissed (a page's confirm() is never accepted for you: when the task means it, set "
               "`window.confirm = () => true` in web_execute_js, then act again)",
    "prompt": "dismissed (a page's prompt() is never answered for you: when the task means it, set "
              "`window.prompt = () => 'ANSWER'` in web_execute_js, then act again)",
}
"""How a page's own questions are answered: no, and the model is told how to say yes on purpose."""


def answer_dialog(session: Session, tab_id: str, dialog: Any) -> None:
    """Accept alerts and leave-page prompts (the model's own navigation); dismiss a page's confirm() and prompt(): a
    page asking "Delete your account?" is answered no unless the model's script says yes itself, in plain sight (it
    replaces window.confirm before acting). Each one is told to the model and to the user."""
    record = {"tab": tab_id, "type": dialog.type, "message": dialog.message[:500]}
    try:
        if session.settings.mode == "plan" and dialog.type in DISMISSED:
            dialog.dismiss()
            record["answer"] = "dismissed (plan mode: nothing is confirmed)"
        elif dialog.type in DISMISSED:
            dialog.dismiss()
            record["answer"] = DISMISSED[dialog.type]
        else:
            dialog.accept()
            record["answer"] = "accepted"
    except Exception as e:  # the page may already be gone
        record["answer"] = f"could not answer ({e})"
    session.dialogs.append(record)
    answer = record["answer"].split(" (", 1)[0]  # the terminal gets the answer; the model, also why and what else
    session.notice(f"browser: {tab_id} {record['type']} {record['message'][:120]!r} → {answer}")


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


class TabKeeping:
    """The tab half of BrowserSession (session.py), kept apart from the browser's lifecycle and threading: adopting
    pages, opening and replacing tabs, choosing the current one. Its state is set in BrowserSession.__init__."""

    def _adopt(self, page: Page, popup: bool = True) -> str:
        known = next((t for t, p in self.tabs.items() if p is page), None)
        if known:
            return known
        tab_id, self._reserved_id = self._reserved_id, None
        own, self._own_next = self._own_next, False
        if tab_id is None:
            tab_id = f"t{self._next_tab}"
            self._next_tab += 1
        self.tabs[tab_id] = page
        if popup and not own:  # told with the tab list it is in, not once its DevTools session is set up
            self.new_tabs.append(tab_id)
        watch(self, tab_id, page)
        return tab_id

    def forget(self, tab_id: str, page: Page) -> None:
        """A tab closed; applied later (see ensure): if the whole browser went down, the tab is reopened instead."""
        if self.tabs.get(tab_id) is page:
            self.gone.append(tab_id)

    def _open(self, url: str, tab_id: str | None = None) -> str:
        self._reserved_id, self._own_next = tab_id, True
        page = self.context.new_page()
        self.launched.opened.append(page)
        tab_id = self._adopt(page)  # the context's page event usually adopted it already
        self.current = tab_id
        self.armed(tab_id)
        if url and url != "about:blank":
            try:
                page.goto(url, wait_until="domcontentloaded")
            except Exception as e:
                self.note(f"Reopening {url} in {tab_id} failed: {e}")
        return tab_id

    def armed(self, tab_id: str) -> None:
        """Wait until the tab's network guard is up (see watch): nothing may load in it before."""
        while (page := self.tabs[tab_id]) in self.arming:
            page.wait_for_timeout(10)

    def page(self, tab: str | None = None, *, opening: bool = False) -> tuple[str, Page]:
        """The page of `tab` (default: the current tab), reopening a crashed one; naming a tab makes it current.
        A tab that is not open, named for a page to open (`opening`), is the current tab if blank, else a new one."""
        self.ensure()
        tab_id = tab or self.current
        if tab_id is None or (tab_id not in self.tabs and (tab is None or not self.tabs)):  # no current tab, or
            return self._open("about:blank"), self.tabs[self.current]  # none open yet: the first is the one named
        if tab_id not in self.tabs and opening:  # a small model names "t2" beside the browser's first, blank tab
            blank = self.current in self.tabs and self.tabs[self.current].url == "about:blank"
            used = self.current if blank else self._open("about:blank")
            self.note(f"No tab {tab_id!r} was open, so the page opened in {'blank tab' if blank else 'new tab'} "
                      f"{used}.")
            return used, self.tabs[used]
        if tab_id not in self.tabs:
            known = ", ".join(self.tabs) or "none"
            raise ToolError(f"No tab {tab_id!r} (open tabs: {known}). Use web_scan(tabs_only=true) to list them.")
        page = self.tabs[tab_id]
        if tab_id in self.crashed or page.is_closed():
            url = self.last_urls.get(tab_id, "about:blank")
            self.crashed.discard(tab_id)
            page = self.replace(tab_id, url)
            self.note(f"Tab {tab_id} had crashed and was reopened at {url}; its page state was lost.")
        self.current = tab_id
        return tab_id, page

    def replace(self, tab_id: str, url: str) -> Page:
        """A fresh page in the tab's place, at url."""
        page = self.tabs.pop(tab_id)
        self.cdp.pop(tab_id, None)
        quietly(lambda: page.close(run_before_unload=False))
        self._open(url, tab_id)
        return self.tabs[tab_id]

    def on_tab(self, tab: str | None, fn: Callable[[str, Page], T], *, opening: bool = False) -> T:
        """fn(tab_id, page) on a page that answers (`opening`: fn opens a page, see page()); if the page turns out
        to have crashed, reopen it and try once more."""
        for attempt in range(2):
            tab_id, page = self.page(tab, opening=opening)
            self._working = tab_id
            try:
                self.armed(tab_id)
                page = stuck.responsive(self, tab_id, page)
                network.empty_blocked_frames(self, page, self.note)
                return fn(tab_id, page)
            except Exception as e:
                message = str(e).lower()
                if attempt or ("crash" not in message and "has been closed" not in message):
                    raise
                if "crash" in message:
                    self.crashed.add(tab_id)
                elif not self.context.pages:
                    self.dead = True
            finally:
                self._working = None
        raise AssertionError("unreachable")
