"""A task's local web site: environment/site/ served on 127.0.0.1 for one trial; form posts are logged for the checker.

GET serves files (index.html for a folder). POST to any path appends {"path", "form", "t"} to the log (a JSON
line; kept in memory too, for the checker) and answers with the page of the same path (path.html or
path/index.html) when there is one, else a short confirmation page.
"""

from __future__ import annotations

import json
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs


class _SiteHandler(SimpleHTTPRequestHandler):
    def __init__(self, *args, directory: str, post_log: Path, posts: list[str], **kwargs):
        self.post_log, self.posts = post_log, posts
        super().__init__(*args, directory=directory, **kwargs)

    def log_message(self, format: str, *args: object) -> None:
        pass  # the trial's site log holds what matters

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
        if "json" in (self.headers.get("Content-Type") or ""):
            try:
                form = json.loads(raw)
            except ValueError:
                form = {"_raw": raw}
        else:
            form = {k: v[0] if len(v) == 1 else v for k, v in parse_qs(raw, keep_blank_values=True).items()}
        path = self.path.split("?")[0]
        line = json.dumps({"path": path, "form": form, "t": time.time()}, ensure_ascii=False) + "\n"
        self.posts.append(line)  # what the checker gets: the file beside the workspace is the agent's to write too
        with open(self.post_log, "a", encoding="utf-8") as f:
            f.write(line)
        root = Path(self.directory)
        page = next((p for p in (root / (path.strip("/") + ".html"), root / path.strip("/") / "index.html")
                     if path.strip("/") and p.is_file()), None)
        body = page.read_bytes() if page else b"<!doctype html><title>Received</title><p>Thank you, received.</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Site:
    """`with Site(task_dir / "environment/site", log) as site: site.url`."""

    def __init__(self, root: Path, post_log: Path):
        self.root, self.post_log = root, post_log
        self.posts: list[str] = []
        """The posts received, as JSON lines, kept in memory for the checker."""
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("Site is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> Site:
        self.post_log.parent.mkdir(parents=True, exist_ok=True)
        self.post_log.touch()
        handler = partial(_SiteHandler, directory=str(self.root), post_log=self.post_log, posts=self.posts)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        threading.Thread(target=self._httpd.serve_forever, name="task-site", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
