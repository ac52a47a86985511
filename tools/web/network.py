"""The browser's network rules (tools/web/hosts.py), enforced in the browser itself.

Layers, each covering what the one before cannot see: web_scan checks a URL before opening it; a context route
sees the first request of every page, frame, popup and worker; each tab's own DevTools session intercepts
local addresses at every redirect hop (Playwright routes never see redirects); a frame that still lands on a
blocked address is emptied before anything is read from it; WebSockets to local addresses are routed too; and
service workers, which routes cannot see, are off in the browsers ga launches (launch.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.web import Session, hosts

log = logging.getLogger("tools.web.session")

LOCAL_PATTERNS = ["*://localhost*", "*://*.localhost*", "*://127.*", "*://0.*", "*://10.*", "*://172.*",
                  "*://192.168.*", "*://169.254.*", "*://100.*", "*://[*"]
"""URL patterns (DevTools wildcards) that may hold a local address literal; the handler decides exactly."""
RULE = "web-local-hosts"


@dataclass(kw_only=True)
class NetPolicy:
    """Decides, per URL, whether the browser may go there, and what local data a URL would carry."""

    env: dict[str, str]
    """Read for GA_ALLOW_HOSTS."""
    text: hosts.RunText
    """The run's words so far (the task, the user's messages, what tools read)."""
    visited: list[str] = field(default_factory=list)
    """host:port of the pages the run's tabs have shown (kept in the run's tool state: a resumed run remembers)."""
    given: set = field(default_factory=set)
    """Hosts of URLs handed straight to web_scan by a program that drives the tools without a run (no model)."""
    _named: set = field(default_factory=set)
    _seen_user: int = -1

    @classmethod
    def for_run(cls, env: dict[str, str], run_dir: Path, state: dict) -> NetPolicy:
        return cls(env=env, text=hosts.RunText(path=run_dir / "trajectory.jsonl"),
                   visited=state.setdefault("web_hosts", []))

    def refresh(self) -> None:
        self.text.refresh()
        if len(self.text.user) != self._seen_user:
            self._seen_user = len(self.text.user)
            self._named = set().union(*map(hosts.named_hosts, self.text.user)) if self.text.user else set()
        self.everything, allowed, self.networks = hosts.parse_allow(self.env.get("GA_ALLOW_HOSTS", ""))
        self.named = self._named | allowed | self.given

    def give(self, url: str) -> None:
        """web_scan(url) from a program, not a model: the caller named that host."""
        self.refresh()
        if not self.text.has_task:
            host, port = hosts.host_port(url)
            self.given.add((hosts.canonical(host), port))
            self.named.add((hosts.canonical(host), port))

    def blocked(self, url: str, initiator: str | None = None) -> str | None:
        """Why url may not be reached (None: it may). The scripts, styles and API calls of a named local site
        (initiator: its page) may reach its other local services, never a link-local address; a navigation needs
        a name of its own."""
        host, port = hosts.host_port(url)
        if not host or not url.lower().startswith(("http:", "https:", "ws:", "wss:")):
            return None
        kind = hosts.address_class(host)
        if kind == hosts.PUBLIC:
            return None
        self.refresh()
        if self.everything or hosts.is_named(host, port, self.named, self.networks):
            return None
        if kind != hosts.LINK_LOCAL and initiator:
            source, source_port = hosts.host_port(initiator)
            if (source and hosts.address_class(source) != hosts.PUBLIC
                    and hosts.is_named(source, source_port, self.named, self.networks)):
                return None
        where = f"{host}:{port}" if port else host
        return (f"{where} is a {kind} address that neither the user (in the task or a message) nor GA_ALLOW_HOSTS "
                f"named (rule: {RULE}). If the task needs it, ask the user to name it; the user can also set "
                f"GA_ALLOW_HOSTS={where}.")

    def is_new(self, url: str) -> bool:
        """Neither shown in a tab of this run nor named by the user (GA_ALLOW_HOSTS lets a host be reached, it
        does not say what may be sent there)."""
        host, port = hosts.host_port(url)
        if not host or f"{host}:{port}" in self.visited:
            return False
        self.refresh()
        return not hosts.is_named(host, port, self._named | self.given, [])

    def leak(self, url: str, *, any_host: bool = False) -> list[str]:
        """The pieces of local data (files, command output) a URL to a host new to the run (any host) carries."""
        if not (any_host or self.is_new(url)):
            return []
        self.refresh()
        return hosts.carried_local_data(url, self.text)

    def visit(self, url: str) -> None:
        host, port = hosts.host_port(url)
        if host and f"{host}:{port}" not in self.visited and url.startswith(("http:", "https:")):
            self.visited.append(f"{host}:{port}")


def leak_note(url: str, pieces: list[str]) -> str:
    shown = ", ".join(repr(p if len(p) <= 32 else p[:31] + "…") for p in pieces)
    host, _ = hosts.host_port(url)
    return (f"Note: the URL to {host} carries text read from local files or command output ({shown}); "
            "the user has been shown this.")


def install(session: Session) -> None:
    """Route every request of the browser context through the policy."""
    context = session.context
    context.route("**/*", lambda route: _on_route(session, route))
    try:
        context.route_web_socket(_local_literal, lambda ws: _on_websocket(session, ws))
    except Exception:  # an older Playwright: WebSockets are then not routed
        log.info("route_web_socket unavailable", exc_info=True)


def _local_literal(url: str) -> bool:
    host, _ = hosts.host_port(url)
    return bool(host) and hosts.address_class(host, resolve=False) != hosts.PUBLIC


def _initiator(request: Any) -> str | None:
    """The page a request comes from; None for a navigation, which needs a name of its own."""
    try:
        return None if request.resource_type == "document" else request.frame.page.url
    except Exception:  # a service worker's request has no frame
        return None


def _on_route(session: Session, route: Any) -> None:
    request = route.request
    try:
        url = request.url
        reason = session.policy.blocked(url, _initiator(request))
        if reason:
            session.blocked(url, reason)
            route.abort("blockedbyclient")
            return
        pieces = session.policy.leak(url)
        if pieces:
            session.leaked(url, pieces)
    except Exception:  # a rule that fails must not hang the request
        log.warning("network rule failed for a request", exc_info=True)
    route.fallback()


def _on_websocket(session: Session, ws: Any) -> None:
    reason = session.policy.blocked(ws.url, None)
    if reason:
        session.blocked(ws.url, reason)
        ws.close(code=1008, reason="blocked by ga")
    else:
        ws.connect_to_server()


def guard_tab(session: Session, page: Any, cdp: Any) -> None:
    """Intercept local addresses in this tab at every hop, redirects included."""
    cdp.on("Fetch.requestPaused", lambda event: _on_paused(session, page, cdp, event))
    cdp.send("Fetch.enable", {"patterns": [{"urlPattern": p, "requestStage": "Request"} for p in LOCAL_PATTERNS]})


def _on_paused(session: Session, page: Any, cdp: Any, event: dict) -> None:
    url, request_id = event["request"]["url"], event["requestId"]
    try:
        initiator = None if event.get("resourceType") == "Document" else _page_url(page)
        reason = session.policy.blocked(url, initiator)
    except Exception:
        log.warning("network rule failed for a paused request", exc_info=True)
        reason = "ga's network rule could not judge it"  # closed, not open
    try:
        if reason:
            session.blocked(url, reason)
            cdp.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
        else:
            cdp.send("Fetch.continueRequest", {"requestId": request_id})
    except Exception:  # the tab closed meanwhile
        log.debug("answering a paused request failed", exc_info=True)


def _page_url(page: Any) -> str | None:
    try:
        return page.url
    except Exception:
        return None


def empty_blocked_frames(session: Session, page: Any, note: Callable[[str], None]) -> None:
    """A frame that reached a blocked address anyway (a popup's first redirect) is emptied before it is read."""
    for frame in page.frames:
        try:
            reason = session.policy.blocked(url := frame.url)  # before emptying it: then it is about:blank
            if not reason:
                continue
            if frame == page.main_frame:
                page.goto("about:blank")
            else:
                frame.evaluate("() => { document.documentElement.innerHTML = ''; }")
            note(f"Emptied a frame that had reached {url[:100]}: {reason}")
        except Exception:
            log.debug("emptying a frame failed", exc_info=True)

