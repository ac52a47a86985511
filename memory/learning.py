"""Learning from runs: what the loop reports while it runs (SOP reads and uses, memory writes, the workspace
before its first change), and what happens after.

After a finished run (GA_LEARN on): secrets swept out of whatever memory files the run touched, the ledger of
every SOP it read or ran updated, a one-paragraph archive written, and, when the run is verified (its --check
passed; without one, it ended done with its last calls succeeding), the code that did its work extracted into a
script SOP, kept only when a replay reproduces the run (memory/learn/). No model request is made, so a local
model's cached prompt stays warm. Nothing here can fail the run: every error becomes one terminal line."""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ga.config import Settings
from ga.protocols import UI, ToolOutcome
from ga.runs.folder import Run
from ga.tooling import stamps
from memory.guard import is_memory_path, opened_skill, run_secrets, sanitize, scrub
from memory.index import imported, refresh
from memory.learn import snapshot
from memory.learn.extract import Replayer, extract
from memory.learn.learnt import save_learnt
from memory.learn.outputs import mark_call
from memory.learn.script import resolved
from memory.learn.steps import WORK_TOOLS, calls
from sop import ledger, store
from sop.library import SEEDED_MARK, archive, load, save
from sop.skill import SKILL_FILE
from sop.words import keywords

log = logging.getLogger(__name__)

FINISHED = ("done", "failed", "limit")
"""Statuses that end a run for good; paused and interrupted runs learn when they finish."""


def observe(tool: str, result: ToolOutcome, state: dict, *, settings: Settings, run_id: str, run_dir: Path) -> None:
    """Called for every tool result: note SOP reads (for the ledger), guard and stamp memory writes."""
    mem = state.setdefault("memory", {})
    mem["results"] = mem.get("results", 0) + 1
    if result.is_error:
        return
    path = result.details.get("path")
    if not path:
        return
    real, home = Path(path), settings.home
    if tool == "file_read" and (name := opened_skill(real, home, settings.skills_path)):
        mem.setdefault("read", {}).setdefault(name, str(real))
    elif tool in ("file_write", "file_patch") and is_memory_path(real, home):
        notes = sanitize(real, home=home, run_id=run_id, secrets=run_secrets(run_dir))
        if real.name == SKILL_FILE:
            mem.setdefault("wrote", []).append(real.parent.name)
        with store.locked(home):
            refresh(home, skills_path=settings.skills_path)
        if real == store.index_path(home):  # ga's own: rebuilt just now, whatever was written
            notes.append("memory/index.md is rebuilt by ga from the SOPs after every change, so what you wrote "
                         "there is not kept: save an SOP (sop/<name>/SKILL.md) or a fact (memory/facts.md) instead")
        # the guard may have rewritten the file: the model's next edit must not be refused as "changed on disk"
        with contextlib.suppress(FileNotFoundError):  # the index is removed when it would list nothing
            stamps.remember(state, real, stamps.stamp(real.stat()))
        if notes:
            result.content += "\n[memory: " + "; ".join(notes) + "]"


def before(tool: str, args: dict, state: dict, *, settings: Settings, run_dir: Path) -> list[str]:
    """Before a call runs: the workspace is kept as it was (before the first call that may change it), and a
    program that runs an SOP's script counts as a use of that SOP (returned: the user is told)."""
    if not settings.learn or tool not in WORK_TOOLS:
        return []
    args = args if isinstance(args, dict) else {}
    mem = state.setdefault("memory", {})
    if "snapshot" not in mem:
        mem["snapshot"] = snapshot.take(settings.workdir, run_dir) or "ok"
    if tool != "code_run":
        return []
    code, sop_dir = str(args.get("script", "")), store.sop_dir(settings.home)
    names = list(dict.fromkeys(ran_scripts(code, sop_dir)))
    for name in names:
        mem.setdefault("used", {}).setdefault(name, True)
    if names:  # it may write only what its run wrote (code_run reads this)
        mark_call(code, names, sop_dir, state, settings.workdir / str(args.get("cwd") or "."))
    return names


def ran_scripts(code: str, sop_dir: Path) -> list[str]:
    """The SOPs whose scripts `code` runs: the script as a command, or given to bash, sh or python (naming its path
    in an `echo` or an argument is no use of it)."""
    path = rf"['\"]?{re.escape(str(sop_dir))}/([a-z0-9-]+)/scripts/[\w.-]+"
    return re.findall(rf"(?:^|[;&|(`]|\$\()\s*(?:(?:bash|sh|python3?|exec)\s+(?:-\S+\s+)*)?{path}", code, re.M)


