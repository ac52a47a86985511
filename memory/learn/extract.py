"""Extraction: the code that did a verified run's work becomes a script, kept only if it reproduces the run.

1. The run's work steps (steps.py), replayed on a copy of the workspace as it was before the run: they must
   reproduce the run's outputs (the files it made or changed, or the values of its answer).
2. Each step is dropped in turn and kept out when the rest still reproduces: exploration and failed attempts go.
3. The task's values in what is left become parameters (script.py), and the script is replayed once more
   with this run's values, then the run's check, if it had one, is run on the result.

Replays run through the same policy and sandbox as code_run, without network, on copies: never on the workspace."""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ga.tooling.effects import ASKS
from memory.learn import snapshot
from memory.learn.literals import Parameter
from memory.learn.script import Lifter, Script, build
from memory.learn.steps import Step, programs, work_steps

BUDGET = 120.0
"""Seconds all replays of one run may take; past it the steps found so far are kept, or nothing is learnt."""
REPLAY_TIMEOUT = 60.0
MAX_STEPS = 12
"""Steps replayed at most (the last ones): a longer run explored first."""
READ_ONLY = re.compile(r"\s*(?:(?:ls|cat|head|tail|wc|grep|find|pwd|echo|file|stat|du|tree|which|type|sort|uniq|"
                       r"diff|python3? --version|pip (?:list|show))\b[^>|;&]*?)\s*$")
"""A bash step that only looks (no redirect, no pipe): dropped without a replay when the run made files."""


class Replayer(Protocol):
    def problem(self) -> str:
        """Why scripts cannot be replayed here ('' when they can)."""
        ...

    def run(self, command: str, root: Path, cwd: str, timeout: float) -> tuple[bool, str]:
        """Run a bash command in the sandbox with `root` as the workspace, in its folder `cwd`: (exit 0, output)."""
        ...


@dataclass(kw_only=True)
class Extraction:
    script: Script
    steps: list[Step]
    verified: str
    """checked (the run's check passed on the replay) or reproduced (the replay made the run's outputs)."""
    outputs: list[str] = field(default_factory=list)


class _Trial:
    """Replays on fresh copies of the kept workspace, within one time budget."""

    def __init__(self, replayer: Replayer, before: Path, workspace: Path, *, outputs: dict[str, str],
                 answer: list[str], staging: Path, ignore: set[str] = frozenset()):
        self.replayer, self.before, self.workspace = replayer, before, workspace
        self.outputs, self.answer, self.ignore = outputs, answer, ignore
        self.staging = staging
        """Where a script is put while it is tried: beside the SOPs (where a learnt one runs from), not in the
        workspace, so the policy and the sandbox see it as they will when it is used."""
        self.deadline, self.why = time.monotonic() + BUDGET, ""

    def said(self) -> str:  # why the last replay did not reproduce the run, after a reason
        return f" ({self.why})" * bool(self.why)

    def constant(self, script: Script, values: list[str]) -> bool:
        """Whether the script makes the very outputs it made with its inputs changed each way (_changed_inputs): it
        does not depend on them (the run typed, or wrote what the task named). A count of matching rows ignores the
        digits, a maximum the repeats: one difference is enough. A replay that fails proves nothing either way."""
        found = [self.reproduces(script, values, mutate=how) for how in ("digits", "lines")]
        return any(found) and False not in found

    def reproduces(self, script: Script, values: list[str] | None = None, check: str = "", *,
                   mutate: str = "") -> bool | None:
        """Whether the script makes the run's outputs (`mutate`: on inputs changed so; None: nothing to change)."""
        self.why = "" if time.monotonic() < self.deadline else f"the replays' {BUDGET:.0f} s ran out"
        if self.why:
            return False
        root = Path(tempfile.mkdtemp(prefix="ga-learn-"))
        shutil.rmtree(self.staging, ignore_errors=True)
        try:
            self.staging.mkdir(parents=True, mode=0o700)
            for name, text in script.files.items():
                (self.staging / name).write_text(text, encoding="utf-8")
            shutil.copytree(self.before, root / "ws", symlinks=True)
            made = {rel for rel, how in self.outputs.items() if how == "created"}
            if mutate and not _changed_inputs(root / "ws", made | self.ignore, mutate):
                return None
            timeout = max(1.0, min(REPLAY_TIMEOUT, self.deadline - time.monotonic()))
            ok, output = self.replayer.run(script.command(str(self.staging), values), root, "ws", timeout)
            differ = snapshot.same(self.outputs, self.workspace, root / "ws") if ok else []
            if not ok or differ:
                told = [ln for ln in output.splitlines() if ln.strip() and not ln.startswith(("hint:", "note:"))]
                self.why = f"{', '.join(differ)} came out different" if ok else f"it failed: {(told or [''])[-1][:200]}"
                return False
            if mutate:  # the same outputs from other input
                return True
            if extra := set(snapshot.changes(self.before, root / "ws", ignore=self.ignore)) - set(self.outputs):
                self.why = f"it also changed {', '.join(sorted(extra))}"  # a script does its task's work, no more
                return False
            if missed := [value for value in self.answer if value not in output]:
                self.why = f"it did not print {', '.join(missed)}"
                return False
            return not check or self.replayer.run(check, root, "ws", timeout)[0]
        finally:
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(self.staging, ignore_errors=True)
            with contextlib.suppress(OSError):
                self.staging.parent.rmdir()  # .staging/ goes when no other run is learning


