"""Which hosts the browser may reach, and which URLs carry data the run read from files.

Local addresses (loopback, private ranges, link-local such as the cloud metadata service at 169.254.169.254)
are reachable only when someone named them: the user, in the task or a later message (a URL, a host:port, a
bare address), or GA_ALLOW_HOSTS. The pages of a named local site may reach that site's other local services
(its API on another port), never a link-local one. Everything else on the web is reachable.

A URL whose path or query carries a piece of text that the run read from files or command output, and not
from the user, is "carrying local data"; going with it to a host the run has not visited is shown to the user.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote_plus, urlsplit

PUBLIC, LOOPBACK, PRIVATE, LINK_LOCAL = "public", "loopback", "private", "link-local"
WEB_TOOLS = ("web_scan", "web_execute_js")
"""Their output is the web's own text: sending it back to the web is browsing, not a leak."""
USER_TOOLS = ("ask_user",)
"""Their output is the human's answer: named by the user."""
RESOLVE_SECONDS = 2.0
_DNS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ga-dns")
_resolved: dict[str, str] = {}
_URL = re.compile(r"\b(?:https?|wss?)://(\[[0-9a-f:.]+\]|[^\s/?#'\"<>`)\]]+)", re.IGNORECASE)
_HOST_PORT = re.compile(r"(?<![\w.:/-])(\[[0-9a-f:.]+\]|localhost|(?:\d{1,3}\.){3}\d{1,3}|[a-z0-9-]+(?:\.[a-z0-9-]+)*)"
                        r":(\d{2,5})\b", re.IGNORECASE)
_BARE_IP = re.compile(r"(?<![\w.:/-])((?:\d{1,3}\.){3}\d{1,3}|localhost)(?![\w.:-]*\w)", re.IGNORECASE)
_PIECE_SPLIT = re.compile(r"[/&=;,:\s]+")


def split_host(host: str) -> str:
    return host.strip("[]").lower().rstrip(".")


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if not re.fullmatch(r"(0x[0-9a-f]+|\d+)(\.(0x[0-9a-f]+|\d+)){0,3}", host):
            return None
        try:  # the short and numeric forms browsers accept: 127.1, 2130706433, 0x7f.0.0.1
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        return ip.ipv4_mapped
    return ip


