"""Record/replay of model exchanges: a cassette is a JSONL file, one exchange a line, keyed by the normalised request.

Normalising drops fields that say nothing about the conversation (user, metadata, stream_options), sorts keys, and
replaces the trial's own folder with a placeholder, so the same conversation in another trial folder finds its
recording. Replay takes the first unused exchange with the request's key; when none matches (a request that
differs in a timing or a date) it falls back to the next unused exchange in recorded order and says so.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path

_VOLATILE = ("user", "metadata", "stream_options", "store")


def normalise(path: str, body: dict, rewrite: dict[str, str]) -> str:
    kept = {k: v for k, v in body.items() if k not in _VOLATILE}
    text = json.dumps({"path": path, "body": kept}, sort_keys=True, ensure_ascii=False)
    for old, new in sorted(rewrite.items(), key=lambda kv: -len(kv[0])):  # longest first: nested folders
        text = text.replace(json.dumps(old)[1:-1], new)
    return text


def request_key(path: str, body: dict, rewrite: dict[str, str]) -> str:
    return hashlib.sha256(normalise(path, body, rewrite).encode()).hexdigest()[:32]


@dataclass(kw_only=True)
class Recording:
    key: str
    status: int
    content_type: str
    body: str
    """The reply as sent: a JSON body, or the whole server-sent stream."""
    match: str = "key"
    """How a replayed exchange was found: "key" or "order"."""


class Cassette:
    def __init__(self, path: Path, mode: str):
        if mode not in ("record", "replay"):
            raise ValueError(f"cassette mode {mode!r}: use record or replay")
        self.path, self.mode = path, mode
        self._lock = threading.Lock()
        self._entries: list[Recording] = []
        self._used: set[int] = set()
        if mode == "replay":
            if not path.is_file():
                raise FileNotFoundError(f"no cassette {path}: record it first with --record")
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    self._entries.append(Recording(**json.loads(line)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")

    def save(self, recording: Recording) -> None:
        line = json.dumps({"key": recording.key, "status": recording.status, "content_type": recording.content_type,
                           "body": recording.body}, ensure_ascii=False)
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def find(self, key: str) -> Recording | None:
        with self._lock:
            unused = [i for i in range(len(self._entries)) if i not in self._used]
            index = next((i for i in unused if self._entries[i].key == key), None)
            match = "key"
            if index is None and unused:
                index, match = unused[0], "order"
            if index is None:
                return None
            self._used.add(index)
            found = self._entries[index]
            return Recording(key=found.key, status=found.status, content_type=found.content_type, body=found.body,
                             match=match)
