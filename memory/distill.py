"""Distillation: one request without tools turns a finished run into a new SOP, an update of one, or NOTHING.

The reply is validated and refused when it is junk; duplicates are caught in code (a "new" SOP too close to an
existing one updates it); the write is atomic and happens under the memory lock, after the library is re-read.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ga.prompts import render
from ga.protocols import Model, Reply
from memory.guard import scrub
from memory.index import refresh
from memory.rules import rules
from sop import ledger, retrieval, store
from sop.library import load, save
from sop.skill import Skill, SkillError, name_problems, parse, split_front_matter
from sop.words import keywords

MIN_BODY, MAX_BODY = 80, 6000
"""An SOP body shorter than this says nothing; longer is a trajectory dump, not a procedure."""
MIN_DESCRIPTION = 20
DUPLICATE_SIMILARITY = 0.65
"""A new SOP at least this close to an existing one (name or words) updates it (bench/perf/memory_bench.py shows how
close distinct SOPs come)."""
CLOSEST = 2
"""Existing SOPs shown to the distiller in full."""
TRAJECTORY_CHARS = 6000
MODEL_KEYWORDS, MAX_KEYWORD = 16, 40
"""Keywords taken from the distiller's reply at most, and the longest one kept (characters)."""


class DistillError(RuntimeError):
    """The distillation request failed or its reply was unusable; the run itself is unaffected."""


@dataclass(kw_only=True)
class Decision:
    skill: Skill | None = None
    """The SOP the reply describes; None for NOTHING."""
    update: str = ""
    """The name the reply asked to update (UPDATE: name), if any."""
    keywords: list[str] = field(default_factory=list)
    """Words people would use to ask for it (the reply's `keywords`), merged into the SOP's ledger."""


def request(task: str, outcome: str, trajectory: str, closest: list[Skill], home: Path) -> list[dict]:
    shown = "\n\n".join(f"### {s.name} ({s.path})\n{s.text()}" for s in closest) or "(none)"
    user = (f"Task: {task}\nOutcome: {outcome}\n\nThe run, compacted:\n{trajectory}\n\n"
            f"Closest existing SOPs:\n{shown}")
    return [{"role": "system", "content": render("distill.md", rules=rules(home))},
            {"role": "user", "content": user}]


