"""ToolSpec, ToolResult, ToolContext and the one path every tool call takes.

unknown tool → argument repair → schema validation → permission check → execution → output budget → result.
Nothing raises out of here except AgentStop (a pause for a human) and KeyboardInterrupt.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from jsonschema import Draft202012Validator

from ga import arguments, tokens
from ga.config import Settings
from ga.errors import AgentStop, PermissionDenied, ToolError
from ga.permissions import SideEffect, check_mode, confine
from ga.protected import approve_write
from ga.protocols import UI, ToolCall
from ga.redact import redact, redact_data
from ga.turn_budget import SHOWN_RESULTS, TURN_OUTPUT_CHARS, TURN_OUTPUT_TOKENS, TurnBudget, fit

log = logging.getLogger(__name__)

MAX_PARALLEL = 10
MAX_EDITS = 5
"""Edits of one call at an approval before it counts as rejected."""
MAX_CALLS_PER_REPLY = 32
"""Tool calls run from one reply; the model is told that the rest were not run."""
_NOT_SHOWN = frozenset({"additionalProperties"})
"""Schema keywords left out of what the model reads. Every tool refuses unknown parameters, and the properties
listed already say which exist (llama.cpp's grammar also treats a missing additionalProperties as closed);
every other keyword the validator enforces (minimum, maxLength, enum...) is shown, so a server that compiles
the schema into a grammar keeps the model inside it."""


@dataclass(kw_only=True)
class ToolResult:
    content: str
    """What the model reads: short and exact."""
    details: dict = field(default_factory=dict)
    """For the terminal, the trajectory and tests: diffs, full-output paths, timings."""
    is_error: bool = False


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
    output_budget: int = TURN_OUTPUT_CHARS
    """Characters this result may use; tools that truncate smartly should stay inside it."""
    deadline: float | None = None
    """time.monotonic() by which the run must stop (--max-time); long-running tools cap their timeout to it."""
    call_id: str = ""
    task: str = ""
    """The user's task: a path it names outside the workspace is refused, never taken inside (permissions.confine)."""
    notes: list[str] = field(default_factory=list)
    """Lines put before this call's result (a path taken inside the workspace); a fresh list per call."""

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
        target = confine(path, self.workspace, self.roots(write=write)[1:], write=write, notes=self.notes,
                         task=self.task)
        if write:  # kept apart from confine(): .git and ga's configuration need a human's approval
            approve_write(target, self.settings, self.ui, interactive=self.interactive)
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
    preview: Callable[[dict, ToolContext], str] | None = None
    """What --confirm shows before the call runs (a diff); raises the refusal the call would get. Default: the
    arguments one per line, the editable one as written."""
    editable: str | None = None
    """The argument a human edits at an approval (content, script...); None: the arguments as JSON."""
    repair: Callable[[dict], dict] | None = None
    """This tool's own repair of an unambiguous slip, run before validation (e.g. file_read's start=0)."""

    def __post_init__(self) -> None:
        self.validator = Draft202012Validator(self.parameters)

    def schema(self) -> dict:
        """What the model reads every turn: the parameters as the validator checks them (see _NOT_SHOWN)."""
        params = {k: v for k, v in self.parameters.items() if k not in _NOT_SHOWN}
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": params}}

    def is_concurrent(self, args: dict) -> bool:
        if self.concurrent is not None:
            return self.concurrent(args)
        return self.side_effect is SideEffect.READ_ONLY


def redacted(result: ToolResult) -> ToolResult:
    """Secrets out of a result before the model, the terminal or the trajectory see it (ga.redact)."""
    result.content = redact(result.content)
    result.details = redact_data(result.details)
    return result


def error(message: str, **details: object) -> ToolResult:
    return ToolResult(content=message, details=dict(details), is_error=True)


@dataclass(kw_only=True)
class _Prepared:
    call: ToolCall
    spec: ToolSpec | None = None
    args: dict = field(default_factory=dict)
    result: ToolResult | None = None
    ignored: list[str] = field(default_factory=list)
    """Optional parameters dropped because their value was their description (arguments.unechoed)."""


class Dispatcher:
    def __init__(self, specs: list[ToolSpec]):
        self.specs = {s.name: s for s in specs}

    def schemas(self) -> list[dict]:
        return [s.schema() for s in self.specs.values()]

    def dispatch(self, calls: list[ToolCall], ctx: ToolContext,
                 on_start: Callable[[ToolCall, dict], None] | None = None,
                 on_result: Callable[[ToolCall, ToolResult], None] | None = None,
                 budget: int = TURN_OUTPUT_TOKENS) -> list[ToolResult]:
        """Run the calls of one turn; consecutive concurrency-safe ones together; results in the order asked.

        All results share `budget` tokens: each group of calls run together gets its part of what is left, its tools
        are told their share (in characters), and a group over its part has its largest results cut first.
        """
        turn = TurnBudget(left=budget, calls=len(calls))
        prepared = [self._prepare(c) for c in calls]
        results: list[ToolResult] = []
        i = 0
        while i < len(prepared):
            j = i + 1
            if self._parallel(prepared[i]):
                while j < len(prepared) and j - i < MAX_PARALLEL and self._parallel(prepared[j]):
                    j += 1
            group = prepared[i:j]
            for p in group:
                if on_start:
                    on_start(p.call, p.args)
            share = turn.share(len(group))
            chars = max(1_000, share // len(group) * tokens.CHARS_PER_TOKEN)
            if len(group) == 1:
                outcomes = [self._execute(group[0], ctx, chars)]
            else:
                with ThreadPoolExecutor(max_workers=len(group)) as pool:
                    outcomes = list(pool.map(self._execute, group, [ctx] * len(group), [chars] * len(group)))
            used = fit([p.call.id for p in group], outcomes, share, save=ctx.save_output,
                       shown=ctx.state.get(SHOWN_RESULTS, {}))
            turn.spend(len(group), used)
            for p, result in zip(group, outcomes, strict=True):
                if on_result:
                    on_result(p.call, result)
            results += outcomes
            i = j
        return results

    def _parallel(self, p: _Prepared) -> bool:
        return p.result is not None or (p.spec is not None and p.spec.is_concurrent(p.args) and p.spec.check is None)

    def _prepare(self, call: ToolCall) -> _Prepared:
        spec = self.specs.get(call.name)
        if spec is None:
            names = ", ".join(self.specs)
            name = arguments.echo(repr(call.name), 80)
            return _Prepared(call=call, result=error(f"Unknown tool {name}. Available tools: {names}."))
        try:
            args = arguments.repair(arguments.parse(call.arguments, spec.name), spec.parameters)
            args, echoed = arguments.unechoed(args, spec.parameters, spec.description)
            if spec.repair:
                args = spec.repair(args)
            arguments.validate(spec.name, args, spec.parameters, spec.validator)
        except ToolError as e:
            return _Prepared(call=call, spec=spec, result=error(str(e), stage="arguments"))
        return _Prepared(call=call, spec=spec, args=args, ignored=echoed)

    def _execute(self, p: _Prepared, ctx: ToolContext, budget: int) -> ToolResult:
        started = time.perf_counter()
        call_ctx = _for_call(ctx, p.call.id, budget)
        result = redacted(p.result or self._run(p, call_ctx))
        if p.ignored:
            call_ctx.notes.insert(0, f"[Ignored {', '.join(p.ignored)}: the value sent was the parameter's "
                                     "description from the schema. Leave an optional parameter out when it is "
                                     "not needed.]")
        result.content = "".join(f"{note}\n" for note in dict.fromkeys(call_ctx.notes)) + result.content
        result.details.setdefault("elapsed", round(time.perf_counter() - started, 4))
        return result

    def _run(self, p: _Prepared, call_ctx: ToolContext) -> ToolResult:
        try:
            args = self._permit(p.spec, p.args, call_ctx)
            result = p.spec.run(args, call_ctx)
            if changed := [k for k in {**p.args, **args} if args.get(k) != p.args.get(k)]:
                result.content = (f"[The user edited this call before approving it ({', '.join(changed)} changed); "
                                  f"this is the result of their version.]\n{result.content}")
                result.details["edited"] = args
        except (AgentStop, KeyboardInterrupt):
            raise
        except PermissionDenied as e:
            result = error(str(e), stage="permission")
        except ToolError as e:
            result = error(str(e))
        except Exception as e:  # a tool bug must not kill the run: the model reads it
            log.exception("tool %s crashed", p.spec.name)
            result = error(f"{p.spec.name} failed unexpectedly: {type(e).__name__}: {e}. Try another way.")
        return result

    def _permit(self, spec: ToolSpec, args: dict, ctx: ToolContext) -> dict:
        if spec.state_only:
            return args
        check_mode(ctx.settings.mode, spec.name, spec.side_effect)
        if ctx.settings.mode == "confirm" and spec.side_effect is not SideEffect.READ_ONLY:
            args = _confirm(spec, args, ctx)
        return spec.check(args, ctx) if spec.check else args


def _for_call(ctx: ToolContext, call_id: str, budget: int) -> ToolContext:
    return dataclasses.replace(ctx, output_budget=budget, call_id=call_id, notes=[])


def _confirm(spec: ToolSpec, args: dict, ctx: ToolContext) -> dict:
    """Show the change (a diff, the command as written) and ask; an edit is shown again for approval."""
    if not ctx.interactive:
        raise PermissionDenied(
            f"Refused {spec.name}: the run is in confirm mode (rule: confirm-mode) and no human is at a terminal "
            "to approve it. Give your proposed change as the final answer instead.")
    title = f"{spec.name} ({spec.side_effect.value})"
    for _ in range(MAX_EDITS + 1):
        shown = spec.preview(args, ctx) if spec.preview else plain_view(args, spec.editable)
        field = spec.editable
        editable = str(args.get(field, "")) if field else json.dumps(args, ensure_ascii=False, indent=1)
        decision, text = ctx.ui.approve(title, shown, editable)
        if decision == "approve":
            return args
        if decision == "reject":
            reason = f" Their reason: {' '.join(text.split())}" if text.strip() else ""
            raise PermissionDenied(f"The user rejected this {spec.name} call (rule: confirm-mode).{reason} "
                                   "Take that into account: ask them, or do it another way.")
        try:  # an edit the human got wrong is said to the human, never sent to the model
            edited = {**args, field: text} if field else arguments.repair(arguments.parse(text, spec.name),
                                                                          spec.parameters)
            arguments.validate(spec.name, edited, spec.parameters, spec.validator)
        except ToolError as e:
            ctx.ui.notice(f"That edit cannot be used: {e}")
            continue
        args = edited
    raise PermissionDenied(f"The {spec.name} call was edited {MAX_EDITS} times without being approved; "
                           "nothing was run. Ask the user what they want.")


def plain_view(args: dict, editable: str | None = None) -> str:
    """The arguments for a human: `name: value` lines; text with newlines (and the editable one) as written."""
    lines = []
    for name, value in args.items():
        if name != editable and not (isinstance(value, str) and "\n" in value):
            lines.append(f"{name}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}")
    blocks = [f"{name}:\n{value}" for name, value in args.items()
              if name != editable and isinstance(value, str) and "\n" in value]
    if editable in args:
        blocks.append(str(args[editable]))
    return "\n\n".join(filter(None, ["\n".join(lines), *blocks]))
