"""The one path every tool call takes.

unknown tool → argument repair → schema validation → permission check → execution → output budget → result.
Nothing raises out of here except AgentStop (a pause for a human) and KeyboardInterrupt."""

from __future__ import annotations

import dataclasses
import logging
import time
import traceback
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ga.errors import AgentStop, PermissionDenied, ToolError
from ga.protocols import ToolCall
from ga.tooling import arguments, tokens
from ga.tooling.approval import confirm
from ga.tooling.budget import RESULTS_TOKENS, SHOWN_RESULTS, fit
from ga.tooling.permissions import SideEffect, check_mode
from ga.tooling.spec import ToolContext, ToolResult, ToolSpec, error, redacted, remember_result

log = logging.getLogger(__name__)

MAX_PARALLEL = 10
MAX_CALLS_PER_REPLY = 32
"""Tool calls run from one reply; the model is told that the rest were not run."""
TOO_MANY = ("Only the first {limit} of your {asked} tool calls were run; the other {rest} were not. Call again "
            "for those still needed, at most {limit} per reply.")


def cap(calls: list[ToolCall]) -> tuple[list[ToolCall], str]:
    """The calls of one reply that run (the first MAX_CALLS_PER_REPLY), and what the model is told of the rest."""
    if len(calls) <= MAX_CALLS_PER_REPLY:
        return calls, ""
    rest = len(calls) - MAX_CALLS_PER_REPLY
    return calls[:MAX_CALLS_PER_REPLY], TOO_MANY.format(limit=MAX_CALLS_PER_REPLY, asked=len(calls), rest=rest)


@dataclass(kw_only=True)
class _Prepared:
    call: ToolCall
    spec: ToolSpec | None = None
    args: dict = field(default_factory=dict)
    result: ToolResult | None = None
    notes: list[str] = field(default_factory=list)
    """What was done to the arguments before they ran (decoded twice, repaired, dropped): the model is told."""


