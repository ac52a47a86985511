"""Wires one invocation together: settings → run folder → model, tools, terminal → agent → outcome. The run folder
is made (and locked) before the model client, the tools and the terminal are imported (seconds): a background run
names its run to the waiting parent as soon as the folder exists."""

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
from typing import TYPE_CHECKING

from ga.cli import warm
from ga.cli.next_steps import summary_line, tell
from ga.cli.pipes import reader_gone
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


def check_start(settings: Settings, *, new: bool = True) -> None:
    """What would stop a run, said before anything starts (a new run's folder made for nothing): a bad
    GA_MODEL_SETTINGS; for a new run, no endpoint; --local's model provisioned."""
    model_settings(settings)
    if not new:
        return
    settings.check_endpoint()
    if settings.model == LOCAL:
        from ga.local.endpoint import ensure_provisioned

        ensure_provisioned(settings)


def open_run(settings: Settings, task: str | None, resume: str | None, given: set[str]) -> tuple[Run, Settings]:
    """A new run, or the run to resume with the settings it started with (ga/tooling/boundary/trust.py); locked."""
    if resume:
        run = Run.open(settings.runs_dir, resume)
        settings = trust.resumed(run, settings, given)
    else:
        run = Run.create(settings.runs_dir, task or "", trust.record(settings))
    settings.check_endpoint()
    run.lock()
    return run, settings


def prepare(run: Run, settings: Settings, *, resumed: bool) -> None:
    """The seed SOPs on a GA_HOME's first run; for a resumed run, what an earlier ga left running is swept."""
    if settings.learn:
        from sop.library import install_seeds

        install_seeds(settings.home)
    if resumed:
        from tools import sweep_run

        sweep_run(run.id)


def run_task(settings: Settings, *, task: str | None, resume: str | None = None, answer: str | None = None,
             quiet: bool = False, given: frozenset[str] = frozenset(), jsonl: bool = False,
             detached: bool = False, piped: Piped | None = None, raw: bool = False) -> Outcome:
    check_start(settings, new=not resume)
    run, settings = open_run(settings, task, resume, set(given))
    if piped is not None:  # the text that came on stdin joins the task (or the answer)
        answer = piped.join(run, answer, settings.context_tokens, resume=bool(resume))
    began = time.monotonic()  # the run's time, not the --local model's first provisioning
    if detached:
        detach.redirect(run)  # the parent returns now; the imports below happen in the background
    if jsonl:
        run.state["jsonl"] = True  # a background resume (`answer`) keeps writing events to the same output
    ui = _sink(jsonl, quiet, raw)
    prepare(run, settings, resumed=bool(resume))
    try:
        if resume and (outcome := _done_again(ui, run, answer, settings, jsonl=jsonl)):
            return outcome
        clear_outbox(run)
        with serving(settings, run, ui.notice) as settings:
            outcome = _drive(run, settings, Heartbeat(ui, run.folder), answer=answer, keep=detached)
            outcome.model, outcome.duration_s = settings.model, round(time.monotonic() - began, 3)
            run.unlock()
            _end(ui, run, outcome, settings, jsonl=jsonl)  # while a --local model serves: learning may need it
            if not jsonl and not quiet:
                ui.info(summary_line(outcome.usage, turns=int(run.state.get("turns") or 0),
                                     seconds=time.monotonic() - began, settings=settings))
    except BaseException as e:
        ui.close()  # the spinner goes, whatever ends the run
        if isinstance(e, ServerUnreachable) and not resume:
            run.unlock()
            run.discard()  # the run never started: leave no folder behind to list or resume
        raise
    finally:
        run.unlock()
    notify_end(run, outcome)  # the very last step: everything the run writes is final by now
    return outcome


def notify_end(run: Run, outcome: Outcome) -> None:
    """GA_NOTIFY, once the run has ended or paused."""
    event = notify.payload(event="pause" if outcome.status == "paused" else "end", run_id=run.id,
                           status=outcome.status, exit_code=outcome.exit_code, state=run.state,
                           answer=outcome.answer, question=outcome.question, usage=asdict(outcome.usage),
                           tool_calls=outcome.tool_calls, run_dir=run.folder)
    notify.send(event, run.folder)


def _end(ui: Terminal | JsonlSink, run: Run, outcome: Outcome, settings: Settings, *, jsonl: bool) -> None:
    """The outcome told, then what the run taught learned; in --jsonl the end event stays the stream's last line."""
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


