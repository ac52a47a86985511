"""Deferred tools: the schemas a task rarely needs (ToolSpec.deferred) are not sent until the run needs them. One
line of the system prompt names them; a call to one, its name in a reply, or a URL in the task or a tool result
sends its schema from the next request on. Once sent, a schema stays (the request's prefix changes once, not every
turn). Still every tool and one dispatcher: a call to a deferred tool runs like any other."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ga.protocols import ToolCall

URL = re.compile(r"\bhttps?://[^\s/$.?#][^\s]*", re.IGNORECASE)
WEB = ("web_scan", "web_execute_js")
"""Sent together once a URL appears: reading a page is the first thing a task with a URL may need."""
STATE_KEY = "tools_loaded"


class Deferral:
    def __init__(self, deferred: list[str], state: dict, *, on: bool):
        self.deferred, self.on = deferred, on
        self.loaded: list[str] | None = state.setdefault(STATE_KEY, []) if on else None
        """The deferred tools whose schemas are sent (None: deferral off, every schema is sent)."""

    def see(self, text: str = "", calls: Iterable[ToolCall] = ()) -> bool:
        """Load what `text` (a task, a reply, a result) or `calls` ask for; True when a schema joined."""
        if self.loaded is None:
            return False
        waiting = [n for n in self.deferred if n not in self.loaded]
        called = {c.name for c in calls}
        want = [n for n in waiting if n in called or n in text or (n in WEB and URL.search(text))]
        self.loaded += want
        return bool(want)
