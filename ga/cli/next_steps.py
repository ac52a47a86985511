"""What to type next, as the user types it: the hints the run commands, plan mode and the chat print."""

from __future__ import annotations

from ga.invocation import invocation


def resume(run_id: str, status: str) -> str:
    """How to go on with a run that stopped ("" for one that is running or done)."""
    if status == "paused":
        return f'{invocation()} answer {run_id} "..."'
    if status in ("limit", "interrupted", "failed", "crashed", "stalled"):
        return f"{invocation()} --resume {run_id}"
    return ""


def continue_chat(run_id: str) -> str:
    """How to open a chat over this run again (on a terminal, --continue or --resume alone opens one)."""
    return f"{invocation()} --continue  (or --resume {run_id})"
