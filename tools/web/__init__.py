"""The machinery of web_scan and web_execute_js: the browser session (session.py) and its launch (launch.py), what
tabs report (tabs.py), pages that never yield (stuck.py), the network rules (hosts.py, network.py), page helpers
(pages.py), the in-page JavaScript (page_scan.js, page_math.js, execute_js.js) and the fitting of a scanned page
to its token budget (scan_budget.py)."""

from __future__ import annotations

from typing import Any

Session = Any
"""How the helpers beside the session (network, stuck, tabs) name a BrowserSession: session.py imports them, so
they do not import it back."""
