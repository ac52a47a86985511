"""One run as `runs` and `runs show` describe it: its status as a reader should believe it, and its totals."""

from __future__ import annotations

from pathlib import Path

from ga.runs.folder import Run
from ga.runs.liveness import effective_status, stalled_for


def describe(folder: Path, state: dict, now: float, stall_after: float) -> dict:
    """One run as `runs --json` prints it."""
    float(state.get("created") or 0)  # the listing sorts and ages by it: a state where it is not a number is bad
    status = effective_status(folder, state)
    idle = stalled_for(folder, state, stall_after, now) if status == "running" else None
    usage, turns = state.get("usage"), state.get("turns")
    if not isinstance(usage, dict):  # a run from before the state kept its totals
        history = Run(folder, state).history()
        usage = {"requests": history.usage.requests, "prompt_tokens": history.usage.prompt_tokens,
                 "completion_tokens": history.usage.completion_tokens}
        turns = sum(1 for m in history.messages if m.get("role") == "assistant")
    row = {"run_id": folder.name, "status": status, "stalled": idle is not None, "created": state.get("created"),
           "updated": state.get("updated"), "turns": int(turns or 0),
           "tokens": int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)), "usage": usage,
           "tool_calls": state.get("tool_calls"), "task": state.get("shown_task") or state.get("task", ""),
           "workdir": state.get("workdir"),
           "pid": state.get("pid"), "message": state.get("message", ""), "verified": state.get("verified")}
    if idle is not None:
        row["idle_s"] = round(idle)
    return row
