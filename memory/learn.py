"""Learning from runs: what the loop reports while it runs (SOP reads, memory writes), and what happens after.

After a finished run (GA_LEARN on): secrets swept out of whatever memory files the run touched, the ledger of
every SOP it read updated, a one-paragraph archive written, and — when objective signals say the run taught
something — one distillation request. Nothing here can fail the run: every error becomes one terminal line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import time
from collections import Counter
from pathlib import Path

from ga.config import Settings
from ga.protocols import UI, ToolOutcome, Usage
from ga.runs.folder import Run
from ga.tooling import stamps
from memory import distill
from memory.guard import is_memory_path, opened_skill, run_secrets, sanitize, scrub
from memory.index import refresh
from sop import ledger, retrieval, store
from sop.library import archive, load, save
from sop.skill import SKILL_FILE
from sop.words import keywords

log = logging.getLogger(__name__)

FINISHED = ("done", "failed", "limit")
"""Statuses that end a run for good; paused and interrupted runs learn when they finish."""
MIN_CALLS = 3
"""A done run with fewer tool calls, no recovered failure and no human correction teaches nothing reusable."""


def observe(tool: str, result: ToolOutcome, state: dict, *, settings: Settings, run_id: str, run_dir: Path) -> None:
    """Called for every tool result: note SOP reads (for the ledger), guard and stamp memory writes."""
    mem = state.setdefault("memory", {})
    mem["results"] = mem.get("results", 0) + 1
    if result.is_error:
        if mem.get("read"):  # trouble while following an SOP: the run is worth distilling
            mem["errors_after_read"] = mem.get("errors_after_read", 0) + 1
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


def after_run(settings: Settings, run: Run, status: str, ui: UI) -> Usage | None:
    """Learn from a finished run; what the distillation request spent, if one was answered. Never raises: a
    failure is one line on the terminal."""
    mem = run.state.setdefault("tool_state", {}).setdefault("memory", {})
    if not settings.learn or status not in FINISHED or mem.get("learned"):
        return None
    try:
        report = _learn(settings, run, status, mem)
    except KeyboardInterrupt:
        report = {"error": "interrupted"}
        ui.notice(f"memory: learning skipped (interrupted); the run is {status}")
    except Exception as e:  # a failed distillation never fails the run
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
    return Usage(**report["usage"]) if "usage" in report else None


def _learn(settings: Settings, run: Run, status: str, mem: dict) -> dict:
    home, secrets = settings.home, run_secrets(run.folder)
    events = run.events()
    _sweep(home, run, secrets)
    lines, shown = _ledger(settings, mem.get("read", {}), success=status == "done",
                           words=[scrub(k, secrets) for k in keywords(run.state.get("task", ""))])
    store.write_text(store.archive_path(home, run.id), scrub(_archive(run, status, events, mem), secrets))
    report: dict = {"ledger": list(mem.get("read", {}))}
    why_not = _no_distillation(status, events, mem)
    if why_not:
        lines.append(why_not)
        report["distilled"] = why_not
    else:
        lines.append(_distill(settings, run, status, events, secrets=secrets, report=report))
        if isinstance(report.get("distilled"), dict) and report["distilled"]["action"] != "covered":
            shown.append(lines[-1])  # an SOP saved or changed
    with store.locked(home):
        refresh(home, skills_path=settings.skills_path)
    report["lines"], report["shown"] = lines, shown
    return report


def _sweep(home: Path, run: Run, secrets: tuple[str, ...]) -> None:
    """Memory files changed during the run by other means than the file tools (code_run) get the same guard."""
    since = float(run.state.get("created", time.time()))
    for root in (store.sop_dir(home), store.memory_dir(home)):
        for path in root.rglob("*") if root.is_dir() else []:
            if path.is_file() and "archive" not in path.relative_to(home).parts and path.stat().st_mtime >= since:
                sanitize(path, home=home, run_id=run.id, secrets=secrets)


def _ledger(settings: Settings, read: dict[str, str], *, success: bool,
            words: list[str]) -> tuple[list[str], list[str]]:
    """Each SOP the run read records the outcome; a success also teaches it the task's words (how this user asked
    for it), so the next task worded like this one finds it. Returns what was recorded, and which of it changed an
    SOP's standing (flagged, archived, trusted again)."""
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
            skill.metadata, change = ledger.record(skill.metadata, success=success)
            if success:
                ledger.merge_keywords(skill.metadata, words)
            save(settings.home, skill)
            where = skill.path
            if change == "archived":
                where = archive(settings.home, skill)
            note = {"flagged": " — flagged: failed twice in a row", "archived": f" — archived to {where}",
                    "ok": " — trusted again"}.get(change, "")
            lines.append(f"SOP {name}: {'success' if success else 'failure'} recorded "
                         f"({ledger.summary(skill.metadata)}){note}")
            if note:
                changed.append(lines[-1])
    return lines, changed


def _facts(events: list[dict]) -> dict:
    results = [e for e in events if e.get("type") == "result"]
    errors = [i for i, e in enumerate(results) if e.get("is_error")]
    recovered = bool(errors) and any(not e.get("is_error") for e in results[errors[0] + 1:])
    human = any(e.get("from") == "human" for e in events) or any(
        e.get("name") == "ask_user" and not e.get("is_error") for e in results)
    after_calls = events[max((i for i, e in enumerate(events) if e.get("type") == "result"), default=-1) + 1:]
    doubted = any(e.get("type") == "nudge" and e.get("kind") == "doubt" for e in after_calls)
    return {"calls": len(results), "errors": len(errors), "recovered": recovered, "human": human,
            "last_failed": bool(results) and bool(results[-1].get("is_error")), "doubted": doubted,
            "tools": Counter(e.get("name") for e in results)}


