"""Finding, starting and closing the browser behind a BrowserSession (tools/browser.py).

The executable is GA_BROWSER, Playwright's own Chromium or a system one; GA_BROWSER_CDP connects to a running
Chrome instead. These helpers run on the session's thread (except kill_driver, the way out of a hung call).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ga.errors import ToolError

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

    from tools.browser import BrowserSession

log = logging.getLogger("tools.browser")  # the session's logger, as before these helpers moved here

LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]
"""Work as root in containers; the background-networking flags stop Chromium flooding a closed network."""
SYSTEM_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = ("No Chromium browser found. Install one with `apt-get install chromium` (Debian/Ubuntu) or "
                "`python -m playwright install chromium`, or set GA_BROWSER=/path/to/chrome, or "
                "GA_BROWSER_CDP=http://127.0.0.1:9222 to use your own running Chrome.")


def locate_browser(env: dict[str, str], playwright_path: str | None,
                   which: Callable[[str], str | None] = shutil.which) -> str | None:
    """The executable to launch: GA_BROWSER, Playwright's own Chromium, then a system browser."""
    if env.get("GA_BROWSER"):
        path = env["GA_BROWSER"]
        found = path if Path(path).is_file() else which(path)
        if not found:
            raise ToolError(f"GA_BROWSER={path} is not an executable. Fix it or unset it. {INSTALL_HINT}")
        return found
    if playwright_path and Path(playwright_path).is_file():
        return playwright_path
    return next((p for p in map(which, SYSTEM_BROWSERS) if p), None)


def start_driver(session: BrowserSession) -> None:
    """Start Playwright (its driver process) for the session, noting the driver's pid for kill_driver."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise ToolError("Playwright is not installed: run `pip install playwright`. " + INSTALL_HINT) from None
    manager = sync_playwright()
    session._pw = manager.start()
    try:  # to end a hung call from another thread (see BrowserSession._abandon)
        session._driver_pid = manager._client._transport._proc.pid
    except AttributeError:
        session._driver_pid = None


def kill_driver(pid: int | None) -> None:
    """Kill the Playwright driver: this ends a call stuck in it, and the browser it launched."""
    if pid:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def open_browser(session: BrowserSession) -> str:
    """Connect to GA_BROWSER_CDP or launch a browser, setting the session's context; says how, for the notice."""
    chromium = session._pw.chromium
    cdp = session.env.get("GA_BROWSER_CDP")
    if cdp:
        try:
            session._browser = chromium.connect_over_cdp(cdp, timeout=10_000)
        except Exception as e:
            raise ToolError(f"Could not connect to Chrome at GA_BROWSER_CDP={cdp}: {e}. Start Chrome with "
                            "--remote-debugging-port=9222, or unset GA_BROWSER_CDP.") from None
        browser = session._browser
        session.context = browser.contexts[0] if browser.contexts else browser.new_context()
        return f"connected to Chrome at {cdp}"
    executable = locate_browser(session.env, chromium.executable_path)
    if executable is None:
        raise ToolError(INSTALL_HINT)
    session.context = _launch(session, chromium, executable)
    return f"started {Path(executable).name} ({'headed' if session.settings.headed else 'headless'})"


def _launch(session: BrowserSession, chromium: Any, executable: str) -> BrowserContext:
    settings = session.settings
    options = {"executable_path": executable, "headless": not settings.headed, "args": LAUNCH_ARGS}
    if settings.browser_profile:
        profile = settings.home / "browser-profile"
        profile.mkdir(parents=True, exist_ok=True)
        try:
            return chromium.launch_persistent_context(str(profile), bypass_csp=True, **options)
        except Exception as e:  # most often: another run holds the profile lock
            log.info("persistent profile failed: %s", e)
            session._note(f"The browser profile {profile} could not be used (in use by another run?); "
                          "this run uses a fresh profile, so earlier logins are missing.")
    session._browser = chromium.launch(**options)
    return session._browser.new_context(bypass_csp=True)  # web_execute_js compiles scripts in the page


def quietly(fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception:
        log.debug("ignored", exc_info=True)


def shutdown(session: BrowserSession, quiet: bool = False) -> None:
    """Close what the session opened. A CDP-connected user browser is only disconnected, never closed."""
    if session.env.get("GA_BROWSER_CDP"):
        for page in session._opened:  # leave the user's own tabs alone
            quietly(page.close)
    elif session.context is not None:
        quietly(session.context.close)
    session._opened.clear()
    if session._browser is not None:
        quietly(session._browser.close)
    if session._pw is not None:
        quietly(session._pw.stop)
    session.context, session._browser, session._pw = None, None, None
    if not quiet:
        session.tabs.clear()
