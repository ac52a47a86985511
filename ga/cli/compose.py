"""Wires one invocation together: settings → run folder → model, tools, terminal → agent → outcome.

The run folder is made (and locked) before the model client, the tools and the terminal are imported: those take
seconds, and a background run names its run to the waiting parent as soon as the folder exists.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from ga.cli import warm
from ga.cli.pipes import reader_gone
from ga.cli.plan import carry_out, plan_header
from ga.cli.summary import summary_line
from ga.config import Settings
from ga.errors import ServerUnreachable
from ga.invocation import invocation
from ga.jobs import notify
from ga.model.settings import ModelSettings, settings_for
from ga.runs import detach
from ga.runs.folder import Run
from ga.runs.liveness import Heartbeat
from ga.runs.mailbox import Inbox, clear_outbox, write_outbox
from ga.tooling.boundary import trust
from ga.tooling.redact import redact_data

if TYPE_CHECKING:
    from ga.agent import Agent
    from ga.cli.jsonl import JsonlSink
    from ga.cli.piped import Piped
    from ga.cli.terminal import Terminal
    from ga.outcome import Outcome

LOCAL = "local"
"""The model name of the embedded model (ga.local.endpoint.LOCAL): its module is imported for --local only."""
def open_run(settings: Settings, task: str | None, resume: str | None, given: set[str]) -> tuple[Run, Settings]:
    """A new run, or the run to resume with the settings it started with (ga/tooling/boundary/trust.py)."""
    if not resume:
        return Run.create(settings.runs_dir, task or "", trust.record(settings)), settings
    run = Run.open(settings.runs_dir, resume)
    return run, trust.resumed(run, settings, given)


def run_task(settings: Settings, *, task: str | None, resume: str | None = None, answer: str | None = None,
             quiet: bool = False, given: frozenset[str] = frozenset(), jsonl: bool = False,
             detached: bool = False, piped: Piped | None = None, raw: bool = False) -> Outcome:
    model_settings(settings)  # a bad GA_MODEL_SETTINGS is said before anything starts
    if not resume:  # before a run folder is made for nothing
        settings.check_endpoint()
        if settings.model == LOCAL:
            from ga.local.endpoint import ensure_provisioned

            ensure_provisioned(settings)
    run, settings = open_run(settings, task, resume, set(given))
    settings.check_endpoint()
    run.lock()
    if piped is not None:  # the text that came on stdin joins the task (or the answer); a long one is saved
        if resume:
            answer = piped.message(answer or "", run.folder, settings.context_tokens)
        else:
            given = run.state.get("task", "")
            run.state["task"] = piped.message(given, run.folder, settings.context_tokens)
            what = "" if piped.is_message else f" [with {len(piped.data):,} bytes piped{', cut' if piped.cut else ''}]"
            run.state["shown_task"] = (given if not piped.is_message else run.state["task"])[:500] + what
            run.save_state()
    began = time.monotonic()  # the run's time, not the --local model's first provisioning
    if detached:
        detach.redirect(run)  # the parent returns now; the imports below happen in the background
    if jsonl:
        run.state["jsonl"] = True  # a background resume (`answer`) keeps writing events to the same output
    ui = _sink(jsonl, quiet, raw)
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
            with _serving(settings, run.folder / "local-server.log", ui.notice) as settings:
                run.state.setdefault("context", {})["steps"] = settings.context_steps or "small"
                outcome = _drive(run, settings, Heartbeat(ui, run.folder), answer=answer, keep=detached)
                outcome.model, outcome.duration_s = settings.model, round(time.monotonic() - began, 3)
                run.unlock()
                _end(ui, run, outcome, settings, jsonl=jsonl)  # while a --local model serves: learning may need it
                if not jsonl and not quiet:
                    ui.info(summary_line(outcome.usage, turns=int(run.state.get("turns") or 0),
                                         seconds=time.monotonic() - began, settings=settings))
        else:  # a done run resumed with nothing new: its answer again, and why nothing ran
            if not jsonl:
                ui.notice(f"run {run.id} is already done; to go on with it, give a follow-up: "
                          f'{invocation()} --resume {run.id} --answer "..." (or --continue "...")')
            _report(ui, run, outcome, settings, jsonl=jsonl)
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
        notify_end(run, outcome)
    return outcome


def notify_end(run: Run, outcome: Outcome) -> None:
    """GA_NOTIFY, once the run has ended or paused."""
    event = notify.payload(event="pause" if outcome.status == "paused" else "end", run_id=run.id,
                           status=outcome.status, exit_code=outcome.exit_code, state=run.state,
                           answer=outcome.answer, question=outcome.question, usage=asdict(outcome.usage),
                           tool_calls=outcome.tool_calls, run_dir=run.folder)
    notify.send(event, run.folder)


def _end(ui: Terminal | JsonlSink, run: Run, outcome: Outcome, settings: Settings, *, jsonl: bool) -> None:
    """The outcome told, and what the run taught learned (its spend counted in the run's usage): on a terminal
    the answer comes first; in --jsonl the end event stays the stream's last line."""
    if not jsonl:  # told (--json's object printed) before learning, which may take a while or be killed
        _report(ui, run, outcome, settings, jsonl=jsonl)
    write_outbox(run, outcome.as_json(), outcome.question)
    learn_from(ui, run, outcome, settings)
    if jsonl:
        _report(ui, run, outcome, settings, jsonl=jsonl)


def learn_from(ui: Terminal | JsonlSink, run: Run, outcome: Outcome, settings: Settings) -> None:
    """What the run taught, learned (memory/learning.py): no model request, so no spend and no evicted prefix."""
    if run.gone:
        return  # GA_HOME went with the run folder: nothing to learn into
    from memory.learn.replay import SandboxReplayer
    from memory.learning import after_run
    from tools import code_run, sandbox_problem

    replayer = SandboxReplayer(settings, run, code_run.SPEC, sandbox_problem) if settings.learn else None
    after_run(settings, run, outcome.status, ui, replayer=replayer)


def _sink(jsonl: bool, quiet: bool, raw: bool = False) -> Terminal | JsonlSink:
    if jsonl:
        from ga.cli.jsonl import JsonlSink

        return JsonlSink()
    from ga.cli import logs
    from ga.cli.terminal import Terminal

    terminal = Terminal(quiet=quiet, raw=raw)
    logs.show_on(terminal.log_line)  # above the spinners, not through them
    return terminal


def _finished(run: Run, answer: str | None) -> Outcome | None:
    """A finished run resumed with nothing new to say is reported again, not run."""
    from ga.outcome import Outcome

    if run.state.get("status") != "done" or answer is not None:
        return None
    history = run.history()
    if any(m.kind != "stop" for m in Inbox(run, history.mail).pending()):
        return None  # a message waits in its mailbox: the run continues with it
    try:  # what the run's end said: its outbox keeps the --json object
        told = json.loads((run.folder / "outbox" / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        told = {}
    told = told if isinstance(told, dict) else {}
    return Outcome(run_id=run.id, status="done", exit_code=0, answer=run.state.get("answer", ""),
                   usage=history.usage, tool_calls=history.tool_calls,
                   model=str(told.get("model") or run.state.get("model") or ""), duration_s=told.get("duration_s"))


def _close(ui: Terminal | JsonlSink) -> None:
    ui.close()


def _report(ui: Terminal | JsonlSink, run: Run, outcome: Outcome, settings: Settings, *, jsonl: bool) -> None:
    if jsonl:  # the end event carries the outcome
        ui.end(outcome)
    elif outcome.status == "done":
        if not settings.json:
            ui.answer(outcome.status, outcome.answer)
            if settings.mode == "plan":
                ui.info(carry_out())
        if outcome.verified is False and settings.mode != "plan":  # a plan's refused write is expected there
            ui.notice(f"not verified: {_unverified(run, settings)}", error=True)
    else:
        _close(ui)  # what was under way is over: the spinner goes before the outcome is told
        said = outcome.answer  # "interrupted: Interrupted by Ctrl-C" would say it twice
        ui.notice(said if said.lower().startswith(outcome.status) else f"{outcome.status}: {said}", error=True)
        if outcome.status == "paused" and outcome.question is not None:
            ui.hint(f'answer with: {invocation()} answer {run.id} "..."  (or --resume {run.id} --answer "...")')
        elif outcome.status == "paused":  # at an approval: only a human at a terminal can give it
            ui.hint(f"resume on a terminal to be asked again: {invocation()} --resume {run.id}")
        elif (outcome.status in ("limit", "interrupted", "failed") and f"--resume {run.id}" not in said
              and "Try another model" not in said):  # the same model resumed would fail the same way
            ui.hint(f"resume with: {invocation()} --resume {run.id}")
    _close(ui)
    try:
        if settings.json and not jsonl:
            print(json.dumps(redact_data(outcome.as_json()), ensure_ascii=False), flush=True)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away; the outcome stays on disk and in the outbox
        reader_gone(sys.stdout, say=True)
    sys.stderr.flush()


def _unverified(run: Run, settings: Settings) -> str:
    if settings.check:
        return f"the check `{settings.check}` did not pass"
    return f"the last step failed ({run.state.get('last_failed') or 'a tool call'}) and nothing succeeded after it"


def _load() -> None:
    """What build_agent imports (seconds: the model client, the tools, memory), done while a local server starts."""
    warm.ready()
    for module in ("ga.agent", "ga.model.client", "memory.hooks", "tools"):
        importlib.import_module(module)


def model_settings(settings: Settings) -> ModelSettings:
    """The model's own behaviour: GA_MODEL_SETTINGS, else the entry of ga/model/models.toml naming it (--local takes
    the small-model one), else none."""
    return settings_for(settings.model, local=settings.model == LOCAL, force=settings.model_settings or None)


def _serving(settings: Settings, log: Path, notice: Callable[[str], None]) -> contextlib.AbstractContextManager:
    """The settings to run with, pointing at the embedded model's server for --local (ga.local.endpoint.serving)."""
    if settings.model != LOCAL:
        return contextlib.nullcontext(settings)
    from ga.local.endpoint import serving

    return serving(settings, log, notice, meanwhile=_load)


def _drive(run: Run, settings: Settings, ui: Heartbeat, *, answer: str | None, keep: bool = False) -> Outcome:
    agent = build_agent(run, settings, ui, answer=answer)
    agent.keep_unstarted = keep  # a background run that cannot reach its server keeps its reason
    # SIGTERM (e.g. a job runner stopping us) is handled like Ctrl-C: the run is saved and resumable
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return agent.start()
    finally:
        signal.signal(signal.SIGTERM, previous)


def build_agent(run: Run, settings: Settings, ui: Heartbeat, *, answer: str | None) -> Agent:
    """The loop over this run, wired to the model, the tools and memory; the run's header is said."""
    from ga.agent import Agent

    warm.ready()  # the SDK's background import (ga/cli/warm.py) is done before this thread imports it
    from ga.model.client import OpenAIModel
    from ga.tooling.dispatch import Dispatcher
    from memory.hooks import RunMemory
    from tools import load_tools
    from tools.guard import sandbox
    from tools.guard.sandbox_ports import PORTS_ENV

    behaviour = model_settings(settings)
    run.state["model_settings"] = behaviour.name
    # a retry sends the reply again from the start: the Terminal drops what it streamed of it
    model = OpenAIModel(settings, on_retry=ui.retry, model_settings=behaviour, http=warm.http_client())
    if behaviour.action_format == "bash":
        from ga.model.text_actions import TextActions

        model = TextActions(model)
    floors = {"file_read": {"count": behaviour.min_read_lines}} if behaviour.min_read_lines else None
    dispatcher = Dispatcher(load_tools(), drop_echoed=behaviour.drop_echoed_arguments,
                            repairs=behaviour.tool_repairs, floors=floors)
    agent = Agent(settings=settings, model=model, run=run, ui=ui, interactive=not settings.autonomous,
                  dispatcher=dispatcher, answer=answer,
                  memory=RunMemory(settings, run_id=run.id, run_dir=run.folder, whole_sops=behaviour.whole_sops),
                  model_settings=behaviour)
    why = settings.sandbox_why
    if settings.sandbox and not sandbox.network_allowed():  # the host's localhost is not there: said up front
        shared = os.environ.get(PORTS_ENV, "").strip()
        why = (f"{why}; own network" + (f", host ports {shared}" if shared else ": GA_SANDBOX_PORTS or "
                                        "GA_SANDBOX_NET=1 reach the host's")).lstrip("; ")
    ui.started(run_id=run.id, task=run.state.get("task", ""), model=settings.model, workdir=str(settings.workdir),
               mode=settings.mode, resumed=bool(agent.turns), model_settings=behaviour.name, check=settings.check,
               autonomous=settings.autonomous_why, sandbox=settings.sandbox, sandbox_why=why)
    if settings.mode == "plan":
        ui.info(plan_header())  # whether code may look, and how confined
    if read := run.state.get("agents_md"):  # a resumed run's; a new run's are said as they are read (agents_md.py)
        ui.notice("instructions read: " + ", ".join(read))
    return agent
