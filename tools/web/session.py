"""The browser session shared by the web tools: one Chromium per run, driven by Playwright on one thread.

Playwright's sync API only works on the thread that started it, while the dispatcher may call tools from
worker threads; so every Playwright call is a job run on the session's own single thread (`session.call`).
Tabs get short stable ids (t1, t2, ...). A crashed tab or browser is reopened and the model told.
Finding, launching and closing the browser itself is in launch.py.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, TypeVar

from ga.errors import ToolError
from tools.web.launch import Launched, kill_driver, open_browser, quietly, shutdown, start_driver

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

    from ga.config import Settings
    from ga.dispatch import ToolContext

log = logging.getLogger(__name__)
T = TypeVar("T")

CALL_TIMEOUT = 120.0
_sessions_lock = threading.Lock()


def get_session(ctx: ToolContext) -> BrowserSession:
    """The run's browser session, created on first use and closed with the run."""
    with _sessions_lock:
        session = ctx.resources.get("browser")
        if session is None:
            session = ctx.resources["browser"] = BrowserSession(ctx.settings, notice=ctx.ui.notice)
        return session


class BrowserSession:
    """Owns Playwright, the browser context and the tabs. Public methods other than call/close run on its thread."""

    def __init__(self, settings: Settings, notice: Callable[[str], None] | None = None,
                 env: dict[str, str] | None = None):
        self.settings = settings
        self.env = dict(os.environ if env is None else env)
        self.notice = notice or (lambda text: None)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ga-browser")
        self._thread: threading.Thread | None = None
        self._stale: Any = None  # the job of an abandoned (hung) session thread
        self._why = "had crashed"
        self.launched = Launched()
        self.tabs: dict[str, Page] = {}
        self.last_urls: dict[str, str] = {}
        self.current: str | None = None
        self.dialogs: list[dict] = []
        self.notes: list[str] = []
        self.inflight: dict[str, int] = {}
        self.started_in = 0.0
        self._crashed: set[str] = set()
        self._reserved_id: str | None = None
        self._gone: list[str] = []
        self._next_tab = 1
        self._dead = False
        self._closed = False

    # -- threading ------------------------------------------------------------------------------------------
    def call(self, fn: Callable[[BrowserSession], T], timeout: float = CALL_TIMEOUT) -> T:
        """Run fn(session) on the session thread, from any thread; its exceptions propagate."""
        if self._closed:
            raise ToolError("The browser session is closed (the run has ended).")
        if threading.current_thread() is self._thread:
            return fn(self)
        future = self._executor.submit(self._job, fn)
        try:
            return future.result(timeout)
        except FutureTimeout:
            self._abandon(future)
            raise ToolError(f"The browser did not answer within {timeout:.0f}s (a page may be hung); it will be "
                            "restarted on the next web call, with the tabs reopened at their last urls.") from None

    def _abandon(self, future: Any) -> None:
        """The session thread is stuck in a Playwright call: kill the driver (which ends that call and the
        browser), and give later jobs a fresh thread, so they do not queue behind the stuck one."""
        stuck, self._executor = self._executor, ThreadPoolExecutor(max_workers=1, thread_name_prefix="ga-browser")
        self._stale, self._thread, self._dead, self._why = future, None, True, "stopped answering"
        pid, self.launched.driver_pid = self.launched.driver_pid, None
        kill_driver(pid)
        stuck.shutdown(wait=False)

    def _job(self, fn: Callable[[BrowserSession], T]) -> T:
        self._thread = threading.current_thread()
        return fn(self)

    def close(self) -> None:
        if self._closed:
            return
        try:
            if self.launched.playwright is not None and self._stale is None:  # an abandoned one was killed already
                self._executor.submit(self._shutdown).result(30)
                self.tabs.clear()
        except Exception:
            log.warning("closing the browser failed", exc_info=True)
        self._closed = True
        self._executor.shutdown(wait=False)

    @property
    def context(self) -> BrowserContext | None:
        return self.launched.context

    # -- browser lifecycle (session thread) ------------------------------------------------------------------
    def _shutdown(self) -> None:
        shutdown(self.launched, cdp=bool(self.env.get("GA_BROWSER_CDP")))

    def ensure(self) -> None:
        """Start the browser, or restart it after a crash (reopening the tabs at their last urls)."""
        if self.context is not None and not self._dead:
            self._prune()
            return
        self._gone.clear()
        restarting = self._dead
        reopen = dict(self.last_urls) if restarting else {}
        if self._stale is not None:  # let the abandoned thread fail out; its Playwright objects are not ours
            try:
                self._stale.exception(10)
            except Exception:
                pass
            self._stale, self.launched = None, Launched()
            self.tabs.clear()
        self._shutdown()
        self.tabs.clear()
        self._start()
        if restarting:
            for page in list(self.tabs.values()):
                quietly(page.close)
            for tab_id, url in reopen.items():
                self._open(url, tab_id)
            self._note(f"The browser {self._why} and was restarted; tabs reopened: {', '.join(reopen) or 'none'}. "
                       "Page state (forms, scroll) was lost.")
            self._why = "had crashed"

    def _prune(self) -> None:
        """Forget the tabs that were closed (not those of a browser that went down: those are reopened)."""
        for tab_id in self._gone:
            self.tabs.pop(tab_id, None)
            self.last_urls.pop(tab_id, None)
        if self.current not in self.tabs:
            self.current = next(reversed(self.tabs), None)
        self._gone.clear()

    def _start(self) -> None:
        started = time.perf_counter()
        self.launched = start_driver()
        open_browser(self.launched, self.settings, self.env, self._note)
        self.context.on("page", self._adopt)
        self.context.on("close", lambda _: self._mark_dead())
        for page in self.context.pages:
            self._adopt(page, make_current=False)
        self._dead = False
        self.started_in = time.perf_counter() - started
        self.notice(f"browser: {self.launched.how} in {self.started_in:.1f}s")

    def _mark_dead(self) -> None:
        if not self._closed:
            self._dead = True

    def _note(self, text: str) -> None:
        self.notes.append(text)
        self.notice(f"browser: {text}")

    def take_dialogs(self) -> list[dict]:
        """The dialogs answered since the last report."""
        dialogs, self.dialogs = self.dialogs, []
        return dialogs

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes

    # -- tabs (session thread) ---------------------------------------------------------------------------------
    def _adopt(self, page: Page, make_current: bool = True) -> str:
        known = next((t for t, p in self.tabs.items() if p is page), None)
        if known:
            return known
        tab_id, self._reserved_id = self._reserved_id, None
        if tab_id is None:
            tab_id = f"t{self._next_tab}"
            self._next_tab += 1
        self.tabs[tab_id] = page
        self.inflight[tab_id] = 0
        page.set_default_timeout(15_000)
        page.on("dialog", lambda dialog: self._answer(tab_id, dialog))
        page.on("crash", lambda _: self._crashed.add(tab_id))
        page.on("close", lambda _: self._forget(tab_id, page))
        page.on("framenavigated", lambda frame: self._remember(tab_id, page, frame))
        page.on("request", lambda _: self._count(tab_id, 1))
        page.on("requestfinished", lambda _: self._count(tab_id, -1))
        page.on("requestfailed", lambda _: self._count(tab_id, -1))
        if make_current:
            self.current = tab_id
        return tab_id

    def _count(self, tab_id: str, delta: int) -> None:
        self.inflight[tab_id] = max(0, self.inflight.get(tab_id, 0) + delta)

    def _remember(self, tab_id: str, page: Page, frame: Any) -> None:
        if frame == page.main_frame and self.tabs.get(tab_id) is page:
            self.last_urls[tab_id] = frame.url

    def _forget(self, tab_id: str, page: Page) -> None:
        # Applied later (see ensure): if the whole browser went down, the tab is reopened instead.
        if self.tabs.get(tab_id) is page:
            self._gone.append(tab_id)

    def _answer(self, tab_id: str, dialog: Any) -> None:
        """Policy: accept alerts, confirms and leave-page prompts; a prompt() gets its default value."""
        record = {"tab": tab_id, "type": dialog.type, "message": dialog.message[:500]}
        try:
            if dialog.type == "prompt":
                dialog.accept(dialog.default_value)
                record["answer"] = f"accepted with {dialog.default_value!r}"
            else:
                dialog.accept()
                record["answer"] = "accepted"
        except Exception as e:  # the page may already be gone
            record["answer"] = f"could not answer ({e})"
        self.dialogs.append(record)

    def _open(self, url: str, tab_id: str | None = None) -> str:
        self._reserved_id = tab_id
        page = self.context.new_page()
        self.launched.opened.append(page)
        tab_id = self._adopt(page)  # the context's page event usually adopted it already
        self.current = tab_id
        if url and url != "about:blank":
            try:
                page.goto(url, wait_until="domcontentloaded")
            except Exception as e:
                self._note(f"Reopening {url} in {tab_id} failed: {e}")
        return tab_id

    def page(self, tab: str | None = None, *, create: bool = True) -> tuple[str, Page]:
        """The page of `tab` (default: the current tab), reopening a crashed one."""
        self.ensure()
        tab_id = tab or self.current
        if tab_id is None or (tab is None and tab_id not in self.tabs):
            if not create:
                raise ToolError("No tab is open. Open a page with web_scan(url=...).")
            return self._open("about:blank"), self.tabs[self.current]
        if tab_id not in self.tabs:
            known = ", ".join(self.tabs) or "none"
            raise ToolError(f"No tab {tab_id!r} (open tabs: {known}). Use web_scan(tabs_only=true) to list them.")
        page = self.tabs[tab_id]
        if tab_id in self._crashed or page.is_closed():
            url = self.last_urls.get(tab_id, "about:blank")
            self._crashed.discard(tab_id)
            self.tabs.pop(tab_id)
            quietly(page.close)
            self._open(url, tab_id)
            self._note(f"Tab {tab_id} had crashed and was reopened at {url}; its page state was lost.")
            page = self.tabs[tab_id]
        self.current = tab_id
        return tab_id, page

    def reopen(self, tab_id: str) -> Page:
        """Replace the tab's page by a fresh one at its last url (for a page that stopped answering)."""
        page = self.tabs.pop(tab_id)
        url = self.last_urls.get(tab_id) or page.url
        quietly(lambda: page.close(run_before_unload=False))
        self._open(url, tab_id)
        return self.tabs[tab_id]

    def on_tab(self, tab: str | None, fn: Callable[[str, Page], T]) -> T:
        """fn(tab_id, page); if the page turns out to have crashed, reopen it and try once more."""
        for attempt in range(2):
            tab_id, page = self.page(tab)
            try:
                return fn(tab_id, page)
            except Exception as e:
                message = str(e).lower()
                if attempt or ("crash" not in message and "has been closed" not in message):
                    raise
                if "crash" in message:
                    self._crashed.add(tab_id)
                elif not self.context.pages:
                    self._dead = True
        raise AssertionError("unreachable")

    def tab_list(self) -> list[dict]:
        if self.context is not None and not self._dead:
            self._prune()
        rows = []
        for tab_id, page in self.tabs.items():
            title = "(crashed)"
            if tab_id not in self._crashed:
                try:
                    title = page.title()
                except Exception:
                    title = "(not responding)"
            rows.append({"id": tab_id, "title": title, "url": page.url, "current": tab_id == self.current})
        return rows

    def settle(self, tab_id: str, page: Page, *, quiet: float = 0.1, limit: float = 1.5) -> None:
        """Bounded wait until the tab has had no request in flight for `quiet` seconds."""
        deadline, calm_since = time.monotonic() + limit, None
        while time.monotonic() < deadline:
            if self.inflight.get(tab_id, 0) == 0:
                calm_since = calm_since or time.monotonic()
                if time.monotonic() - calm_since >= quiet:
                    return
            else:
                calm_since = None
            page.wait_for_timeout(25)

