"""Wires one invocation together: settings → run folder → model, tools, terminal → agent → outcome."""

from __future__ import annotations

import dataclasses
import signal
import sys
from pathlib import Path

from ga.agent import Agent, Outcome
from ga.config import Settings
from ga.dispatch import Dispatcher
from ga.errors import ConfigError
from ga.llm import OpenAIModel
from ga.local.endpoint import ensure_provisioned, serving
from ga.runs import Run
from ga.ui import Terminal
from memory import learn
from sop.library import install_seeds
from tools import load_tools

KEPT = ("workdir", "model", "mode", "sandbox", "allow_paths", "learn")
"""Settings a resumed run keeps from its first invocation unless its flags are given again: a resume never
silently leaves plan mode or the sandbox."""


def open_run(settings: Settings, task: str | None, resume: str | None, given: set[str]) -> tuple[Run, Settings]:
    if not resume:
        meta = {k: getattr(settings, k) for k in KEPT}
        meta["allow_paths"] = [str(p) for p in settings.allow_paths]
        return Run.create(settings.runs_dir, task or "", meta), settings
    run = Run.open(settings.runs_dir, resume)
    changes = {k: run.state[k] for k in KEPT if k not in given and run.state.get(k) not in (None, "")}
    if "allow_paths" in changes:
        changes["allow_paths"] = [Path(p) for p in changes["allow_paths"]]
    if "workdir" in changes:
        changes["workdir"] = Path(changes["workdir"])
        if not changes["workdir"].is_dir():
            raise ConfigError(f"Run {resume} worked in {changes['workdir']}, which no longer exists: pass --workdir.")
    run.state.update({k: v for k, v in changes.items() if k in ("mode", "model", "sandbox")})
    return run, dataclasses.replace(settings, **changes)


def run_task(settings: Settings, *, task: str | None, resume: str | None = None, answer: str | None = None,
             quiet: bool = False, given: frozenset[str] = frozenset()) -> Outcome:
    terminal = Terminal(quiet=quiet)
    if not resume:  # before a run folder is made for nothing
        settings.check_endpoint()
        ensure_provisioned(settings)
    run, settings = open_run(settings, task, resume, set(given))
    settings.check_endpoint()
    if settings.learn:
        install_seeds(settings.home)  # first run of a GA_HOME: the seed SOPs
    run.lock()
    try:
        with serving(settings, run.folder / "local-server.log", terminal.notice) as settings:
            try:
                outcome = _drive(run, settings, terminal, resume=resume, answer=answer)
            finally:
                run.unlock()
            _show(outcome, run, settings, terminal)
            # after the answer, before the run's files are final, and while a --local model still serves
            learn.after_run(settings, run, outcome.status, terminal)
    finally:
        run.unlock()
    sys.stderr.flush()
    return outcome


def _show(outcome: Outcome, run: Run, settings: Settings, terminal: Terminal) -> None:
    if outcome.status == "done":
        if not settings.json:
            terminal.answer(outcome.status, outcome.answer)
    else:
        terminal.notice(f"{outcome.status}: {outcome.answer}")
        if outcome.status in ("paused", "limit", "interrupted", "failed"):
            terminal.notice(f"resume with: python run.py --resume {run.id}"
                            + (' --answer "..."' if outcome.status == "paused" else ""))


def _drive(run: Run, settings: Settings, terminal: Terminal, *, resume: str | None, answer: str | None) -> Outcome:
    if resume and run.state.get("status") == "done" and answer is None:
        history = run.history()
        return Outcome(run_id=run.id, status="done", exit_code=0, answer=run.state.get("answer", ""),
                       usage=history.usage, tool_calls=history.tool_calls)
    agent = Agent(settings=settings, model=OpenAIModel(settings, on_retry=terminal.notice),
                  dispatcher=Dispatcher(load_tools()), run=run, ui=terminal,
                  interactive=not settings.autonomous, answer=answer)
    terminal.err.print(f"[dim]run {run.id} · {settings.model} · {settings.workdir} · {settings.mode} mode[/]")
    # SIGTERM (e.g. a job runner stopping us) is handled like Ctrl-C: the run is saved and resumable
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return agent.start()
    finally:
        signal.signal(signal.SIGTERM, previous)
