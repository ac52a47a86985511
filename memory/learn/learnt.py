"""A learnt script saved as an SOP: `<name>/SKILL.md` (one usage line, this run's values as the example, the
check) beside `<name>/scripts/`. Named and described from the task in code; the same program learnt again (its
parameters aside) updates the SOP it already is rather than adding a copy."""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ga.tooling.redact import MARK
from memory.guard import scrub
from memory.learn.extract import Extraction
from memory.learn.outputs import writes_of
from sop import ledger, store
from sop.library import Library, load, save
from sop.skill import MAX_DESCRIPTION, Skill
from sop.words import STOPWORDS, keywords

SCRIPTS = "scripts"
NAME_WORDS = 4
MAX_TASK_CHARS = 300


@dataclass(kw_only=True)
class Learnt:
    skill: Skill
    action: str
    """created, updated (a new version of the same SOP's script) or same (this program is already an SOP)."""


def fingerprint(extraction: Extraction) -> str:
    """The program apart from its parameters' names: two runs of one procedure on other values match."""
    text = "\0".join(f"{name}\0{body}" for name, body in sorted(extraction.script.files.items()))
    for i, p in enumerate(extraction.script.parameters, 1):
        text = re.sub(rf"\b{re.escape(p.name)}\b", f"P{i}", text)
    return hashlib.sha256(re.sub(r"\s+", " ", text).encode()).hexdigest()[:16]


def save_learnt(extraction: Extraction, *, home: Path, skills_path: list[Path], run_id: str, task: str,
                check: str, secrets: tuple[str, ...], replaces: str = "",
                workspace: Path | None = None) -> Learnt | str:
    """Save the script as an SOP (under the memory lock, against a fresh read of the library). `replaces`: the SOP
    this run followed and changed, whose script this one becomes. A string says why nothing was saved."""
    for name, text in extraction.script.files.items():
        if scrub(text, secrets) != text or MARK in text:  # MARK: the trajectory had a secret there
            return f"the script would hold a secret ({name}); not kept"
    mark = fingerprint(extraction)
    words = [scrub(k, secrets) for k in keywords(task)]
    with store.locked(home):
        lib = load(home, skills_path)
        same = next((s for s in lib.own() if s.metadata.get("script_hash") == mark), None)
        if same is not None:
            same.metadata = ledger.stamp(same.metadata, run_id=run_id, source="learnt", keywords=words)
            save(home, same)
            return Learnt(skill=same, action="same")
        old = lib.get(replaces) if replaces else None
        old = old if old is not None and old.origin == "home" and "script" in old.metadata else None
        name = old.name if old is not None else _name(task, extraction, lib)
        folder = store.sop_dir(home) / name
        skill = Skill(name=name, description=scrub(_description(task, extraction), secrets),
                      body=scrub(_body(task, run_id, extraction, check), secrets),
                      metadata=dict(old.metadata) if old is not None else {})
        skill.metadata.update(script=f"{SCRIPTS}/{extraction.script.entry}", script_hash=mark,
                              script_sha256=ledger.scripts_digest(extraction.script.files),
                              verified=extraction.verified, usage=extraction.script.command(SCRIPTS),
                              writes=writes_of(extraction))
        if workspace is not None:  # where it was learnt: said when learnt, kept for `memory show`
            skill.metadata.setdefault("learnt_in", str(workspace))
        skill.metadata = ledger.stamp(skill.metadata, run_id=run_id, source="learnt", keywords=words)
        _write_scripts(folder, extraction)
        save(home, skill)
    return Learnt(skill=skill, action="updated" if old is not None else "created")


def _write_scripts(folder: Path, extraction: Extraction) -> None:
    scripts = store.private_dir(store.private_dir(folder) / SCRIPTS)
    for stale in scripts.iterdir():
        if stale.is_file() and stale.name not in extraction.script.files:
            stale.unlink()
        elif stale.is_dir():
            shutil.rmtree(stale)
    for name, text in extraction.script.files.items():
        store.write_text(scripts / name, text)


def _name(task: str, extraction: Extraction, lib: Library) -> str:
    """Lowercase words of the task that are not its values (what it does, not on what): csv-column-sum."""
    values = {w.lower() for p in extraction.script.parameters for w in re.findall(r"[A-Za-z]+", p.value)}
    words = [w for w in re.findall(r"[a-z]+", task.lower()) if len(w) > 2 and w not in STOPWORDS
             and w not in values]
    base = "-".join(list(dict.fromkeys(words))[:NAME_WORDS]) or "learnt-script"
    name, n = base[:56].strip("-"), 2
    while lib.get(name) is not None:
        name, n = f"{base[:52].strip('-')}-{n}", n + 1
    return name


def _description(task: str, extraction: Extraction) -> str:
    """The task with its values replaced by the parameters' names: what any task of this kind says."""
    text = " ".join(task.split())
    for p in sorted(extraction.script.parameters, key=lambda p: -len(p.value)):
        text = re.sub(rf"(?<![\w.-]){re.escape(p.value)}(?![\w-])", p.name, text)
    return f"Script that does: {_clipped(text)}"[:MAX_DESCRIPTION]


def _clipped(text: str) -> str:
    return text if len(text) <= MAX_TASK_CHARS else text[:MAX_TASK_CHARS - 1] + "…"


def _body(task: str, run_id: str, extraction: Extraction, check: str) -> str:
    script = extraction.script
    example = script.command(SCRIPTS, [p.value for p in script.parameters])
    task_line = _clipped(" ".join(task.split()))
    proof = (f"passed the run's check `{check}`" if extraction.verified == "checked" else
             "reproduced the run's outputs" + (f" ({', '.join(extraction.outputs[:5])})" if extraction.outputs else ""))
    lines = [f"Run it with code_run (type bash), putting this task's values in place of the names (`{SCRIPTS}/` is "
             "the folder next to this SKILL.md; give its full path):", "", f"    {script.command(SCRIPTS)}", "",
             f'Learnt from the task "{task_line}" (run {run_id}), where',
             f"`{example}` {proof} on a copy of the workspace as it was before the run."]
    if check:
        lines.append(f"Check: `{check}`")
    return "\n".join(lines) + "\n"