def _done_again(ui: Terminal | JsonlSink, run: Run, answer: str | None, settings: Settings, *,
                jsonl: bool) -> Outcome | None:
    """A done run resumed with nothing new (no answer, no message in its mailbox): its answer again, not run."""
    from ga.outcome import Outcome

    if run.state.get("status") != "done" or answer is not None:
        return None
    history = run.history()
    if any(m.kind != "stop" for m in Inbox(run, history.mail).pending()):
        return None
    try:  # what the run's end said: its outbox keeps the --json object
        told = json.loads((run.folder / "outbox" / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        told = {}
    told = told if isinstance(told, dict) else {}
    outcome = Outcome(run_id=run.id, status="done", exit_code=0, answer=run.state.get("answer", ""),
                      usage=history.usage, tool_calls=history.tool_calls,
                      model=str(told.get("model") or run.state.get("model") or ""), duration_s=told.get("duration_s"))
    if not jsonl:
        ui.notice(f"run {run.id} is already done; to go on with it, give a follow-up: "
                  f'{invocation()} --resume {run.id} --answer "..." (or --continue "...")')
    _report(ui, run, outcome, settings, jsonl=jsonl)
    return outcome


def _report(ui: Terminal | JsonlSink, run: Run, outcome: Outcome, settings: Settings, *, jsonl: bool) -> None:
    if jsonl:  # the end event carries the outcome
        ui.end(outcome)
    else:
        tell(ui, run, outcome, settings)
    ui.close()
    try:
        if settings.json and not jsonl:
            print(json.dumps(redact_data(outcome.as_json()), ensure_ascii=False), flush=True)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away; the outcome stays on disk and in the outbox
        reader_gone(sys.stdout, say=True)
    sys.stderr.flush()


def _load() -> None:
    """What build_agent imports (seconds: the model client, the tools, memory), done while a local server starts."""
    warm.ready()
    for module in ("ga.agent", "ga.model.client", "memory.hooks", "tools"):
        importlib.import_module(module)


def model_settings(settings: Settings) -> ModelSettings:
    """The model's own behaviour: GA_MODEL_SETTINGS, else the entry of ga/model/models.toml naming it (--local takes
    the small-model one), else none."""
    return settings_for(settings.model, local=settings.model == LOCAL, force=settings.model_settings or None)


def serving(settings: Settings, run: Run, notice: Callable[[str], None]) -> contextlib.AbstractContextManager:
    """The settings to run with, pointing at the embedded model's server for --local (ga.local.endpoint.serving)."""
    if settings.model != LOCAL:
        return contextlib.nullcontext(settings)
    from ga.local.endpoint import serving

    return serving(settings, run.folder / "local-server.log", notice, meanwhile=_load)


def _drive(run: Run, settings: Settings, ui: Heartbeat, *, answer: str | None, keep: bool = False) -> Outcome:
    agent = build_agent(run, settings, ui, answer=answer)
    agent.keep_unstarted = keep  # a background run that cannot reach its server keeps its reason
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)  # as Ctrl-C: the run saved, resumable
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

    run.state.setdefault("context", {})["steps"] = settings.context_steps or "small"
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
    _header(ui, run, settings, behaviour.name, resumed=bool(agent.turns))
    return agent


def _header(ui: Heartbeat, run: Run, settings: Settings, behaviour: str, *, resumed: bool) -> None:
    """The run's first lines: what runs it and how confined, plan mode's limits, the instructions read."""
    from tools import sandbox_problem
    from tools.guard import sandbox
    from tools.guard.sandbox_ports import PORTS_ENV

    why = settings.sandbox_why
    if settings.sandbox and not sandbox.network_allowed():  # the host's localhost is not there: said up front
        shared = os.environ.get(PORTS_ENV, "").strip()
        why = (f"{why}; own network" + (f", host ports {shared}" if shared else ": GA_SANDBOX_PORTS or "
                                        "GA_SANDBOX_NET=1 reach the host's")).lstrip("; ")
    ui.started(run_id=run.id, task=run.state.get("task", ""), model=settings.model, workdir=str(settings.workdir),
               mode=settings.mode, resumed=resumed, model_settings=behaviour, check=settings.check,
               autonomous=settings.autonomous_why, sandbox=settings.sandbox, sandbox_why=why)
    if settings.mode == "plan" and (reason := sandbox_problem()):
        ui.info(f"plan mode: code_run is refused, since its sandbox cannot hold here ({reason}); the file tools can "
                "read")
    elif settings.mode == "plan":
        ui.info("plan mode: code_run runs in the sandbox with the workspace read-only and no network; nothing is "
                "changed")
    if read := run.state.get("agents_md"):  # a resumed run's; a new run's are said as they are read (agents_md.py)
        ui.notice("instructions read: " + ", ".join(read))