class Dispatcher:
    def __init__(self, specs: list[ToolSpec], *, drop_echoed: bool = False, repairs: bool = False,
                 floors: dict[str, dict[str, int]] | None = None):
        self.specs = {s.name: s for s in specs}
        self.drop_echoed = drop_echoed
        """Drop an optional argument that copies the schema's prose (ModelSettings.drop_echoed_arguments)."""
        self.repairs = repairs
        """Run each tool's own repair of a small model's slip (ToolSpec.repair; ModelSettings.tool_repairs)."""
        self.floors = floors or {}
        """Tool → integer argument → its least value; a call below it is refused with the value to send
        (ModelSettings.min_read_lines). Never raised silently: what runs is what the model asked for."""

    def schemas(self, loaded: Collection[str] | None = None) -> list[dict]:
        """Every tool's schema; with `loaded`, the deferred tools' only for the names it holds."""
        return [s.schema() for s in self.specs.values() if loaded is None or not s.deferred or s.name in loaded]

    def deferred(self) -> list[str]:
        return [s.name for s in self.specs.values() if s.deferred]

    def dispatch(self, calls: list[ToolCall], ctx: ToolContext,
                 on_start: Callable[[ToolCall, dict], None] | None = None,
                 on_result: Callable[[ToolCall, ToolResult], None] | None = None,
                 budget: int = RESULTS_TOKENS) -> list[ToolResult]:
        """Run the calls of one turn; consecutive concurrency-safe ones together; results in the order asked. All
        results share `budget` tokens: each group of calls run together gets its part of what is left, its tools are
        told their share (in characters), and a group over its part has its largest results cut first."""
        left = budget  # tokens still free for this turn's results
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
            share = left * len(group) // max(1, len(prepared) - i)  # the group's part of what is left
            chars = max(1_000, share // len(group) * tokens.CHARS_PER_TOKEN)
            if len(group) == 1:
                outcomes = [self._execute(group[0], ctx, chars)]
            else:
                with ThreadPoolExecutor(max_workers=len(group)) as pool:
                    outcomes = list(pool.map(self._execute, group, [ctx] * len(group), [chars] * len(group)))
            used = fit([p.call.id for p in group], outcomes, share, save=ctx.save_output,
                       shown=ctx.state.get(SHOWN_RESULTS, {}))
            left = max(0, left - used)
            for p, result in zip(group, outcomes, strict=True):
                remember_result(ctx.state, p.call.name, result)
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
            unknown = f"Unknown tool {arguments.echo(repr(call.name), 80)}. Available tools: {', '.join(self.specs)}."
            return _Prepared(call=call, result=error(unknown, stage="unknown"))
        try:
            decoded, note = arguments.decode(call.arguments, spec.name)
            args, notes = arguments.repair(decoded, spec.parameters), [note] if note else []
            if self.drop_echoed:
                args, echoed = arguments.unechoed(args, spec.parameters, spec.description)
                if echoed:
                    notes.append(f"[Ignored {', '.join(echoed)}: the value sent was the parameter's description "
                                 "from the schema. Leave an optional parameter out when it is not needed.]")
            if low := {k: n for k, n in self.floors.get(spec.name, {}).items()
                       if isinstance(args.get(k), int) and args[k] < n}:
                asked = ", ".join(f"{k}={args[k]}" for k in low)
                least = ", ".join(f"{k}={n}" for k, n in low.items())
                # run as asked (a floor never refuses a call that works): the note saves the next turns
                notes.append(f"[Ran with {asked}, as asked; {least} or more (or leaving it out) shows more a turn.]")
            if self.repairs and spec.repair and (repaired := spec.repair(args)) != args:
                changed = [f"{k}={repaired[k]!r}" + (f" (was {args[k]!r})" if k in args else "")
                           for k in repaired if args.get(k) != repaired.get(k)]
                why = f": {spec.repaired}" if spec.repaired else ""
                notes.append(f"[Ran with {', '.join(changed)}{why}.]")
                args = repaired
            arguments.validate(spec.name, args, spec.parameters, spec.validator)
        except ToolError as e:
            return _Prepared(call=call, spec=spec, result=error(str(e), stage="arguments"))
        return _Prepared(call=call, spec=spec, args=args, notes=notes)

    def _execute(self, p: _Prepared, ctx: ToolContext, budget: int) -> ToolResult:
        started, human = time.perf_counter(), ctx.ui.human_seconds()
        call_ctx = dataclasses.replace(ctx, output_budget=budget, call_id=p.call.id, notes=[])
        result = redacted(p.result or self._run(p, call_ctx))
        call_ctx.notes[:0] = p.notes
        result.content = "".join(f"{note}\n" for note in dict.fromkeys(call_ctx.notes)) + result.content
        waited = ctx.ui.human_seconds() - human  # at an approval: the human's time, not the call's
        result.details.setdefault("elapsed", round(max(0.0, time.perf_counter() - started - waited), 4))
        return result

    def _run(self, p: _Prepared, call_ctx: ToolContext) -> ToolResult:
        try:
            args = self._permit(p.spec, p.args, call_ctx)
            if args != p.args:  # the human edited the call: the terminal shows what runs, not what the model sent
                call_ctx.ui.tool_start(dataclasses.replace(p.call, arguments=args), args)
            result = p.spec.run(args, call_ctx)
            if changed := [k for k in {**p.args, **args} if args.get(k) != p.args.get(k)]:
                result.content = (f"[The user edited this call before approving it ({', '.join(changed)} changed); "
                                  f"this is the result of their version.]\n{result.content}")
                result.details["edited"] = args
        except (AgentStop, KeyboardInterrupt):
            raise
        except PermissionDenied as e:
            log.info("%s refused: %s", p.spec.name, e)
            result = error(str(e), stage="permission", **({"shown": e.shown} if e.shown else {}))
        except ToolError as e:
            result = error(str(e))
        except Exception as e:  # a tool bug must not kill the run: the model reads it, the trajectory keeps the trace
            log.info("tool %s crashed", p.spec.name, exc_info=True)
            result = error(f"{p.spec.name} failed unexpectedly: {type(e).__name__}: {e}. Try another way.",
                           traceback=traceback.format_exc())
        return result

    def _permit(self, spec: ToolSpec, args: dict, ctx: ToolContext) -> dict:
        if spec.state_only:
            return args
        confined = spec.in_plan_mode(ctx) if spec.in_plan_mode and ctx.settings.mode == "plan" else None
        check_mode(ctx.settings.mode, spec.name, spec.side_effect, confined)
        if ctx.settings.mode == "confirm" and spec.side_effect is not SideEffect.READ_ONLY:
            args = confirm(spec, args, ctx)
        return spec.check(args, ctx) if spec.check else args
