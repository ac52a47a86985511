"""The ledger that keeps SOPs honest, kept in each SKILL.md's `metadata` (strings only, per Agent Skills).

uses, successes and failures count runs that read the SOP; last_success and last_failure date them; runs lists
the runs that wrote it (provenance); status is ok, flagged (failed FLAG_AFTER times in a row: the model is
told to distrust it) or archived (failed ARCHIVE_AFTER times in a row: moved out of retrieval, kept).
"""

from __future__ import annotations

import hashlib
import time

FLAG_AFTER = 2
ARCHIVE_AFTER = 4
MAX_RUNS = 10
"""Source runs kept per SOP (the newest)."""
MAX_KEYWORDS = 24
COUNTERS = ("uses", "successes", "failures", "failures_in_a_row")
LEDGER_KEYS = (*COUNTERS, "source", "runs", "status", "verified", "script", "script_hash", "script_sha256", "usage",
               "last_success", "last_failure", "created", "updated", "learnt_in", "writes")
"""What ga alone writes: a SKILL.md imported or written by the model may claim them (`source: learnt`,
`successes: 14`, a `usage` to run unasked); fresh() drops them and stamp() sets them anew."""


def scripts_digest(files: dict[str, str]) -> str:
    """What a learnt SOP's scripts hold, hashed: its ready-to-run line is offered only while the files still match."""
    text = "\0".join(f"{name}\0{body}" for name, body in sorted(files.items()))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def fresh(metadata: dict[str, str]) -> dict[str, str]:
    """The metadata without ga's ledger: for a SKILL.md that ga did not write itself."""
    return {k: v for k, v in metadata.items() if k not in LEDGER_KEYS}


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def count(metadata: dict[str, str], key: str) -> int:
    try:
        return max(0, int(metadata.get(key, "0") or 0))
    except ValueError:  # a hand-edited ledger: treat nonsense as zero rather than refusing the SOP
        return 0


def runs_of(metadata: dict[str, str]) -> list[str]:
    return [r for r in metadata.get("runs", "").replace(",", " ").split() if r]


def keywords_of(metadata: dict[str, str]) -> list[str]:
    return [k.strip() for k in metadata.get("keywords", "").split(",") if k.strip()]


def stamp(metadata: dict[str, str], *, run_id: str, source: str, keywords: list[str] = ()) -> dict[str, str]:
    """The ledger after `run_id` wrote this SOP (created, or updated: counters kept, status back to ok)."""
    meta = dict(metadata)
    meta.setdefault("created", now())
    meta["updated"] = now()
    for key in COUNTERS:
        meta[key] = str(count(meta, key))
    meta.setdefault("source", source)
    meta["status"] = "ok"
    meta["failures_in_a_row"] = "0"  # a rewrite after a success is a fresh start
    if run_id:
        meta["runs"] = ",".join(([r for r in runs_of(meta) if r != run_id] + [run_id])[-MAX_RUNS:])
    else:
        meta.setdefault("runs", "")
    merge_keywords(meta, keywords)
    return meta


def merge_keywords(meta: dict[str, str], new: list[str]) -> None:
    """Newest first, case-insensitively unique, at most MAX_KEYWORDS: the phrasings people used for this task."""
    seen: dict[str, str] = {}
    for word in [*new, *keywords_of(meta)]:
        seen.setdefault(word.casefold(), word)
    if seen or "keywords" in meta:
        meta["keywords"] = ", ".join(list(seen.values())[:MAX_KEYWORDS])


def record(metadata: dict[str, str], *, success: bool) -> tuple[dict[str, str], str]:
    """The ledger after a run that read this SOP ended; returns (ledger, status change: '', flagged, archived, ok)."""
    meta = dict(metadata)
    before = meta.get("status", "ok")
    meta["uses"] = str(count(meta, "uses") + 1)
    if success:
        meta["successes"] = str(count(meta, "successes") + 1)
        meta["last_success"] = now()
        meta["failures_in_a_row"] = "0"
        status = "ok"
    else:
        meta["failures"] = str(count(meta, "failures") + 1)
        meta["last_failure"] = now()
        streak = count(meta, "failures_in_a_row") + 1
        meta["failures_in_a_row"] = str(streak)
        status = "archived" if streak >= ARCHIVE_AFTER else "flagged" if streak >= FLAG_AFTER else before
    meta["status"] = status
    return meta, status if status != before else ""


def summary(metadata: dict[str, str]) -> str:
    """One line for the terminal: 3 uses, 2 ok, 1 failed."""
    return (f"{count(metadata, 'uses')} uses, {count(metadata, 'successes')} ok, "
            f"{count(metadata, 'failures')} failed")
