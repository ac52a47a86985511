"""What a tool is written against: its spec, the context it runs in, and the result it returns."""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ga.config import Settings
from ga.protocols import UI, Memory
from ga.tooling.boundary.protected import admit
from ga.tooling.budget import RESULTS_CHARS
from ga.tooling.permissions import SideEffect, confine
from ga.tooling.redact import redact, redact_data

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

log = logging.getLogger(__name__)

_NOT_SHOWN = frozenset({"additionalProperties"})
"""Schema keywords left out of what the model reads: every tool refuses unknown parameters, and the properties listed
say which exist (llama.cpp's grammar also treats a missing additionalProperties as closed). Every other keyword the
validator enforces is shown, so a server that compiles the schema into a grammar keeps the model inside it."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
NOT_RUN = frozenset({"unknown", "arguments", "permission"})
"""details["stage"] of a call refused before its tool ran (an unknown tool, arguments that do not fit, a refusal):
it is no tool call in a run's count."""
LEARNT_CALL = "learnt_call"
"""ctx.state's note, set before a code_run that runs learnt scripts (memory/learn/outputs.py): the script, the SOPs'
names and the paths they may write; code_run runs it with the workspace read-only but for those."""
RECENT_RESULTS = "recent_results"
"""ctx.state's last few results that are ga's own text (statuses, errors, code_run's framing), newest last:
file_write refuses to put one into a file. Not the world's text: file_read's files, pages, the user's answers."""
_WORLDS = ("file_read", "web_scan", "web_execute_js", "ask_user")


@dataclass(kw_only=True)
class ToolResult:
    content: str
    """What the model reads: short and exact."""
    details: dict = field(default_factory=dict)
    """For the terminal, the trajectory and tests: diffs, full-output paths, timings; "shown": the line for the
    human when the content's is meant for the model."""
    is_error: bool = False

    def said(self) -> str:
        """The result on one line for the human: details["shown"], else the content's first line (a refusal's first
        sentence: the rest tells the model what to do next)."""
        if self.details.get("shown"):
            return str(self.details["shown"])
        first = self.content.strip().splitlines()[0] if self.content.strip() else ""
        return _SENTENCE_END.split(first, maxsplit=1)[0] if self.details.get("stage") == "permission" else first


@dataclass(kw_only=True)
class ToolContext:
    """What a tool may use. One per run; tools keep per-run state in `state` and `resources`."""

    settings: Settings
    run_dir: Path
    ui: UI
    interactive: bool = False
    """A human is at a terminal and can answer questions and approvals."""
    state: dict = field(default_factory=dict)
    """Saved with the run (e.g. the working checkpoint, file stamps). JSON-serialisable values only."""
    resources: dict = field(default_factory=dict)
    """Live objects shared across calls (e.g. the browser session); closed with the run via close()."""
    output_budget: int = RESULTS_CHARS
    """Characters this result may use; tools that truncate smartly should stay inside it."""
    deadline: float | None = None
    """time.monotonic() by which the run must stop (--max-time); long-running tools cap their timeout to it."""
    call_id: str = ""
    notes: list[str] = field(default_factory=list)
    """Lines put before this call's result (what a repair changed); a fresh list per call."""
    memory: Memory | None = None
    """Long-term memory, when the run has it (start_long_term_update briefs the model from it)."""
    network: bool = True
    """The sandbox may share the host's network when the user allows it (GA_SANDBOX_NET=1); False keeps it offline
    whatever that says (the replay of a learnt script must not post the run's message a second time)."""
    check: bool = False
    """This call is the user's --check (ga/check.py), not the model's: code_run keeps workspace modules from standing
    in for the tools that judge the work, and reports the workspace files the check imported."""

    @property
    def workspace(self) -> Path:
        return self.settings.workdir

    def roots(self, *, write: bool = False) -> list[Path]:
        """The folders the file tools may reach, the workspace first; for reading also SOPs, memory and this run."""
        roots = list(self.settings.allow_paths)
        memory = [self.settings.home / "sop", self.settings.home / "memory"]
        if not write:  # learned SOPs, memory and extra skill folders are readable from any workspace
            roots += [*memory, *self.settings.skills_path, self.run_dir]
        elif self.state.get("memory_open"):  # start_long_term_update was called: memory is writable
            roots += memory
        return [self.workspace, *(Path(r).resolve() for r in roots)]

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """A path the file tools may touch, or PermissionDenied naming the rule."""
        target = confine(path, self.workspace, self.roots(write=write)[1:], write=write)
        # kept apart from confine(): hidden places whatever the roots, memory's own path, protected paths
        admit(target, self.settings, self.ui, write=write, interactive=self.interactive, run_dir=self.run_dir,
              memory_open=bool(self.state.get("memory_open")))
        return target

    def save_output(self, name: str, data: str | bytes) -> Path:
        """Keep a full output in the run folder; the model is told the path."""
        folder = self.run_dir / "outputs"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # run files are private to the user
        with os.fdopen(fd, "wb") as f:
            f.write(redact(data).encode("utf-8", "replace") if isinstance(data, str) else data)
        return path

    def close(self) -> None:
        for name, resource in list(self.resources.items()):
            try:
                resource.close()
            except Exception:  # closing must never hide the run's own outcome
                log.warning("closing %s failed", name, exc_info=True)
        self.resources.clear()