def after_run(settings: Settings, run: Run, status: str, ui: UI, replayer: Replayer | None = None) -> None:
    """Learn from a finished run. Never raises: a failure is one line on the terminal."""
    mem = run.state.setdefault("tool_state", {}).setdefault("memory", {})
    if not settings.learn or status not in FINISHED or mem.get("learned"):
        return
    try:
        report = _learn(settings, run, status, mem, ui=ui, replayer=replayer)
    except KeyboardInterrupt:
        report = {"error": "interrupted"}
        ui.notice(f"memory: learning skipped (interrupted); the run is {status}")
    except Exception as e:  # learning never fails the run
        log.warning("learning from run %s failed", run.id, exc_info=True)
        report = {"error": str(e)}
        ui.notice(f"memory: nothing learned ({e}); the run is {status}")
    else:  # what changed memory on the terminal; the decisions that changed nothing with -v
        shown = report.pop("shown", [])
        for line in report.pop("lines", []):
            if line in shown:
                ui.notice(f"memory: {line}")
            else:
                log.info("%s", line)
    mem["learned"] = True
    run.save_state()
    run.append({"type": "memory", **report})
    shutil.rmtree(run.folder / snapshot.FOLDER, ignore_errors=True)  # the copy served its purpose


def _learn(settings: Settings, run: Run, status: str, mem: dict, *, ui: UI, replayer: Replayer | None) -> dict:
    home, secrets = settings.home, run_secrets(run.folder)
    events = run.events()
    _sweep(home, run, secrets)
    followed = {**dict.fromkeys(mem.get("read", {})), **dict.fromkeys(mem.get("used", {}))}
    checked = bool(run.state.get("check") and run.state.get("verified"))
    lines, shown = _ledger(settings, list(followed), success=status == "done", ran=set(mem.get("used", {})),
                           checked=checked, words=[scrub(k, secrets) for k in keywords(run.state.get("task", ""))])
    store.write_text(store.archive_path(home, run.id), scrub(_archive(run, status, events, mem), secrets))
    report: dict = {"ledger": list(followed)}
    why_not = unverified(run, status, mem) or ("" if replayer else "no sandbox to replay scripts in")
    report["learnt"], line = (why_not, f"no script learnt: {why_not}") if why_not else _extract(
        settings, run, events, mem, replayer=replayer, secrets=secrets,
        announce=lambda: ui.notice("memory: learning from this run… (Ctrl-C skips)"))
    lines.append(line)
    if isinstance(report["learnt"], dict) and report["learnt"]["action"] != "same":
        shown.append(line)
    with store.locked(home):
        refresh(home, skills_path=settings.skills_path)
    report["lines"], report["shown"] = lines, shown
    return report


def unverified(run: Run, status: str, mem: dict) -> str:
    """Why this run's outcome is not verified ('' when it is): learning builds only on verified runs."""
    if status != "done":
        return f"the run ended {status}"
    if run.state.get("check"):
        return "" if run.state.get("verified") else "its check did not pass"
    if failed := run.state.get("last_failed"):  # a call that failed last, or the answer with an output unwritten
        return f"it ended on a failure: {failed}"
    if mem.get("snapshot", "ok") != "ok":
        return mem["snapshot"]
    return ""


def _extract(settings: Settings, run: Run, events: list[dict], mem: dict, *, replayer: Replayer,
             secrets: tuple[str, ...], announce: Callable[[], None]) -> tuple[str | dict, str]:
    """What was learnt (a dict, else why nothing was) and the line that says so."""
    task = run.state.get("task", "")
    found = extract(task=task, events=events, workspace=settings.workdir, run_dir=run.folder,
                    answer=str(run.state.get("answer") or ""), check=run.state.get("check") or "",
                    replayer=replayer, staging=store.sop_dir(settings.home) / ".staging" / run.id, announce=announce)
    if isinstance(found, str):
        return found, f"no script learnt: {found}"
    sop = str(store.sop_dir(settings.home))
    if all(sop in s.code for s in found.steps if s.kind == "bash") and any(s.kind == "bash" for s in found.steps):
        return "followed an SOP's script", "the run ran an SOP's script: its ledger is updated, nothing new to learn"
    # its script ran, more work was needed, and the new steps still run it: a new version; else a new SOP
    kept = {n for st in found.steps if st.kind == "bash" for n in ran_scripts(st.code, store.sop_dir(settings.home))}
    replaces = next((n for n in mem.get("used", {}) if n in kept), "")
    saved = save_learnt(found, home=settings.home, skills_path=settings.skills_path, run_id=run.id, task=task,
                        check=run.state.get("check") or "", secrets=secrets, replaces=replaces,
                        workspace=settings.workdir)
    if isinstance(saved, str):
        return saved, f"no script learnt: {saved}"
    learnt = {"name": saved.skill.name, "action": saved.action, "path": str(saved.skill.path),
              "verified": found.verified, "usage": resolved(saved.skill.metadata.get("usage", ""), saved.skill.folder)}
    verb = {"created": "learnt script", "updated": "updated the script of",
            "same": "the same script again:"}[saved.action]
    proof = "checked" if found.verified == "checked" else "unproven: it reproduced its outputs, no check ran"
    return learnt, (f"{verb} {saved.skill.name} ({proof}) → {saved.skill.folder} (learnt in "
                    f"{saved.skill.metadata.get('learnt_in', settings.workdir)})")