def _no_distillation(status: str, events: list[dict], mem: dict) -> str:
    """Why this run is not distilled ('' when it should be)."""
    facts = _facts(events)
    if status != "done":
        return f"no SOP from a run that ended {status}"
    if mem.get("read") and not mem.get("errors_after_read"):
        return f"followed SOP {', '.join(mem['read'])} without trouble: ledger updated, nothing new to distil"
    if mem.get("wrote"):
        return f"the run saved its own SOP ({', '.join(dict.fromkeys(mem['wrote']))}); no distillation"
    if facts["last_failed"] and not facts["human"]:  # a model may call it done after failing: nothing verified
        return "the run's last tool call failed: nothing verified to distil"
    if facts["doubted"]:  # "I need more information to assist you", said twice
        return "the final answer was given again after ga doubted it: nothing verified to distil"
    if facts["calls"] < MIN_CALLS and not facts["recovered"] and not facts["human"]:
        return f"nothing to distil from {facts['calls']} tool call(s)"
    return ""


def _distill(settings: Settings, run: Run, status: str, events: list[dict], *, secrets: tuple[str, ...],
             report: dict) -> str:
    from ga.model.client import OpenAIModel  # only when a distillation really happens

    task = run.state.get("task", "")
    lib = load(settings.home, settings.skills_path)
    closest = [s for s, _ in retrieval.relevant(lib.skills, task, home=settings.home, floor=0, limit=distill.CLOSEST)]
    facts = _facts(events)
    outcome = (f"{status} after {facts['calls']} tool calls ({facts['errors']} failed). "
               f"Final answer: {run.state.get('answer', '')[:500]}")
    messages = distill.request(task, scrub(outcome, secrets), scrub(compact(events), secrets), closest,
                               settings.home)
    # the client's own timeout a little later than the abandon below, so the user reads one cause, the same each time
    model = OpenAIModel(dataclasses.replace(settings, request_timeout=settings.distill_timeout + 5, retries=0))
    try:
        reply = distill.ask(model, messages, settings.distill_timeout)
        decision = distill.parse_reply(reply.content)
        saved = distill.apply(decision, home=settings.home, skills_path=settings.skills_path, run_id=run.id,
                              task=task, secrets=secrets)
    except distill.DistillError as e:
        report["distilled"] = f"refused: {e}"
        return f"distillation gave nothing usable ({e}); nothing saved, the run is {status}"
    report["usage"] = dataclasses.asdict(reply.usage)
    if saved is None:
        report["distilled"] = "nothing"
        return "nothing new worth an SOP in this run"
    report["distilled"] = {"name": saved.skill.name, "action": saved.action, "path": str(saved.skill.path)}
    verb = {"created": "saved new SOP", "updated": "updated SOP", "merged": "merged into existing SOP",
            "covered": "already covered by external skill"}[saved.action]
    return f"{verb} {saved.skill.name} → {saved.skill.path}"


def compact(events: list[dict], limit: int = distill.TRAJECTORY_CHARS) -> str:
    """The run as short lines: what the model said and called, and the first line of each result."""
    lines = []
    for e in events:
        if e.get("type") == "message" and e["message"].get("role") == "assistant":
            message = e["message"]
            if text := " ".join((message.get("content") or "").split()):
                lines.append(f"assistant: {text[:300]}")
            for call in message.get("tool_calls") or []:
                lines.append(f"  call {call['function']['name']}({str(call['function'].get('arguments'))[:300]})")
        elif e.get("type") == "result":
            first = " ".join(str(e.get("content", "")).split())[:200]
            lines.append(f"  {'FAILED' if e.get('is_error') else 'ok'}: {first}")
        elif e.get("type") == "message" and e["message"].get("role") == "user" and lines:
            lines.append(f"user: {' '.join(str(e['message'].get('content')).split())[:200]}")
    text = "\n".join(lines)
    if len(text) > limit:
        text = f"{text[: limit // 3]}\n[… middle of the run left out …]\n{text[-(limit - limit // 3):]}"
    return text


def _archive(run: Run, status: str, events: list[dict], mem: dict) -> str:
    """L4: one paragraph per run, searchable with `python run.py memory search --runs QUERY`."""
    facts = _facts(events)
    tools = ", ".join(f"{name}×{n}" for name, n in facts["tools"].most_common())
    written = []
    for e in events:
        message = e.get("message") if e.get("type") == "message" else None
        for call in (message or {}).get("tool_calls") or []:
            if call["function"]["name"] in ("file_write", "file_patch"):
                try:
                    written.append(json.loads(call["function"]["arguments"]).get("path", "?"))
                except (json.JSONDecodeError, RecursionError, TypeError, AttributeError):
                    continue
    parts = [f"Run {run.id} ({time.strftime('%Y-%m-%d')}, {status}): {run.state.get('task', '')}",
             f"{facts['calls']} tool calls ({tools or 'none'}), {facts['errors']} failed"]
    if mem.get("read"):
        parts.append("SOPs read: " + ", ".join(mem["read"]))
    if written:
        parts.append("files written: " + ", ".join(dict.fromkeys(written)))
    parts.append("answer: " + " ".join(str(run.state.get("message") or "").split())[:300])
    return ". ".join(parts) + "\n"
