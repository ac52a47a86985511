"""Pages whose script never yields: found within seconds, stopped, and never reopened at the same URL.

A plain page.evaluate waits for ever on a page busy in a loop, so every in-page step of the web tools is either
preceded by a bounded probe or run through wait_for_function, whose timeout Playwright enforces outside the page.
A page that does not answer is stopped in steps: its running script is terminated (DevTools), then its scripts
are switched off, and last the tab is replaced by a blank one.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ga.errors import ToolError
from tools.web import Session

log = logging.getLogger("tools.web.session")

HANG_MS = 8_000
"""A page that does not answer a trivial evaluation for this long is taken as not yielding (a busy page on a
loaded machine may need a few seconds)."""
STEP_MS = 1_500


class PageBusy(ToolError):
    """The page did not answer in time."""


def _is_timeout(error: Exception) -> bool:
    return type(error).__name__ == "TimeoutError" or "Timeout" in str(error).split("\n")[0]


def answers(page: Any, ms: int) -> bool:
    """Does the page run a trivial script within ms? Other failures (a navigation, a closed page) are not hangs."""
    try:
        page.wait_for_function("() => true", timeout=ms)
        return True
    except Exception as e:
        return not _is_timeout(e)


def evaluate(page: Any, source: str, arg: Any = None, timeout_ms: int | None = None) -> Any:
    """page.evaluate(source, arg) with a timeout that holds even when the page never yields (PageBusy)."""
    timeout_ms = timeout_ms or HANG_MS
    try:
        handle = page.wait_for_function(f"(arg) => JSON.stringify([({source})(arg)])", arg=arg, polling=100,
                                        timeout=timeout_ms)
    except Exception as e:
        if _is_timeout(e):
            raise PageBusy(f"The page did not answer within {timeout_ms / 1000:g}s.") from None
        if "EvalError" in str(e) or "unsafe-eval" in str(e):  # a strict CSP in a browser ga did not launch
            return page.evaluate(source, arg)
        raise
    text = handle.json_value()
    return json.loads(text)[0] if isinstance(text, str) else None


def responsive(session: Session, tab_id: str, page: Any) -> Any:
    """The tab's page, made to answer: a page that does not is stopped (see unstick)."""
    if answers(page, HANG_MS):
        return page
    return unstick(session, tab_id, page)


def unstick(session: Session, tab_id: str, page: Any) -> Any:
    """Stop a page that does not answer; returns the page to use (the same one, or a blank replacement)."""
    cdp = session.cdp.get(tab_id)
    stop = ("Runtime.terminateExecution", {})
    if cdp is not None and _send(cdp, [stop]) and answers(page, STEP_MS):
        session.note(f"Tab {tab_id} did not answer (a script that never yields): its running script was stopped; "
                     "the page stays as it is.")
        return page
    # its timers start it again: switch its scripts off, then stop the one running
    off = ("Emulation.setScriptExecutionDisabled", {"value": True})
    if cdp is not None and _send(cdp, [off, stop]) and answers(page, STEP_MS):
        session.scripts_off.add(tab_id)
        session.note(f"Tab {tab_id} did not answer (a script that never yields): its scripts kept it busy, so they "
                     "are switched off in this tab (the page is read as it stands, and will not react to clicks "
                     "that need its scripts).")
        return page
    url = session.last_urls.get(tab_id) or "its page"
    session.hung_urls.add(url)
    page = session.replace(tab_id, "about:blank")
    session.note(f"Tab {tab_id} did not answer (a script that never yields) and could not be stopped, so it was "
                 f"replaced by a blank tab; {url} was not reopened. Avoid that page, or read it with code_run.")
    return page


def _send(cdp: Any, commands: list[tuple[str, dict]]) -> bool:
    try:
        for method, params in commands:
            cdp.send(method, params)
        return True
    except Exception:
        log.debug("DevTools command failed", exc_info=True)
        return False


def scripts_on(session: Session, tab_id: str) -> None:
    """Before the model opens another page in a tab whose scripts were switched off: on again (the switch is the
    tab's, not the page's)."""
    if tab_id in session.scripts_off:
        session.scripts_off.discard(tab_id)
        try:
            session.cdp[tab_id].send("Emulation.setScriptExecutionDisabled", {"value": False})
        except Exception:
            log.debug("switching scripts on failed", exc_info=True)
