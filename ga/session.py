"""Wires one invocation together: settings → run folder → model, tools, terminal → agent → outcome.

The run folder is made (and locked) before the model client, the tools and the terminal are imported: those take
seconds, and a background run names its run to the waiting parent as soon as the folder exists.
"""

from __future__ import annotations

import dataclasses
import signal
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from ga import detach, notify
from ga.config import Settings
from ga.errors import ConfigError, ServerUnreachable
from ga.liveness import Heartbeat
from ga.local.endpoint import ensure_provisioned, serving
from ga.mailbox import Inbox, clear_outbox, write_outbox
from ga.runs import Run

if TYPE_CHECKING:
    from ga.agent import Outcome
    from ga.jsonl import JsonlSink
    from ga.ui import Terminal

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
             quiet: bool = False, given: frozenset[str] = frozenset(), jsonl: bool = False,
             detached: bool = False) -> Outcome:
    if not resume:  # before a run folder is made for nothing
        settings.check_endpoint()
        ensure_provisioned(settings)
    run, settings = open_run(settings, task, resume, set(given))
    settings.check_endpoint()
    run.lock()
    if detached:
        detach.redirect(run)  # the parent returns now; the imports below happen in the background
    if jsonl:
        run.state["jsonl"] = True  # a background resume (`answer`) keeps writing events to the same output
    ui = _sink(jsonl, quiet)
    if settings.learn:
        from sop.library import install_seeds

        install_seeds(settings.home)  # first run of a GA_HOME: the seed SOPs
    if resume:  # what an earlier ga on this run left running, if its watchdog died too
        from tools import sweep_run

        sweep_run(run.id)
    try:
        outcome = _finished(run, answer) if resume else None
        ran = outcome is None
        if outcome is None:
            clear_outbox(run)
            with serving(settings, run.folder / "local-server.log", ui.notice) as settings:
                outcome = _drive(run, settings, Heartbeat(ui, run.folder), answer=answer)
                run.unlock()
                _end(ui, run, outcome, settings)  # while a --local model still serves: learning may need it
            write_outbox(run, outcome.as_json(), outcome.question)
        else:
            _report(ui, run, outcome, settings)
    except ServerUnreachable:
        _close(ui)
        run.unlock()
        if not resume:
            run.discard()  # the run never started: leave no folder behind to list or resume
        raise
    except BaseException:
        _close(ui)  # the spinner goes, whatever ends the run
        raise
    finally:
        run.unlock()
    if ran:  # the very last step: everything the run writes is final by now
        event = notify.payload(event="pause" if outcome.status == "paused" else "end", run_id=run.id,
                               status=outcome.status, exit_code=outcome.exit_code, state=run.state,
                               answer=outcome.answer, question=outcome.question, usage=asdict(outcome.usage),
                               tool_calls=outcome.tool_calls, run_dir=run.folder)
        notify.send(event, run.folder)
    return outcome


def _end(ui: Terminal | JsonlSink, run: Run, outcome: Outcome, settings: Settings) -> None:
    """The outcome told, and what the run taught learned (its spend counted in the run's usage): on a terminal
    the answer comes first; in --jsonl the end event stays the stream's last line."""
    from memory import learn

    if not hasattr(ui, "end"):
        _report(ui, run, outcome, settings)
    if spent := learn.after_run(settings, run, outcome.status, ui):
        outcome.usage.add(spent)
        run.state["usage"] = asdict(outcome.usage)
        run.save_state()
    if hasattr(ui, "end"):
        _report(ui, run, outcome, settings)


def _sink(jsonl: bool, quiet: bool) -> Terminal | JsonlSink:
    if jsonl:
        from ga.jsonl import JsonlSink

        return JsonlSink()
    from ga.ui import Terminal

    return Terminal(quiet=quiet)


def _finished(run: Run, answer: str | None) -> Outcome | None:
    """A finished run resumed with nothing new to say is reported again, not run."""
    from ga.agent import Outcome

    if run.state.get("status") != "done" or answer is not None:
        return None
    history = run.history()
    if any(m.kind != "stop" for m in Inbox(run, history.mail).pending()):
        return None  # a message waits in its mailbox: the run continues with it
    return Outcome(run_id=run.id, status="done", exit_code=0, answer=run.state.get("answer", ""),
                   usage=history.usage, tool_calls=history.tool_calls)


def _close(ui: Terminal | JsonlSink) -> None:
    if hasattr(ui, "close"):
        ui.close()


def _report(ui: Terminal | JsonlSink, run: Run, outcome: Outcome, settings: Settings) -> None:
    if hasattr(ui, "end"):  # --jsonl: the end event carries the outcome
        ui.end(outcome)
    elif outcome.status == "done":
        if not settings.json:
            ui.answer(outcome.status, outcome.answer)
    else:
        _close(ui)  # what was under way is over: the spinner goes before the outcome is told
        ui.notice(f"{outcome.status}: {outcome.answer}")
        if outcome.status == "paused":
            ui.notice(f'answer with: python run.py answer {run.id} "..."  (or --resume {run.id} --answer "...")')
        elif outcome.status in ("limit", "interrupted", "failed"):
            ui.notice(f"resume with: python run.py --resume {run.id}")
    _close(ui)
    sys.stdout.flush()
    sys.stderr.flush()


def _drive(run: Run, settings: Settings, ui: Heartbeat, *, answer: str | None) -> Outcome:
    from ga.agent import Agent
    from ga.dispatch import Dispatcher
    from ga.llm import OpenAIModel
    from tools import load_tools

    # a retry sends the reply again from the start: the Terminal drops what it streamed of it
    agent = Agent(settings=settings, model=OpenAIModel(settings, on_retry=getattr(ui, "retry", ui.notice)),
                  dispatcher=Dispatcher(load_tools()), run=run, ui=ui,
                  interactive=not settings.autonomous, answer=answer)
    if hasattr(ui, "started"):
        ui.started(run_id=run.id, task=run.state.get("task", ""), model=settings.model, workdir=str(settings.workdir),
                   mode=settings.mode, resumed=bool(agent.turns))
    else:
        ui.info(f"run {run.id} · {settings.model} · {settings.workdir} · {settings.mode} mode")
    # SIGTERM (e.g. a job runner stopping us) is handled like Ctrl-C: the run is saved and resumable
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return agent.start()
    finally:
        signal.signal(signal.SIGTERM, previous)