def ip_class(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    if ip.is_loopback or ip.is_unspecified:  # 0.0.0.0 reaches the local machine
        return LOOPBACK
    if ip.is_link_local:
        return LINK_LOCAL
    return PUBLIC if ip.is_global else PRIVATE


def address_class(host: str, resolve: bool = True) -> str:
    """public, loopback, private or link-local; a name is resolved (cached, bounded) and judged by its addresses."""
    host = split_host(host)
    if host == "localhost" or host.endswith(".localhost"):
        return LOOPBACK
    ip = _ip(host)
    if ip is not None:
        return ip_class(ip)
    if not resolve or not host:
        return PUBLIC
    if host not in _resolved:
        _resolved[host] = _resolve(host)
    return _resolved[host]


def _resolve(host: str) -> str:
    """The most local class among the name's addresses; a name that does not resolve is the browser's problem."""
    try:
        infos = _DNS.submit(socket.getaddrinfo, host, None).result(RESOLVE_SECONDS)
    except (OSError, FutureTimeout, UnicodeError):
        return PUBLIC
    order = [LINK_LOCAL, LOOPBACK, PRIVATE, PUBLIC]
    classes = {ip_class(ipaddress.ip_address(info[4][0].split("%")[0])) for info in infos}
    return next((c for c in order if c in classes), PUBLIC)


def host_port(url: str) -> tuple[str, int | None]:
    """(host, port) of a URL, the port filled in from the scheme; ("", None) when there is no host."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "", None
    if port is None:
        port = {"http": 80, "ws": 80, "https": 443, "wss": 443}.get(parts.scheme.lower())
    return split_host(parts.hostname or ""), port


def canonical(host: str) -> str:
    """localhost, 127.0.0.1, ::1 and 0.0.0.0 name the same server."""
    host = split_host(host)
    return "localhost" if host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") else host


def named_hosts(text: str) -> set[tuple[str, int | None]]:
    """The hosts a text names: (host, port) from URLs and host:port, (host, None) for a bare address (any port)."""
    found: set[tuple[str, int | None]] = set()
    for match in _URL.finditer(text):
        host, port = host_port(match.group(0))
        if host:
            found.add((canonical(host), port))
    for match in _HOST_PORT.finditer(text):
        found.add((canonical(match.group(1)), int(match.group(2))))
    for match in _BARE_IP.finditer(text):
        found.add((canonical(match.group(1)), None))
    return found


@dataclass(kw_only=True)
class RunText:
    """What the run's trajectory says so far, read incrementally: the user's words and the output of the tools
    that read local data (files, commands). A program that drives the tools without a run has no task."""

    path: Path
    """The run's trajectory.jsonl."""
    offset: int = 0
    has_task: bool = False
    user: list[str] = field(default_factory=list)
    local: list[str] = field(default_factory=list)
    _local_text: str = ""

    def refresh(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        self.offset += end
        for line in data[:end].splitlines():
            try:
                self._take(json.loads(line))
            except (ValueError, TypeError, AttributeError):
                continue

    def _take(self, event: dict) -> None:
        if event.get("type") == "message" and event["message"].get("role") == "user":
            self.has_task = True
            self.user.append(str(event["message"].get("content") or ""))
        elif event.get("type") == "result":  # a failed command's output is local data too
            name = event.get("name")
            if name in USER_TOOLS:
                self.user.append(str(event.get("content") or ""))
            elif name not in WEB_TOOLS:
                self.local.append(str(event.get("content") or ""))
                self._local_text = ""

    @property
    def local_text(self) -> str:
        if not self._local_text and self.local:
            self._local_text = "\n".join(self.local)
        return self._local_text


def url_pieces(url: str) -> list[str]:
    """The data a URL carries to its server: path segments and query values, decoded, and their parts.
    Only specific pieces count: six characters or more, and not a plain word shorter than twelve letters."""
    parts = urlsplit(url)
    fields = [f for pair in re.split(r"[&;]", parts.query) for f in pair.partition("=")[::2]]
    raw = [unquote_plus(p) for p in parts.path.split("/") + fields if p]
    pieces = set()
    for value in raw:
        for part in [value, *_PIECE_SPLIT.split(value)]:
            piece = part.strip()
            if len(piece) >= 6 and not (piece.isalpha() and len(piece) < 12):
                pieces.add(piece)
    return sorted(pieces, key=len, reverse=True)


def carried_local_data(url: str, text: RunText) -> list[str]:
    """Pieces of the URL found in what the run read from files or commands, and not in the user's words."""
    local = text.local_text
    if not local:
        return []
    user = "\n".join(text.user)
    return [p for p in url_pieces(url) if p in local and p not in user][:3]


def parse_allow(value: str) -> tuple[bool, set[tuple[str, int | None]], list]:
    """GA_ALLOW_HOSTS: comma-separated host, host:port, CIDR network, or * for every host."""
    hosts: set[tuple[str, int | None]] = set()
    networks = []
    everything = False
    for item in (x.strip() for x in value.split(",")):
        if not item:
            continue
        if item == "*":
            everything = True
        elif "/" in item:
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                continue
        else:
            host, port = host_port(item if "://" in item else f"//{item}")
            if host:
                explicit = re.search(r":\d+$", item.rstrip("/"))
                hosts.add((canonical(host), port if explicit else None))
    return everything, hosts, networks


def is_named(host: str, port: int | None, named: set[tuple[str, int | None]], networks: list) -> bool:
    key = canonical(host)
    if (key, port) in named or (key, None) in named:
        return True
    ip = _ip(split_host(host))
    return ip is not None and any(ip in net for net in networks if net.version == ip.version)
