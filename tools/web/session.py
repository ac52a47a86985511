"""The browser session shared by the web tools: one Chromium per run, driven by Playwright on one thread.

Playwright's sync API only works on the thread that started it, while the dispatcher may call tools from
worker threads; so every Playwright call is a job run on the session's own single thread (`session.call`).
Tabs get short stable ids (t1, t2, ...); the current tab changes only when the model opens or names a tab, never
because a page opened a popup. A crashed tab or browser is reopened and the model told; a tab whose page never
yields is not (stuck.py). Finding, launching and closing the browser is in launch.py; the network rules, which
need the run's words, in network.py.
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
from tools.web import network, tabs
from tools.web.launch import Launched, kill_driver, open_browser, quietly, shutdown, start_driver
from tools.web.network import NetPolicy

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

    from ga.tooling.spec import ToolContext

log = logging.getLogger(__name__)
T = TypeVar("T")

CALL_TIMEOUT = 120.0
_sessions_lock = threading.Lock()


def get_session(ctx: ToolContext) -> BrowserSession:
    """The run's browser session, created on first use and closed with the run."""
    with _sessions_lock:
        session = ctx.resources.get("browser")
        if session is None:
            env = dict(os.environ)
            policy = NetPolicy.for_run(env, ctx.run_dir, ctx.state)
            session = ctx.resources["browser"] = BrowserSession(ctx, notice=ctx.ui.notice, env=env, policy=policy)
        return session


class BrowserSession(tabs.TabKeeping):
    """Owns Playwright, the browser context and the tabs (their methods: tabs.TabKeeping). Public methods other than
    call/close run on its thread."""

    def __init__(self, ctx: ToolContext, notice: Callable[[str], None] | None = None,
                 env: dict[str, str] | None = None, policy: NetPolicy | None = None):
        self.settings = settings = ctx.settings
        self.env = dict(os.environ if env is None else env)
        self.notice = notice or (lambda text: None)
        # without a run (a program driving the tools), the URLs it gives are its own choice: see NetPolicy.give
        self.policy = policy or NetPolicy.for_run(self.env, settings.home / "no-run", {})
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
        self.new_tabs: list[str] = []
        """Tabs opened by pages (popups, target=_blank) since the last report."""
        self.cdp: dict[str, Any] = {}
        """Each tab's own DevTools session: stops scripts that never yield, intercepts local addresses."""
        self.arming: set[Page] = set()  # pages whose DevTools session is being set up (tabs.watch)
        self.target_ids: dict[str, str] = {}
        self.scripts_off: set[str] = set()
        self.hung_urls: set[str] = set()
        """Pages that never yielded: not reopened after a restart."""
        self._reported: set[str] = set()
        self._working: str | None = None
        self._hung: str | None = None
        self._own_next = False
        self.inflight: dict[str, int] = {}
        self.started_in = 0.0
        self.crashed: set[str] = set()
        self._reserved_id: str | None = None
        self.gone: list[str] = []
        self._next_tab = 1
        self.dead = False
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
                            "restarted on the next web call, with the other tabs reopened at their last urls."
                            ) from None

    def _abandon(self, future: Any) -> None:
        """The session thread is stuck in a Playwright call: kill the driver (which ends that call and the
        browser), and give later jobs a fresh thread, so they do not queue behind the stuck one."""
        jammed, self._executor = self._executor, ThreadPoolExecutor(max_workers=1, thread_name_prefix="ga-browser")
        self._stale, self._thread, self.dead, self._why = future, None, True, "stopped answering"
        self._hung = self._working
        pid, self.launched.driver_pid = self.launched.driver_pid, None
        kill_driver(pid)
        jammed.shutdown(wait=False)

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
        """Start the browser, or restart it after a crash (reopening the tabs at their last urls, except a page
        that never yielded)."""
        if self.context is not None and not self.dead:
            self.prune()
            return
        if threading.current_thread() is not self._thread:  # an abandoned job (see _abandon) must not retry
            raise ToolError("This browser call was abandoned; the next one restarts the browser.")
        self.gone.clear()
        restarting = self.dead
        reopen, current = (dict(self.last_urls) if restarting else {}), self.current
        if self._hung in reopen:
            self.hung_urls.add(reopen[self._hung])
        if self._stale is not None:  # let the abandoned thread fail out; its Playwright objects are not ours
            try:
                self._stale.exception(10)
            except Exception:
                pass
            self._stale, self.launched = None, Launched()
            self.tabs.clear()
        self._shutdown()
        self.tabs.clear()
        self.cdp.clear()
        self._start()
        if restarting:
            for page in list(self.tabs.values()):
                quietly(page.close)
            skipped = [t for t, url in reopen.items() if url in self.hung_urls]
            for tab_id, url in reopen.items():
                self._open("about:blank" if tab_id in skipped else url, tab_id)
            self.current = current if current in self.tabs else self.current
            left = "".join(f"; {t} is blank: {reopen[t]} never yielded and was not reopened" for t in skipped)
            self.note(f"The browser {self._why} and was restarted; tabs reopened: {', '.join(reopen) or 'none'}"
                      f"{left}. Page state (forms, scroll) was lost.")
            self._why, self._hung = "had crashed", None

    def prune(self) -> None:
        """Forget the tabs that were closed (not those of a browser that went down: those are reopened)."""
        for tab_id in self.gone:
            self.tabs.pop(tab_id, None)
            self.last_urls.pop(tab_id, None)
            self.cdp.pop(tab_id, None)
        if self.current not in self.tabs:
            self.current = next(reversed(self.tabs), None)
        self.gone.clear()

    def _start(self) -> None:
        started = time.perf_counter()
        self.launched = start_driver()
        s = self.settings
        open_browser(self.launched, self.env, self.note, headed=s.headed,
                     profile=s.home / "browser-profile" if s.browser_profile else None)
        network.install(self)
        self.context.on("page", self._adopt)
        self.context.on("close", lambda _: self._mark_dead())
        for page in self.context.pages:
            self._adopt(page, popup=False)
        if not self.env.get("GA_BROWSER_CDP"):  # the blank tab a fresh browser starts with is the first tab ga uses
            self.current = next((t for t, p in self.tabs.items() if p.url == "about:blank"), None)
        self.dead = False
        self.started_in = time.perf_counter() - started
        self.notice(f"browser: {self.launched.how} in {self.started_in:.1f}s")

    def _mark_dead(self) -> None:
        if not self._closed:
            self.dead = True

    def note(self, text: str) -> None:
        """Tell the model (in the next web result) and the user (on the terminal)."""
        self.notes.append(text)
        self.notice(f"browser: {text}")

    def blocked(self, url: str, reason: str) -> None:
        """A request the network rules refused: said once per host in each report."""
        key = "blocked " + reason.split(" ", 1)[0]
        if key not in self._reported:
            self._reported.add(key)
            self.note(f"Blocked a request to {url[:100]}: {reason}")

    def leaked(self, url: str, pieces: list[str], *, shown: bool = False) -> None:
        """A URL carrying local data: told once per report (shown: web_scan has told it already)."""
        key = f"leak {url.split('/')[2] if '://' in url else url} {pieces}"
        if key not in self._reported:
            self._reported.add(key)
            if not shown:
                self.note(network.leak_note(url, pieces))

    def take_events(self) -> dict:
        """What happened since the last report: notes, dialogs answered, tabs opened by pages."""
        events = {"notes": self.notes, "dialogs": self.dialogs,
                  "new_tabs": [t for t in self.new_tabs if t in self.tabs]}
        self.notes, self.dialogs, self.new_tabs = [], [], []
        self._reported.clear()
        return events