def _sweep(home: Path, run: Run, secrets: tuple[str, ...]) -> None:
    """Memory files changed during the run by other means than the file tools (code_run) get the same guard."""
    since = float(run.state.get("created", time.time()))
    with contextlib.suppress(OSError):  # the seeds ga installed when this run began are ga's, ledger and all
        since = max(since, (store.memory_dir(home) / SEEDED_MARK).stat().st_mtime + 1e-3)
    for root in (store.sop_dir(home), store.memory_dir(home)):
        for path in root.rglob("*") if root.is_dir() else []:
            if path.is_file() and "archive" not in path.relative_to(home).parts and path.stat().st_mtime >= since:
                sanitize(path, home=home, run_id=run.id, secrets=secrets)


def _ledger(settings: Settings, read: list[str], *, success: bool, ran: set[str], checked: bool,
            words: list[str]) -> tuple[list[str], list[str]]:
    """Each SOP the run read records the outcome; a success also teaches it the task's words (how this user asked
    for it), so the next task worded like this one finds it. A script SOP, or an imported one, succeeds only when its
    script ran: reading it proves nothing (an imported SOP read by a run that did the work otherwise would be
    laundered into a proven one). Returns what was recorded, and which of it changed an SOP's standing (flagged,
    archived, trusted again). A learnt script that ran in a run whose check passed is promoted to checked."""
    lines: list[str] = []
    changed: list[str] = []
    if not read:
        return lines, changed
    with store.locked(settings.home):
        lib = load(settings.home, settings.skills_path)
        for name in read:
            skill = lib.get(name)
            if skill is None or skill.origin != "home":
                continue  # external skills are read in place, never written
            if success and name not in ran and ("script" in skill.metadata or imported(skill)):
                continue  # only read: no success to count, no words to learn
            skill.metadata, change = ledger.record(skill.metadata, success=success)
            if success:
                ledger.merge_keywords(skill.metadata, words)
            promoted = success and checked and name in ran and skill.metadata.get("verified") == "reproduced"
            if promoted:
                skill.metadata["verified"] = "checked"
            save(settings.home, skill)
            where = skill.path
            if change == "archived":
                where = archive(settings.home, skill)
            note = {"flagged": " — flagged: failed twice in a row", "archived": f" — archived to {where}",
                    "ok": " — trusted again"}.get(change, "") or (" — its script ran and the run's check passed: "
                                                                  "now checked" if promoted else "")
            lines.append(f"SOP {name}: {'success' if success else 'failure'} recorded "
                         f"({ledger.summary(skill.metadata)}){note}")
            if note:
                changed.append(lines[-1])
    return lines, changed


def _archive(run: Run, status: str, events: list[dict], mem: dict) -> str:
    """L4: one paragraph per run, searchable with `python run.py memory search --runs QUERY`."""
    results = [e for e in events if e.get("type") == "result"]
    tools = ", ".join(f"{name}×{n}" for name, n in Counter(e.get("name") for e in results).most_common())
    failed = sum(1 for e in results if e.get("is_error"))
    written = [args.get("path", "?") for tool, args, _ in calls(events)
               if tool in ("file_write", "file_patch") and args]
    parts = [f"Run {run.id} ({time.strftime('%Y-%m-%d')}, {status}): {run.state.get('task', '')}",
             f"{len(results)} tool calls ({tools or 'none'}), {failed} failed"]
    if mem.get("read"):
        parts.append("SOPs read: " + ", ".join(mem["read"]))
    if written:
        parts.append("files written: " + ", ".join(dict.fromkeys(written)))
    parts.append("answer: " + " ".join(str(run.state.get("message") or "").split())[:300])
    return ". ".join(parts) + "\n"
