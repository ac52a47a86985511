"""What both web tools do with a tab: check and open a URL, wait for it to load, and describe tabs and dialogs."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from ga.errors import PermissionDenied, ToolError
from tools.web.scan_budget import short

if TYPE_CHECKING:
    from tools.web.session import BrowserSession

NAV_TIMEOUT_MS = 30_000
LOAD_WAIT_MS = 5_000
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


def navigate(session: BrowserSession, tab_id: str, page: Any, url: str) -> str:
    """Open url in the tab: wait for the document, then (bounded) for load and a quiet network."""
    status = ""
    try:
        response = page.goto(url, wait_until="domcontentloaded", timeout=NAV_TIMEOUT_MS)
    except Exception as e:
        reason = str(e).splitlines()[0]
        raise ToolError(f"Could not open {url}: {reason}. Check the address, or try again.") from None
    if response is not None and response.status >= 400:
        status = f"HTTP {response.status}"
    try:
        page.wait_for_load_state("load", timeout=LOAD_WAIT_MS)
    except Exception:
        status = (status + ", " if status else "") + "still loading"
    session.settle(tab_id, page)
    return status


def tabs_line(tabs: list[dict]) -> str:
    if not tabs:
        return "Tabs: none open (web_scan with a url opens one)."
    rows = [f"{t['id']}{'*' if t['current'] else ''} {short(t['title'], 60)!r} {short(t['url'], 90)}" for t in tabs]
    return "Tabs (* current): " + " | ".join(rows)


def dialog_lines(dialogs: list[dict]) -> list[str]:
    return [f"Dialog {d['type']}: {d['message']!r} → {d['answer']}" for d in dialogs]
