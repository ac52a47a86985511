"""python run.py runs [--json] [--status S] [-n N]: the runs in GA_HOME, newest first.

A `running` run whose process is gone shows as `crashed`; a live one without progress for a while as `stalled`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from ga.config import load_settings
from ga.liveness import effective_status, stalled_for
from ga.runs import Run, read_state, run_ids

STATUSES = ("done", "failed", "paused", "limit", "interrupted", "running", "crashed", "stalled")
SHOWN = 20


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="run.py runs", description="List runs, newest first.")
    p.add_argument("--json", action="store_true", help="one JSON array of runs on stdout")
    p.add_argument("--status", action="append", choices=STATUSES, metavar="S",
                   help=f"only runs with this status (repeatable): {', '.join(STATUSES)}")
    p.add_argument("-n", "--limit", type=int, metavar="N",
                   help=f"the newest N runs (default {SHOWN}, all with --json; 0 = all)")
    p.add_argument("--stalled-after", type=float, default=15, metavar="MINUTES",
                   help="a live run without progress this long is stalled (default 15)")
    return p


def describe(folder: Path, state: dict, now: float, stall_after: float) -> dict:
    """One run as `runs --json` prints it."""
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
           "tool_calls": state.get("tool_calls"), "task": state.get("task", ""), "workdir": state.get("workdir"),
           "pid": state.get("pid"), "message": state.get("message", "")}
    if idle is not None:
        row["idle_s"] = round(idle)
    return row


def collect(runs_dir: Path, statuses: list[str] | None, limit: int, stall_after: float) -> tuple[list[dict], int]:
    """The newest `limit` runs matching (0: all), and how many runs there are in all."""
    ids = run_ids(runs_dir)
    now, rows = time.time(), []
    for run_id in reversed(ids):
        if limit and len(rows) >= limit:
            break
        state = read_state(runs_dir / run_id)
        if state is None:
            continue  # not a run folder (or one being written for the first time)
        row = describe(runs_dir / run_id, state, now, stall_after)
        wanted = not statuses or row["status"] in statuses or ("stalled" in statuses and row["stalled"])
        if wanted:
            rows.append(row)
    return rows, len(ids)


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _tokens(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1000 else str(n)


def table(rows: list[dict], now: float) -> str:
    width = shutil.get_terminal_size((120, 24)).columns
    lines = [f"{'ID':<22}  {'STATUS':<13} {'AGE':>4} {'TURNS':>5} {'TOKENS':>7}  TASK"]
    for r in rows:
        status = f"stalled {_age(r['idle_s'])}" if r["stalled"] else r["status"]
        head = (f"{r['run_id']:<22}  {status:<13} {_age(max(0, now - float(r['created'] or now))):>4} "
                f"{r['turns']:>5} {_tokens(r['tokens']):>7}  ")
        task = " ".join(str(r["task"]).split())
        room = max(10, width - len(head))
        lines.append(head + (task if len(task) <= room else task[: room - 1] + "…"))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    runs_dir = load_settings().runs_dir
    limit = args.limit if args.limit is not None else (0 if args.json else SHOWN)
    rows, total = collect(runs_dir, args.status, max(0, limit), args.stalled_after * 60)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    if not rows:
        print(f"No runs{' with that status' if args.status else ''} in {runs_dir}.", file=sys.stderr)
        return 0
    print(table(rows, time.time()))
    if limit and len(rows) == limit and total > limit:
        print(f"(the newest {limit} of {total} runs; -n 0 lists all)", file=sys.stderr)
    return 0
