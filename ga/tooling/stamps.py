"""What the file tools remember of each file the model has seen, so a change made behind its back is noticed.

Kept in the run's tool state (saved with the run). Whoever changes a file the model has seen, and knows the model's
view is current (the memory guard rewriting what the model just wrote), notes the new stamp here.

A stamp is the file's mtime and size, and for files up to DIGEST_LIMIT a digest of its content: an edit that keeps
the size and puts the mtime back (`touch -d`) is still a change. The digest is compared only when mtime and size
agree, so an unchanged small file costs one read of it, a changed one nothing."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

STATE_KEY = "file_stamps"
DIGEST_LIMIT = 16 * 1024 * 1024
"""Files past this size are stamped by mtime and size alone (hashing them on every edit would cost seconds)."""


def stamp(st: os.stat_result, digest: str = "") -> list:
    return [st.st_mtime_ns, st.st_size, *([digest] if digest else [])]


def digest_of(chunks: Iterable[bytes]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for chunk in chunks:
        h.update(chunk)
    return h.hexdigest()


def remember(state: dict, real: Path, seen: list) -> None:
    """Note what the model last saw of this file (JSON-serialisable)."""
    state.setdefault(STATE_KEY, {})[str(real)] = seen


def changed_since_seen(state: dict, real: Path, st: os.stat_result,
                       content: Callable[[], Iterable[bytes]] | None = None) -> bool:
    """The file changed on disk since the model last read or wrote it (a file never seen has not). `content` reads
    the file as it is now, for the digest check."""
    seen = state.get(STATE_KEY, {}).get(str(real))
    if seen is None:
        return False
    if list(seen[:2]) != stamp(st):
        return True
    return len(seen) > 2 and content is not None and digest_of(content()) != seen[2]
