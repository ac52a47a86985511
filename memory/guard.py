"""The guard between a run and memory: no secret reaches a memory file, every SOP and fact names its run.

Memory is written only by the model's explicit file writes (after start_long_term_update opened it) and by
the scripts ga learns from verified runs; both pass through here. Secrets are ga's own secret variables,
key-shaped strings, URL passwords (ga/tooling/redact.py), `password = ...`-style assignments, and every such value
seen anywhere in the run's trajectory (an env dump, a config file the model read), wherever it shows up again."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from ga.tooling.redact import MARK, NOT_SECRET, PLACEHOLDER, redact, secret_values
from sop import ledger, store
from sop.skill import SKILL_FILE, SkillError, parse

KEYWORD = re.compile(r"p(?:assw(?:or)?d|wd|rivate[_-]?key)|secret|token|a(?:pi[_-]?key|ccess[_-]?key|uth)|credentials?")
"""A word holding one of these (in lowercase text) names a secret: DB_PASSWORD, api-key, X-Auth-Token, githubToken."""
ASSIGNED = re.compile(r"[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?(?P<value>[^\s\"'`<>,;)]{4,})")
"""What follows such a word in `KEY = value`, `KEY: value`, `"key": "value"`, `Authorization: Bearer value`."""
_WORD_REST = re.compile(r"[\w.-]*")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
MIN_HARVESTED = 6
"""Values shorter than this, seen in the run, are not hunted elsewhere (they would blank ordinary words)."""
RUN_TAG = re.compile(r"\[run [^\]\s]{1,80}\]\s*$")


def _is_value(value: str) -> bool:
    lowered = value.lower()
    return not PLACEHOLDER.match(value) and "redacted" not in lowered and lowered not in NOT_SECRET


def assignments(text: str) -> Iterator[tuple[str, tuple[int, int]]]:
    """(value, its span) of every assignment to a secret-named word, in order.

    A scan rather than one pattern, so that it stays linear in the text: a single regex has to try a key at every
    character of a long word and each keyword inside it (a 16,000-character token took minutes). Here the fast
    keyword search finds a candidate, the word around it is taken whole (each stretch of text looked at once), and
    only then is `= value` tried after it.
    """
    lowered = text.lower()  # case-sensitive patterns skip what cannot start a keyword many times faster
    if len(lowered) != len(text):  # a few characters (İ) lower to two: keep the positions
        lowered = text.translate(_ASCII_LOWER)
    pos = 0
    while hit := KEYWORD.search(lowered, pos):
        pos = _WORD_REST.match(lowered, hit.end()).end()  # the key is the whole word the keyword sits in
        found = ASSIGNED.match(lowered, pos)
        if found:
            yield text[found.start("value"):found.end("value")], found.span("value")
            pos = found.end()


def harvest(text: str) -> set[str]:
    """Secret values assigned in `text` (e.g. an env dump or a config file a tool printed)."""
    return {value for value, _ in assignments(text) if len(value) >= MIN_HARVESTED and _is_value(value)}


def run_secrets(run_dir: Path | None) -> tuple[str, ...]:
    """ga's secret values plus every secret value that appeared in this run's trajectory, longest first."""
    found = set(secret_values(os.environ))
    trajectory = run_dir / "trajectory.jsonl" if run_dir else None
    if trajectory and trajectory.is_file():
        for line in trajectory.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line torn by a kill
            for text in _strings(event):
                found |= harvest(text)
    return tuple(sorted(found, key=len, reverse=True))


def _strings(value: object):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (dict, list)):
        for v in value.values() if isinstance(value, dict) else value:
            yield from _strings(v)


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """`text` without secrets: known values, key shapes, URL passwords, secret-named assignments."""
    text = redact(text, secrets)
    parts, done = [], 0
    for value, (start, end) in assignments(text):
        if _is_value(value):
            parts += (text[done:start], MARK)
            done = end
    return "".join([*parts, text[done:]]) if parts else text


def is_memory_path(path: Path, home: Path) -> bool:
    return any(path == root or path.is_relative_to(root) for root in (store.sop_dir(home), store.memory_dir(home)))


def sanitize(path: Path, *, home: Path, run_id: str, secrets: tuple[str, ...]) -> list[str]:
    """After something other than ga wrote a memory file: secrets out, provenance in. Returns notes for the model."""
    if not path.is_file() or path == store.index_path(home) or path.name.startswith("."):
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    clean = scrub(text, secrets)
    redacted = clean.count(MARK) - text.count(MARK)
    notes = [f"{redacted} secret value(s) redacted: memory never keeps secrets"] if redacted > 0 else []
    if path.name == SKILL_FILE and path.parent.parent == store.sop_dir(home):
        clean, more = _stamped_skill(clean, path, run_id)
        notes += more
    elif path == store.facts_path(home):
        clean = "\n".join(line if not line.startswith("- ") or RUN_TAG.search(line) or not line[2:].strip()
                          else f"{line.rstrip()} [run {run_id}]" for line in clean.splitlines()) + "\n"
    if clean != text:
        with store.locked(home):
            store.write_text(path, clean)
    return notes


def _stamped_skill(text: str, path: Path, run_id: str) -> tuple[str, list[str]]:
    try:
        skill = parse(text, where=str(path), folder_name=path.parent.name)
    except SkillError as e:
        return text, [f"this SOP is not valid, so ga ignores it until it is fixed: {'; '.join(e.problems)}"]
    skill.metadata = ledger.stamp(ledger.fresh(skill.metadata), run_id=run_id, source="model")
    return skill.text(), []


def opened_skill(path: Path, home: Path, skills_path: list[Path]) -> str | None:
    """The SOP name if `path` is a SKILL.md of the library (ga's own or GA_SKILLS_PATH), else None."""
    if path.name != SKILL_FILE:
        return None
    roots = [store.sop_dir(home), *skills_path]
    if any(path.parent.parent == Path(r).resolve() or path.parent == Path(r).resolve() for r in roots):
        return path.parent.name
    return None
