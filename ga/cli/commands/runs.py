"""ga runs [list] [--json] [--status S] [-n N]: the runs in GA_HOME, newest first (a `running` run whose process is
gone shows as `crashed`, a live one without progress for a while as `stalled`); `runs show`, `rm`, `prune` beside."""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ga.cli.commands import amount
from ga.config import load_settings
from ga.invocation import invocation
from ga.runs.folder import read_state, run_ids
from ga.runs.listing import describe
from ga.tooling.screen import clean, escaped_json

ACTIONS_BESIDE = ("list", "show", "rm", "prune")  # `runs WORD`: the listing's neighbours (completion offers them)
STATUSES = ("done", "failed", "paused", "limit", "interrupted", "running", "crashed", "stalled")
SHOWN = 20


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{invocation()} runs", description="List runs, newest first. Also: runs show "
                                "ID (one run in full), runs rm ID... and runs prune --older-than DURATION (delete "
                                "runs; never a running one); each has its --help.")
    p.add_argument("--json", action="store_true", help="one JSON array of runs on stdout")
    p.add_argument("--status", action="append", choices=STATUSES, metavar="S",
                   help=f"only runs with this status (repeatable): {', '.join(STATUSES)}")
    p.add_argument("-n", "--limit", type=int, metavar="N",
                   help=f"the newest N runs (default {SHOWN}, all with --json; 0 = all)")
    p.add_argument("--stalled-after", type=float, default=15, metavar="MINUTES",
                   help="a live run without progress this long is stalled (default 15)")
    return p


def collect(runs_dir: Path, statuses: list[str] | None, limit: int, stall_after: float) -> tuple[list[dict], int]:
    """The newest `limit` runs matching (0: all), and how many runs there are in all."""
    ids = run_ids(runs_dir)
    now, rows = time.time(), []
    for run_id, state in _newest_first(runs_dir, ids):
        if limit and len(rows) >= limit:
            break
        if state is None:
            if (runs_dir / run_id / "state.json").is_file():  # else not a run folder, or one being made
                print(f"runs: skipped {run_id}: its state.json is not a readable JSON object", file=sys.stderr)
            continue
        try:
            row = describe(runs_dir / run_id, state, now, stall_after)
        except (ValueError, TypeError, AttributeError, KeyError) as e:  # a hand-edited or foreign state
            print(f"runs: skipped {run_id}: its state cannot be read ({type(e).__name__}: {e})", file=sys.stderr)
            continue
        if not statuses or row["status"] in statuses or ("stalled" in statuses and row["stalled"]):
            if row["status"] == "paused":
                row["question"] = _question(runs_dir / run_id, row)
            rows.append(row)
    return rows, len(ids)


def _question(folder: Path, row: dict) -> str:
    """What a paused run asks: its outbox's question (and candidates), else the message it paused with."""
    try:
        asked = json.loads((folder / "outbox" / "question.json").read_text(encoding="utf-8"))
        options = " · ".join(f"{i}. {c}" for i, c in enumerate(asked.get("candidates") or [], 1))
        return f"{asked['question']}" + (f" ({options})" if options else "")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return " ".join(str(row.get("message") or "").split())


def _newest_first(runs_dir: Path, ids: list[str]) -> Iterator[tuple[str, dict | None]]:
    """(run id, state or None), newest first: ids sort by the second they start with; runs begun within the same
    second by their states' creation time."""
    for _, group in itertools.groupby(reversed(ids), key=lambda run_id: run_id[:15]):
        states = [(run_id, read_state(runs_dir / run_id)) for run_id in group]
        yield from sorted(states, key=lambda pair: (_created(pair[1]), pair[0]), reverse=True)


def _created(state: dict | None) -> float:
    try:
        return float(state.get("created") or 0) if state else 0.0
    except (TypeError, ValueError):
        return 0.0


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def table(rows: list[dict], now: float) -> str:
    width = shutil.get_terminal_size((120, 24)).columns
    lines = [f"{'ID':<22}  {'STATUS':<13} {'AGE':>4} {'TURNS':>5} {'TOKENS':>7}  TASK"]
    for r in rows:
        status = f"stalled {_age(r['idle_s'])}" if r["stalled"] else r["status"]
        if r["verified"] is not None and not r["stalled"]:
            status += " ✓" if r["verified"] else " ✗"  # verified by --check, or not: the last step failed
        head = (f"{r['run_id']:<22}  {status:<13} {_age(max(0, now - float(r['created'] or now))):>4} "
                f"{r['turns']:>5} {amount(r['tokens'], ('', 'k', 'M')):>7}  ")
        task = " ".join(clean(str(r["task"])).split())  # shown, never obeyed by the terminal
        room = max(10, width - len(head))
        lines.append(head + (task if len(task) <= room else task[: room - 1] + "…"))
        if r.get("question"):  # what it waits for, under it: `answer ID "..."` answers it
            asked = " ".join(clean(r["question"]).split())
            lines.append(f"{'':<24}? " + (asked if len(asked) <= width - 26 else asked[: max(10, width - 27)] + "…"))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv and argv[0] in ACTIONS_BESIDE[1:]:
        from ga.cli.commands import runs_rm, runs_show

        return {"show": runs_show.main, "rm": runs_rm.rm, "prune": runs_rm.prune}[argv[0]](argv[1:])
    if argv and argv[0] == "list":
        argv = argv[1:]
    args = parser().parse_args(argv)
    runs_dir = load_settings().runs_dir
    limit = args.limit if args.limit is not None else (0 if args.json else SHOWN)
    rows, total = collect(runs_dir, args.status, max(0, limit), args.stalled_after * 60)
    if args.json:
        print(escaped_json(json.dumps(rows, ensure_ascii=False)))
        return 0
    if not rows:
        print(f"No runs{' with that status' if args.status else ''} in {runs_dir}.", file=sys.stderr)
        return 0
    print(table(rows, time.time()))
    if any(r.get("question") for r in rows):
        print(f'(a paused run waits for an answer: {invocation()} answer ID "...")', file=sys.stderr)
    if limit and len(rows) == limit and total > limit:
        print(f"(the newest {limit} of {total} runs; -n 0 lists all)", file=sys.stderr)
    return 0
