"""start_long_term_update: the model asks to save what this run verified; it gets the rules, the index and the
closest SOPs, and memory becomes writable for the file tools (ga stamps provenance and removes secrets)."""

from __future__ import annotations

import json

from ga.errors import ToolError
from ga.tooling.permissions import SideEffect
from ga.tooling.spec import ToolContext, ToolResult, ToolSpec
from tools import schema

MIN_CALLS = 2
"""Tool calls a run must have made before there is anything verified to keep."""


def _run_so_far(ctx: ToolContext) -> tuple[str, int]:
    """The run's task and how many tool calls (other than this tool) succeeded."""
    try:
        task = json.loads((ctx.run_dir / "state.json").read_text(encoding="utf-8")).get("task", "")
    except (OSError, json.JSONDecodeError):
        task = ""
    calls = 0
    trajectory = ctx.run_dir / "trajectory.jsonl"
    for line in trajectory.read_text(encoding="utf-8").splitlines() if trajectory.is_file() else []:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        calls += (event.get("type") == "result" and event.get("name") != SPEC.name and not event.get("is_error")
                  and not (event.get("details") or {}).get("repeated"))  # refused or failed calls prove nothing
    return task, calls


def run(args: dict, ctx: ToolContext) -> ToolResult:
    if not ctx.settings.learn or ctx.memory is None:
        raise ToolError("Memory is read-only in this run (--no-learn or GA_LEARN=0): nothing can be saved. "
                        "Go on with the task.")
    task, calls = _run_so_far(ctx)
    if calls < MIN_CALLS:
        raise ToolError(f"Nothing to save yet: this run has made {calls} successful tool call(s), and memory keeps "
                        "only what was verified by action. Do the task first; ga also learns from a successful run by "
                        "itself.")
    ctx.state["memory_open"] = True
    return ToolResult(content=ctx.memory.briefing(task), details={"memory_open": True})


SPEC = ToolSpec(
    name="start_long_term_update",
    description="Save what this run verified to memory: returns the rules and closest SOPs, to edit with file tools.",
    parameters=schema(), side_effect=SideEffect.WRITE, run=run, deferred=True)
