"""Finding, starting and closing the browser behind a BrowserSession (tools/web/session.py).

The executable is GA_BROWSER, Playwright's own Chromium or a system one; GA_BROWSER_CDP connects to a running
Chrome instead. These helpers take what they need as arguments and return what they made; they run on the
session's thread (except kill_driver, the way out of a hung call).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ga.errors import ToolError

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

log = logging.getLogger("tools.web.session")  # the session's logger: these helpers are its lifecycle

LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]
"""Work as root in containers; the background-networking flags stop Chromium flooding a closed network."""
SOCKET_PATH_MAX = 107
"""A Unix socket's path limit (sun_path, less its NUL)."""
SINGLETON_TAIL = len("/org.chromium.Chromium.XXXXXX/SingletonSocket")
"""Where Chromium puts its singleton socket under TMPDIR; a deeper TMPDIR makes it abort at start."""
SHORT_TMP = ("/tmp", "/var/tmp", "/dev/shm")
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


@dataclass(kw_only=True)
class Launched:
    """What a launch made: Playwright, the browser (None for a persistent profile) and the context."""

    playwright: Any = None
    driver_pid: int | None = None
    """The Playwright driver's pid, for kill_driver."""
    browser: Any = None
    context: BrowserContext | None = None
    how: str = ""
    """How the browser came up, for the notice."""
    opened: list = field(default_factory=list)
    """Pages ga opened itself: the only ones closed in a CDP-connected user browser."""


def start_driver() -> Launched:
    """Start Playwright (its driver process), noting the driver's pid for kill_driver."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise ToolError("Playwright is not installed: run `pip install playwright`. " + INSTALL_HINT) from None
    manager = sync_playwright()
    launched = Launched(playwright=manager.start())
    try:  # to end a hung call from another thread (see BrowserSession._abandon)
        launched.driver_pid = manager._client._transport._proc.pid
    except AttributeError:
        launched.driver_pid = None
    return launched


def kill_driver(pid: int | None) -> None:
    """Kill the Playwright driver: this ends a call stuck in it, and the browser it launched."""
    if pid:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def open_browser(launched: Launched, env: dict[str, str], note: Callable[[str], None], *, headed: bool,
                 profile: Path | None) -> None:
    """Connect to GA_BROWSER_CDP or launch a browser (`profile`: the persistent profile's folder, None for a fresh
    one), filling in `launched` (browser, context, how)."""
    chromium = launched.playwright.chromium
    cdp = env.get("GA_BROWSER_CDP")
    if cdp:
        try:
            launched.browser = chromium.connect_over_cdp(cdp, timeout=10_000)
        except Exception as e:
            raise ToolError(f"Could not connect to Chrome at GA_BROWSER_CDP={cdp}: {e}. Start Chrome with "
                            "--remote-debugging-port=9222, or unset GA_BROWSER_CDP.") from None
        browser = launched.browser
        launched.context = browser.contexts[0] if browser.contexts else browser.new_context()
        launched.how = f"connected to Chrome at {cdp}"
        return
    executable = locate_browser(env, chromium.executable_path)
    if executable is None:
        raise ToolError(INSTALL_HINT)
    _launch(launched, chromium, executable, note, headed=headed, profile=profile)
    launched.how = f"started {Path(executable).name} ({'headed' if headed else 'headless'})"


def browser_env() -> dict[str, str] | None:
    """The browser's environment when TMPDIR is too deep for Chromium's singleton socket (it aborts with "Socket
    path too long": a trial folder's tmp, macOS's /var/folders/...): TMPDIR set to a short one. None: inherit."""
    tmp = os.environ.get("TMPDIR", "")
    if len(os.fsencode(tmp.rstrip("/"))) + SINGLETON_TAIL <= SOCKET_PATH_MAX:
        return None
    short = next((d for d in SHORT_TMP if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK)), None)
    return {**os.environ, "TMPDIR": short} if short else None


def _launch(launched: Launched, chromium: Any, executable: str, note: Callable[[str], None], *, headed: bool,
            profile: Path | None) -> None:
    options = {"executable_path": executable, "headless": not headed, "args": LAUNCH_ARGS}
    if env := browser_env():
        options["env"] = env
    if profile is not None:
        profile.mkdir(mode=0o700, parents=True, exist_ok=True)
        profile.chmod(0o700)  # cookies and logins: the user's only
        try:
            launched.context = chromium.launch_persistent_context(str(profile), bypass_csp=True,
                                                                  service_workers="block", **options)
            return
        except Exception as e:  # most often: another run holds the profile lock
            log.info("persistent profile failed: %s", e)
            note(f"The browser profile {profile} could not be used (in use by another run?); "
                 "this run uses a fresh profile, so earlier logins are missing.")
    launched.browser = chromium.launch(**options)
    # web_execute_js compiles scripts in the page; service workers would fetch past the network rules (network.py)
    launched.context = launched.browser.new_context(bypass_csp=True, service_workers="block")


def quietly(fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception:
        log.debug("ignored", exc_info=True)


def shutdown(launched: Launched, cdp: bool) -> None:
    """Close what the launch opened. A CDP-connected user browser is only disconnected, never closed."""
    if cdp:
        for page in launched.opened:  # leave the user's own tabs alone
            quietly(page.close)
    elif launched.context is not None:
        quietly(launched.context.close)
    launched.opened.clear()
    if launched.browser is not None:
        quietly(launched.browser.close)
    if launched.playwright is not None:
        quietly(launched.playwright.stop)
    launched.context, launched.browser, launched.playwright = None, None, None
