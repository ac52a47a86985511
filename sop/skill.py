"""The SOP format: an Agent Skills folder `<name>/SKILL.md` with YAML front-matter and a markdown body.

Front-matter: `name` (lowercase letters, digits and single hyphens, at most 64, equal to the folder name),
`description` (at most 1,024 characters), optional `metadata` (string → string: ga's ledger), and whatever
else another agent put there (`license`, `allowed-tools`, `compatibility`...), kept as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from sop import store

SKILL_FILE = "SKILL.md"
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_SKILL_FILE = 1024 * 1024
"""A SKILL.md is a page of instructions; past this it is refused rather than read whole."""
MAX_FRONT_DEPTH = 16
"""Nesting of the front-matter's YAML: it holds a few flat maps; libyaml slows quadratically and then crashes
on thousands of levels, so deeper nesting is refused before it is parsed."""
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class SkillError(ValueError):
    """A SKILL.md that does not follow the format; the message lists every problem found."""

    def __init__(self, where: str, problems: list[str]):
        super().__init__(f"{where}: " + "; ".join(problems))
        self.where, self.problems = where, problems


@dataclass(kw_only=True)
class Skill:
    name: str
    description: str
    """What it does and when to use it: what retrieval and the listing show."""
    body: str
    """Markdown: when to use, steps, pitfalls."""
    metadata: dict[str, str] = field(default_factory=dict)
    """ga's ledger (uses, successes, failures, status, runs...) and any other agent's string metadata."""
    extra: dict = field(default_factory=dict)
    """Other front-matter keys, written back unchanged."""
    path: Path | None = None
    """The SKILL.md this was read from."""
    origin: str = "home"
    """Where it lives: home (GA_HOME/sop, ga keeps its ledger), external (GA_SKILLS_PATH, read in place, never
    written) or archived (GA_HOME/sop/.archived: failed too often, kept for reference)."""

    @property
    def folder(self) -> Path | None:
        return self.path.parent if self.path else None

    @property
    def status(self) -> str:
        return self.metadata.get("status", "ok")

    def text(self) -> str:
        """The whole SKILL.md: front-matter, then the body."""
        front = {"name": self.name, "description": self.description, **self.extra}
        if self.metadata:
            front["metadata"] = {k: str(v) for k, v in self.metadata.items()}
        head = yaml.dump(front, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=10_000)
        return f"---\n{head}---\n\n{self.body.strip()}\n"


def name_problems(name: object) -> list[str]:
    if not isinstance(name, str) or not name:
        return ["`name` is missing (lowercase letters, digits and hyphens, e.g. csv-summary)"]
    problems = []
    if len(name) > MAX_NAME:
        problems.append(f"`name` is {len(name)} characters; at most {MAX_NAME}")
    if not NAME.match(name):
        problems.append(f"`name` {name!r} must be lowercase letters, digits and single hyphens, "
                        "not starting or ending with a hyphen")
    return problems


def parse(text: str, *, where: str = SKILL_FILE, folder_name: str | None = None) -> Skill:
    """Read a SKILL.md; SkillError lists everything wrong with it (nothing is guessed)."""
    text = text.lstrip("\ufeff")
    parts = re.match(r"---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|$)", text, re.DOTALL | re.MULTILINE)
    if parts is None:
        raise SkillError(where, ["no YAML front-matter: the file must start with a line `---`, then `name:` "
                                 "and `description:`, then `---`"])
    try:
        _screen(parts[1], where)
        front = yaml.load(parts[1], Loader=_LOADER)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at front-matter line {mark.line + 1}" if mark else ""
        raise SkillError(where, [f"front-matter is not valid YAML{at}: {getattr(e, 'problem', e)}"]) from None
    if not isinstance(front, dict):
        raise SkillError(where, ["front-matter must be a YAML map with `name` and `description`"])
    problems = front_matter_problems(front, folder_name)
    if problems:
        raise SkillError(where, problems)
    extra = {k: v for k, v in front.items() if k not in ("name", "description", "metadata")}
    metadata = {str(k): "" if v is None else str(v) for k, v in (front.get("metadata") or {}).items()}
    return Skill(name=front["name"], description=" ".join(str(front["description"]).split()),
                 body=text[parts.end():].strip(), metadata=metadata, extra=extra)


def _screen(front: str, where: str) -> None:
    """Refuse aliases (a few lines of anchors expand to billions of nodes: the "billion laughs") and deep nesting
    from the event stream, before anything is built."""
    depth, deep = 0, f"front-matter is nested over {MAX_FRONT_DEPTH} levels deep"
    try:
        for event in yaml.parse(front, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent):
                raise SkillError(where, ["front-matter uses a YAML alias (`*name`); write the values out"])
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_FRONT_DEPTH:
                    raise SkillError(where, [deep])
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as e:  # newer libyaml stops deep nesting itself, while scanning ahead
        if "nesting depth" in str(e):
            raise SkillError(where, [deep]) from e
        raise


def front_matter_problems(front: dict, folder_name: str | None) -> list[str]:
    problems = name_problems(front.get("name"))
    if folder_name is not None and not problems and front["name"] != folder_name:
        problems.append(f"`name` {front['name']!r} differs from its folder name {folder_name!r}")
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("`description` is missing (what it does and when to use it)")
    elif len(description) > MAX_DESCRIPTION:
        problems.append(f"`description` is {len(description)} characters; at most {MAX_DESCRIPTION}")
    metadata = front.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        problems.append("`metadata` must be a map of string keys to string values")
    elif metadata:
        nested = [str(k) for k, v in metadata.items() if isinstance(v, (dict, list))]
        if nested:
            problems.append(f"`metadata` values must be strings, not lists or maps: {', '.join(nested)}")
    compatibility = front.get("compatibility")
    if compatibility is not None and (not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY):
        problems.append(f"`compatibility` must be a string of at most {MAX_COMPATIBILITY} characters")
    return problems


def read(path: Path) -> Skill:
    """The skill in `path` (a SKILL.md); its folder must carry its name. One that is not a regular file (a FIFO
    would block the reader), is over MAX_SKILL_FILE or is not UTF-8 is a SkillError."""
    try:
        f = store.open_regular(path, follow=True)
    except store.NotRegular:
        raise SkillError(str(path), ["not a regular file"]) from None
    with f:
        data = f.read(MAX_SKILL_FILE + 1)
    if len(data) > MAX_SKILL_FILE:
        raise SkillError(str(path), [f"over {MAX_SKILL_FILE // 1024} KiB; a SKILL.md is a page of instructions"])
    try:
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as read_text() gave
    except UnicodeDecodeError:
        raise SkillError(str(path), ["not UTF-8 text"]) from None
    skill = parse(text, where=str(path), folder_name=path.parent.name)
    skill.path = path
    return skill
