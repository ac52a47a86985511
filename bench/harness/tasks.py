"""Task suites in the Terminal-Bench 2 / Harbor layout, read for a local runner (no container daemon).

A task is a folder:

    instruction.md          what the agent is told ({{site_url}} becomes the trial's local web site)
    task.toml               [metadata] split ("dev": looked at while changing an agent, or "test": only
                            reported), tier ("small": one short skill a small local model can pass, or
                            "standard"), tags..., [agent] timeout_sec, [verifier] timeout_sec,
                            [environment] setup (bash run in the fresh workspace before the agent; $TASK_DIR is
                            the task folder),
                            [human] answers (the scripted human's replies, in order),
                            [family] name, round (families run in rounds sharing GA_HOME and HOME)
    environment/workspace/  copied as the trial's workspace (Harbor builds environment/ as a container;
                            this local environment type reads the files the container would start with)
    environment/site/       served on 127.0.0.1 for the trial when present (POSTs are logged for the checker)
    tests/test.sh           the checker: exit 0, and/or a reward in $LOGS_DIR/verifier/reward.txt or reward.json
    solution/solve.sh       the reference solution the oracle agent runs
    scripted/AGENT.json     optional: the scripted upstream's steps for AGENT (offline runs, --upstream scripted)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from ga.errors import ConfigError

DEFAULT_AGENT_TIMEOUT = 600.0
DEFAULT_VERIFIER_TIMEOUT = 120.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
SPLITS = ("dev", "test")
TIERS = ("small", "standard")


@dataclass(kw_only=True)
class Task:
    name: str
    """The folder name; unique in a suite."""
    path: Path
    """The task folder."""
    instruction: str
    """instruction.md as written (placeholders are filled per trial)."""
    agent_timeout: float = DEFAULT_AGENT_TIMEOUT
    """[agent] timeout_sec: the agent's wall-clock budget; past it the process tree is killed."""
    verifier_timeout: float = DEFAULT_VERIFIER_TIMEOUT
    """[verifier] timeout_sec: the checker's budget."""
    tags: list[str] = field(default_factory=list)
    """[metadata] tags (the tools a task exercises, its kind)."""
    category: str = ""
    """[metadata] category."""
    setup: str = ""
    """[environment] setup: bash run in the fresh workspace before the agent starts (e.g. make a git history)."""
    answers: list[str] = field(default_factory=list)
    """[human] answers: what the scripted human replies to the agent's questions, in order."""
    family: str = ""
    """[family] name: tasks of one family run in rounds, in one HOME and GA_HOME per agent and trial."""
    round: int = 0
    """[family] round: 1 is cold, later rounds may profit from what round 1 left (SOPs, memory)."""
    split: str = "test"
    """[metadata] split: "dev" tasks may be looked at while changing an agent; "test" tasks are only reported. Fixed
    before any tuning; a task without one is a test task."""
    tier: str = "standard"
    """[metadata] tier: "small" (a short single-skill task a small local model can pass) or "standard"."""

    @property
    def has_site(self) -> bool:
        return (self.path / "environment" / "site").is_dir()

    def render_instruction(self, site_url: str = "") -> str:
        return self.instruction.replace("{{site_url}}", site_url).strip() + "\n"


def load_task(path: Path) -> Task:
    path = path.resolve()
    for required in ("instruction.md", "task.toml", "tests/test.sh"):
        if not (path / required).is_file():
            raise ConfigError(f"Task {path} has no {required}: a task folder needs instruction.md, task.toml, "
                              "tests/test.sh and solution/solve.sh.")
    if not _NAME.match(path.name):
        raise ConfigError(f"Task folder name {path.name!r}: use letters, digits, '.', '_' and '-'.")
    try:
        config = tomllib.loads((path / "task.toml").read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path / 'task.toml'} is not valid TOML: {e}") from None
    meta, family = config.get("metadata", {}), config.get("family", {})
    answers = config.get("human", {}).get("answers", [])
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise ConfigError(f"{path / 'task.toml'}: [human] answers must be a list of strings.")
    task = Task(
        name=path.name, path=path, instruction=(path / "instruction.md").read_text(encoding="utf-8"),
        agent_timeout=float(config.get("agent", {}).get("timeout_sec", DEFAULT_AGENT_TIMEOUT)),
        verifier_timeout=float(config.get("verifier", {}).get("timeout_sec", DEFAULT_VERIFIER_TIMEOUT)),
        tags=list(meta.get("tags", [])), category=str(meta.get("category", "")),
        setup=str(config.get("environment", {}).get("setup", "")), answers=answers,
        family=str(family.get("name", "")), round=int(family.get("round", 0)),
        split=str(meta.get("split", "test")), tier=str(meta.get("tier", "standard")),
    )
    if task.split not in SPLITS or task.tier not in TIERS:
        raise ConfigError(f"{path / 'task.toml'}: [metadata] split must be one of {', '.join(SPLITS)} and tier one "
                          f"of {', '.join(TIERS)} (got {task.split!r}, {task.tier!r}).")
    if task.family and task.round < 1:
        raise ConfigError(f"{path / 'task.toml'}: a [family] task needs round = 1, 2, ...")
    return task


def load_suite(suite: Path, only: list[str] | None = None, *, split: str | None = None,
               tier: str | None = None) -> list[Task]:
    """The suite's tasks sorted by name (a folder that is itself a task is a suite of one), or several suites' (a
    folder of suites); `only` filters by name (exact or a prefix followed by '*'), `split` and `tier` by those."""
    suite = suite.expanduser()
    if not suite.is_dir():
        raise ConfigError(f"Suite {suite} is not a folder of tasks.")
    folders = [suite] if (suite / "task.toml").is_file() else sorted(p for p in suite.iterdir()
                                                                     if (p / "task.toml").is_file())
    if not folders:  # a folder of suites (bench/suites): their tasks together
        folders = sorted(p for s in suite.iterdir() if s.is_dir() for p in s.iterdir() if (p / "task.toml").is_file())
    tasks = [load_task(p) for p in folders]
    if len({t.name for t in tasks}) != len(tasks):
        raise ConfigError(f"{suite}: two tasks share a name; task names must be unique across the suites run together")
    tasks = [t for t in tasks if (split is None or t.split == split) and (tier is None or t.tier == tier)]
    _check_families(tasks)
    if only:
        tasks = [t for t in tasks if any(t.name == o or (o.endswith("*") and t.name.startswith(o[:-1]))
                                         for o in only)]
    if not tasks:
        raise ConfigError(f"No tasks in {suite}" + (f" matching {', '.join(only)}" if only else "")
                          + ": a task is a folder with task.toml, instruction.md and tests/test.sh.")
    return tasks


def _check_families(tasks: list[Task]) -> None:
    rounds: dict[str, list[int]] = {}
    for task in tasks:
        if task.family:
            rounds.setdefault(task.family, []).append(task.round)
    for name, seen in rounds.items():
        if sorted(seen) != list(range(1, len(seen) + 1)):
            raise ConfigError(f"Family {name!r} has rounds {sorted(seen)}: number them 1, 2, ... without gaps.")


def families(tasks: list[Task]) -> dict[str, list[Task]]:
    """Family name → its tasks in round order."""
    out: dict[str, list[Task]] = {}
    for task in sorted((t for t in tasks if t.family), key=lambda t: (t.family, t.round)):
        out.setdefault(task.family, []).append(task)
    return out