def extract(*, task: str, events: list[dict], workspace: Path, run_dir: Path, answer: str, check: str,
            replayer: Replayer, staging: Path, announce: Callable[[], None] = lambda: None) -> Extraction | str:
    """The verified script of this run, or why there is none; `announce` is called before the first replay."""
    if why := replayer.problem():
        return f"scripts cannot be replayed here ({why})"
    steps = work_steps(events, str(workspace))
    if isinstance(steps, str):
        return steps
    before = run_dir / snapshot.FOLDER
    if not before.is_dir():
        return "no copy of the workspace from before the run was kept"
    outputs = snapshot.changes(before, workspace, ignore=programs(steps))
    question = task.rstrip().endswith(ASKS)  # a question's result is its answer, whatever files were touched
    values = answer_values(answer, task) if question or not outputs else []
    if question and not values:
        return "the task asks a question and its answer states no value a script could print again"
    if not outputs and not values:
        return "the run changed no file and its answer holds no value to reproduce"
    if outputs and not values:
        steps = [s for s in steps if not (s.kind == "bash" and not s.programs and READ_ONLY.fullmatch(s.code))]
    trial = _Trial(replayer, before, workspace, outputs=outputs, answer=values, staging=staging,
                   ignore=set(programs(steps)))
    steps = steps[-MAX_STEPS:]
    announce()
    if not steps or not trial.reproduces(build(steps)):
        return f"replaying the run's own steps on the workspace as it was did not reproduce its outputs{trial.said()}"
    for step in list(steps):  # the first steps are the likeliest exploration
        rest = [s for s in steps if s is not step]
        if rest and trial.reproduces(build(rest)):
            steps = rest
    lifter = Lifter(task, steps, existed=set(snapshot.files(before)))
    script = build(steps, lifter)
    if lifter.in_code:
        return (f"a task value ({', '.join(sorted(lifter.in_code))}) sits inside code the run ran as a program (a sed "
                "or awk program, sh -c, eval, SQL): a later task's value there would run as code")
    if not computed(steps, lifter.parameters, set(snapshot.files(before))):
        return "what the run wrote was typed, not computed from the workspace or the task's values"
    if not trial.reproduces(script, [p.value for p in script.parameters], check):
        why = "the check did not pass on" if check else "it did not reproduce"
        return f"the script with the task's values lifted into parameters: {why} the run's outputs{trial.said()}"
    if not check and outputs and trial.constant(script, [p.value for p in script.parameters]):
        return ("the script writes the same outputs whatever its input files hold: a constant, not a procedure "
                "(and no check says it is right)")
    return Extraction(script=script, steps=steps, verified="checked" if check else "reproduced",
                      outputs=sorted(outputs))


def _changed_inputs(root: Path, outputs: set[str], how: str) -> bool:
    """The workspace copy's text files (but those the run created) changed `how`: `digits`, each shifted by one
    (`10.50` -> `21.61`); `lines`, each line after the first (a header) twice. False: nothing changed."""
    changed = False
    for rel in sorted(set(snapshot.files(root)) - outputs):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            text = (root / rel).read_text(encoding="utf-8")
            rows = text.splitlines()
            new = re.sub(r"\d", lambda m: str((int(m[0]) + 1) % 10), text) if how == "digits" else \
                "\n".join(rows[:1] * (len(rows) > 1) + [x for x in rows[len(rows) > 1:] for _ in (0, 1)]) + "\n"
            if rows and new != text:
                (root / rel).write_text(new, encoding="utf-8")
                changed = True
    return changed


def answer_values(answer: str, task: str) -> list[str]:
    """What an answer states that a replay must print again: its numbers and quoted values, other than what the
    task itself says (the file it asked about is a name, not a result)."""
    quoted = re.findall(r"`([^`\n]{1,80})`", answer)
    numbers = re.findall(r"(?<![\w.])-?\d+(?:[.,]\d+)*(?![\w])", answer)
    return list(dict.fromkeys(v for v in [*quoted, *numbers] if v.strip() and v not in task))[:10]


def computed(steps: list[Step], params: list[Parameter], existed: set[str]) -> bool:
    """Whether the steps compute what they write: a program runs, a workspace file is read or changed, or a written
    text comes from the task's values. A file written with text the model typed from what it read is not a
    procedure: its script would write the old answer into the next task."""
    for step in steps:
        if step.kind in ("python", "bash"):
            if step.programs or any(_mentions(step.code, name) for name in existed):
                return True
            if step.kind == "python" and re.search(r"\b(?:open|read_text|listdir|glob|walk|scandir)\b", step.code):
                return True
            if step.kind == "bash" and re.search(r"[*?]|\$\(|<\s*\S", step.code):
                return True
        elif step.kind == "patch" or step.path in existed or (
                any(p.value in step.content for p in params) and _typed(step.content, params) == ""):
            return True
    return False


def _mentions(code: str, path: str) -> bool:
    name = Path(path).name
    return bool(re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", code))


def _typed(content: str, params: list[Parameter]) -> str:
    """What of a written text is neither a task value nor punctuation."""
    for p in sorted(params, key=lambda p: -len(p.value)):
        content = content.replace(p.value, " ")
    return re.sub(r"[\W_]+|\b(?:true|false|null|none)\b", "", content, flags=re.IGNORECASE)