def ask(model: Model, messages: list[dict], timeout: float) -> Reply:
    """One request, abandoned after `timeout` seconds whatever the server does (a daemon thread holds it)."""
    box: dict = {}

    def call() -> None:
        try:
            box["reply"] = model.complete(messages, [])
        except Exception as e:  # reported below; a failed distillation never fails the run
            box["error"] = e

    worker = threading.Thread(target=call, name="distill", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise DistillError(f"no reply within {timeout:g} s (GA_DISTILL_TIMEOUT)")
    if "error" in box:
        raise DistillError(f"the request failed: {box['error']}")
    return box["reply"]


def _unfenced(text: str) -> str:
    text = text.strip()
    fenced = re.match(r"^```[\w-]*\n(.*?)\n?```$", text, re.DOTALL)
    return fenced.group(1).strip() if fenced else text


def parse_reply(text: str) -> Decision:
    """The distiller's answer, or DistillError saying why it is not usable (then nothing is written)."""
    text = _unfenced(text)
    if re.fullmatch(r"\W*nothing\W*", text, re.IGNORECASE) or re.match(r"\W*NOTHING\b", text):
        return Decision()
    update = ""
    if m := re.match(r"\W*UPDATE:\s*(\S+)\s*\n", text, re.IGNORECASE):
        update, text = m.group(1).strip("`*'\""), text[m.end():]
    start = re.search(r"^---[ \t]*$", text, re.MULTILINE)
    if start is None or split_front_matter(_unfenced(text[start.start():])) is None:
        raise DistillError("the reply is neither NOTHING nor an SOP with `---` front-matter")
    text, listed = _keywords_line(_unfenced(text[start.start():]))
    try:
        skill = parse(_slugged(text))
    except SkillError as e:
        raise DistillError(f"the SOP is malformed: {'; '.join(e.problems)}") from None
    _check_content(skill)
    skill.metadata.pop("keywords", None)  # the ledger's keywords are merged by ga, not set by the reply
    return Decision(skill=skill, update=update, keywords=_keywords(listed))


def _keywords_line(text: str) -> tuple[str, object]:
    """The reply without its front-matter `keywords:` line, and that line's value (read apart: a stray colon
    or quote in free words must not make the whole SOP unreadable)."""
    parts = split_front_matter(text)
    line = re.search(r"^keywords:[ \t]*(.*)$", parts[0], re.MULTILINE) if parts else None
    if line is None:
        return text, None
    value: object = line.group(1).strip()
    if str(value).startswith("["):
        try:
            value = yaml.safe_load(str(value))
        except yaml.YAMLError:
            value = str(value).strip("[]")
    front = parts[0][:line.start()] + parts[0][line.end() + 1:]
    return f"---\n{front}---\n{parts[1]}", value


def _keywords(value: object) -> list[str]:
    """The distiller's keywords, bounded: how people ask for this task, in their words (and other languages)."""
    items = value if isinstance(value, list) else re.split(r"[,，、;\n]", value) if isinstance(value, str) else []
    words = [" ".join(str(item).split()) for item in items]
    return [w for w in words if 0 < len(w) <= MAX_KEYWORD][:MODEL_KEYWORDS]


def _slugged(text: str) -> str:
    """A name the model wrote as words (`CSV summary`) becomes csv-summary; anything else is left to fail."""
    def slug(m: re.Match) -> str:
        name = re.sub(r"[^a-z0-9]+", "-", m.group(2).strip().strip("'\"").lower()).strip("-")
        return m.group(1) + (name if not name_problems(name) else m.group(2))
    return re.sub(r"^(name:[ \t]*)(.+)$", slug, text, count=1, flags=re.MULTILINE)


def _check_content(skill: Skill) -> None:
    body = skill.body
    if len(skill.description) < MIN_DESCRIPTION:
        raise DistillError(f"the description is too short to say when to use it ({len(skill.description)} chars)")
    if not MIN_BODY <= len(body) <= MAX_BODY:
        raise DistillError(f"the body is {len(body)} characters; an SOP needs {MIN_BODY}-{MAX_BODY}")
    if not re.search(r"^\s*(?:\d+[.)]|[-*])\s+\S", body, re.MULTILINE):
        raise DistillError("the body has no steps (a numbered or bulleted list)")
    if "NOTHING" in body.split()[:3]:
        raise DistillError("the reply mixes NOTHING with an SOP")


def sop_similarity(a: Skill, b: Skill) -> float:
    """How much two SOPs are the same procedure: the closer of their names and their texts' words."""
    if a.name == b.name:
        return 1.0
    na, nb = set(a.name.split("-")), set(b.name.split("-"))
    return max(len(na & nb) / len(na | nb), retrieval.similarity(_text(a), _text(b)))


def _text(skill: Skill) -> str:
    return f"{skill.description}\n{skill.body}"


@dataclass(kw_only=True)
class Saved:
    skill: Skill
    action: str
    """created, updated (asked), merged (a near-duplicate became an update) or covered (an external skill has it)."""


def apply(decision: Decision, *, home: Path, skills_path: list[Path], run_id: str, task: str,
          secrets: tuple[str, ...]) -> Saved | None:
    """Write the decision (under the memory lock, against a fresh read of the library)."""
    if decision.skill is None:
        return None
    new = decision.skill
    new.description = scrub(new.description, secrets)
    new.body = scrub(new.body, secrets)
    with store.locked(home):
        lib = load(home, skills_path)
        target, action = _target(decision, lib, home)
        if action == "covered":
            return Saved(skill=target, action=action)
        if target is not None:
            new = Skill(name=target.name, description=new.description, body=new.body, metadata=target.metadata,
                        extra=target.extra)
        learned = [scrub(k, secrets) for k in [*keywords(task), *decision.keywords]]
        new.metadata = ledger.stamp(new.metadata, run_id=run_id, source="distilled", keywords=learned)
        save(home, new)
        refresh(home, skills_path=skills_path)
    return Saved(skill=new, action=action)


def _target(decision: Decision, lib, home: Path) -> tuple[Skill | None, str]:
    new = decision.skill
    asked = lib.get(decision.update) if decision.update else None
    if asked is not None and asked.origin == "home":
        return asked, "updated"
    scored = sorted(((sop_similarity(new, s), s) for s in lib.skills), key=lambda pair: -pair[0])
    if scored and scored[0][0] >= DUPLICATE_SIMILARITY:
        closest = scored[0][1]
        return closest, "covered" if closest.origin == "external" else "merged"
    return None, "created"
