"""ToolSpec, ToolResult, ToolContext and the one path every tool call takes.

unknown tool → argument repair → schema validation → permission check → execution → output budget → result.
Nothing raises out of here except AgentStop (a pause for a human) and KeyboardInterrupt.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from jsonschema import Draft202012Validator

from ga import arguments
from ga.config import Settings
from ga.errors import AgentStop, PermissionDenied, ToolError
from ga.permissions import SideEffect, check_mode, confine
from ga.protocols import UI, ToolCall

log = logging.getLogger(__name__)

MAX_PARALLEL = 10
TURN_OUTPUT_CHARS = 50_000
"""Output budget for all results of one turn; each result gets a share, never less than MIN_RESULT_CHARS."""
MIN_RESULT_CHARS = 10_000
_VALIDATION_ONLY = frozenset({"additionalProperties", "minLength", "maxLength", "minimum", "minItems"})


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

    @property
    def workspace(self) -> Path:
        return self.settings.workdir

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """A path the file tools may touch, or PermissionDenied naming the rule."""
        roots = list(self.settings.allow_paths)
        memory = [self.settings.home / "sop", self.settings.home / "memory"]
        if not write:  # learned SOPs, memory and extra skill folders are readable from any workspace
            roots += [*memory, *self.settings.skills_path, self.run_dir]
        elif self.state.get("memory_open"):  # start_long_term_update was called: memory is writable
            roots += memory
        return confine(path, self.workspace, [Path(r).resolve() for r in roots], write=write)

    def save_output(self, name: str, data: str | bytes) -> Path:
        """Keep a full output in the run folder; the model is told the path."""
        folder = self.run_dir / "outputs"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_bytes(data.encode("utf-8", "replace") if isinstance(data, str) else data)
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

    def __post_init__(self) -> None:
        self.validator = Draft202012Validator(self.parameters)

    def schema(self) -> dict:
        """What the model reads every turn: the validator's own keywords are left out (it enforces them anyway)."""
        params = {k: v for k, v in self.parameters.items() if k not in _VALIDATION_ONLY}
        params["properties"] = {name: {k: v for k, v in prop.items() if k not in _VALIDATION_ONLY}
                                for name, prop in self.parameters.get("properties", {}).items()}
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": params}}

    def is_concurrent(self, args: dict) -> bool:
        if self.concurrent is not None:
            return self.concurrent(args)
        return self.side_effect is SideEffect.READ_ONLY


def error(message: str, **details: object) -> ToolResult:
    return ToolResult(content=message, details=dict(details), is_error=True)


@dataclass(kw_only=True)
class _Prepared:
    call: ToolCall
    spec: ToolSpec | None = None
    args: dict = field(default_factory=dict)
    result: ToolResult | None = None


class Dispatcher:
    def __init__(self, specs: list[ToolSpec]):
        self.specs = {s.name: s for s in specs}

    def schemas(self) -> list[dict]:
        return [s.schema() for s in self.specs.values()]

    def dispatch(self, calls: list[ToolCall], ctx: ToolContext,
                 on_start: Callable[[ToolCall, dict], None] | None = None,
                 on_result: Callable[[ToolCall, ToolResult], None] | None = None) -> list[ToolResult]:
        """Run the calls of one turn; consecutive concurrency-safe ones together; results in the order asked."""
        budget = max(MIN_RESULT_CHARS, TURN_OUTPUT_CHARS // max(1, len(calls)))
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
            if len(group) == 1:
                outcomes = [self._execute(group[0], ctx, budget)]
            else:
                with ThreadPoolExecutor(max_workers=len(group)) as pool:
                    outcomes = list(pool.map(lambda p: self._execute(p, ctx, budget), group))
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
            arguments.validate(spec.name, args, spec.parameters, spec.validator)
        except ToolError as e:
            return _Prepared(call=call, spec=spec, result=error(str(e), stage="arguments"))
        return _Prepared(call=call, spec=spec, args=args)

    def _execute(self, p: _Prepared, ctx: ToolContext, budget: int) -> ToolResult:
        started = time.perf_counter()
        call_ctx = _for_call(ctx, p.call.id, budget)
        result = _within_budget(p.result or self._run(p, call_ctx), call_ctx)
        result.details.setdefault("elapsed", round(time.perf_counter() - started, 4))
        return result

    def _run(self, p: _Prepared, call_ctx: ToolContext) -> ToolResult:
        try:
            args = self._permit(p.spec, p.args, call_ctx)
            result = p.spec.run(args, call_ctx)
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
    clone = ToolContext(settings=ctx.settings, run_dir=ctx.run_dir, ui=ctx.ui, interactive=ctx.interactive,
                        state=ctx.state, resources=ctx.resources, output_budget=budget, call_id=call_id,
                        deadline=ctx.deadline)
    return clone


def _confirm(spec: ToolSpec, args: dict, ctx: ToolContext) -> dict:
    if not ctx.interactive:
        raise PermissionDenied(
            f"Refused {spec.name}: the run is in confirm mode (rule: confirm-mode) and no human is at a terminal "
            "to approve it. Give your proposed change as the final answer instead.")
    decision, text = ctx.ui.approve(f"{spec.name} ({spec.side_effect.value})",
                                    json.dumps(args, ensure_ascii=False, indent=1))
    if decision == "reject":
        raise PermissionDenied(f"The user rejected this {spec.name} call (rule: confirm-mode). Ask or try otherwise.")
    if decision == "edit":
        edited = arguments.repair(arguments.parse(text, spec.name), spec.parameters)
        arguments.validate(spec.name, edited, spec.parameters, spec.validator)
        return edited
    return args


def _within_budget(result: ToolResult, ctx: ToolContext) -> ToolResult:
    """Safety net for tools that do not truncate themselves: keep head and tail, save the whole."""
    text = result.content
    if len(text) <= ctx.output_budget:
        return result
    head, tail = text[: ctx.output_budget // 2], text[-ctx.output_budget // 2:]
    cut = len(text) - len(head) - len(tail)
    try:
        path = ctx.save_output(f"{ctx.call_id or 'result'}.txt", text)
    except OSError as e:  # a full disk must not lose the result itself
        where = f"the full output could not be saved ({e.strerror or e})"
    else:
        where = f"full output: {path} — read it with file_read"
        result.details["full_output"] = str(path)
    result.content = f"{head}\n[… {cut} chars cut; {where}]\n{tail}"
    return result