@dataclass(kw_only=True)
class ToolSpec:
    name: str
    description: str
    """Written as carefully as a prompt: what the tool is for, its rules, its limits, how to continue."""
    parameters: dict
    """JSON schema of the arguments (additionalProperties false)."""
    side_effect: SideEffect
    run: Callable[[dict, ToolContext], ToolResult]
    concurrent: Callable[[dict], bool] | None = None
    """May this call run beside others? Default: only READ_ONLY calls."""
    check: Callable[[dict, ToolContext], dict] | None = None
    """Tool-specific permission check (e.g. the command policy); returns the arguments to run, maybe edited."""
    state_only: bool = False
    """Writes only the agent's own state (the checkpoint): plan and confirm modes let it through."""
    deferred: bool = False
    """Rarely needed: its schema is sent only once the run needs it (ga/tooling/deferral.py), named in one line until
    then."""
    in_plan_mode: Callable[[ToolContext], str] | None = None
    """How a tool that is not READ_ONLY may still run in plan mode: confined so that it changes nothing (code_run:
    in the sandbox with the workspace read-only and no network). Returns "" when that confinement holds here, else
    why it cannot (the refusal says it). None: refused in plan mode."""
    preview: Callable[[dict, ToolContext], str] | None = None
    """What --confirm shows before the call runs (a diff); raises the refusal the call would get. Default: the
    arguments one per line, the editable one as written."""
    editable: str | None = None
    """The argument a human edits at an approval (content, script...); None: the arguments as JSON."""
    repair: Callable[[dict], dict] | None = None
    """This tool's own repair of a small model's slip, run before validation under that model's settings only
    (Dispatcher.repairs): only what cannot change the meaning. The model is told what changed, and why."""
    repaired: str = ""
    """Why `repair` changed arguments, for the model ("lines count from 1")."""

    @functools.cached_property
    def validator(self) -> Draft202012Validator:
        """Built when a call is first checked: importing jsonschema is a good part of ga's start-up, and a run
        without tool calls never needs it."""
        from jsonschema import Draft202012Validator

        return Draft202012Validator(self.parameters)

    def schema(self) -> dict:
        """What the model reads every turn: the parameters as the validator checks them (see _NOT_SHOWN)."""
        params = {k: v for k, v in self.parameters.items() if k not in _NOT_SHOWN}
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": params}}

    def is_concurrent(self, args: dict) -> bool:
        return self.concurrent(args) if self.concurrent else self.side_effect is SideEffect.READ_ONLY


def redacted(result: ToolResult) -> ToolResult:
    """Secrets out of a result before the model, the terminal or the trajectory see it (ga.tooling.redact)."""
    result.content = redact(result.content)
    result.details = redact_data(result.details)
    return result


def ran(result_details: dict) -> bool:
    """Whether a result (its details) is that of a call whose tool ran."""
    return result_details.get("stage") not in NOT_RUN


def error(message: str, **details: object) -> ToolResult:
    return ToolResult(content=message, details=dict(details), is_error=True)


def remember_result(state: dict, tool: str, result: ToolResult) -> None:
    if result.is_error or tool not in _WORLDS:
        state[RECENT_RESULTS] = [*state.get(RECENT_RESULTS, [])[-5:], result.content[:2000]]
