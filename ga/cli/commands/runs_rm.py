"""ga runs rm ID... | runs prune --older-than DURATION [--status S] [--dry-run]: delete run folders, never a running
one (its lock is taken first), saying what was removed, one line per run, then the total."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from pathlib import Path

from ga.cli.commands import amount
from ga.config import load_settings
from ga.errors import ConfigError
from ga.invocation import invocation
from ga.runs.disk import hold_lock
from ga.runs.folder import read_state, resolve_id, run_ids
from ga.runs.liveness import effective_status, last_progress
from ga.tooling.screen import clean

STATUSES = ("done", "failed", "paused", "limit", "interrupted", "crashed")  # what a run not running may be


def rm_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{invocation()} runs rm", description="Delete runs (never a running one).")
    p.add_argument("run_ids", nargs="+", metavar="ID", help="a run id, or a unique prefix of one")
    return p


def prune_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{invocation()} runs prune", description="Delete the runs not active for a while "
                                "(never a running one).")
    p.add_argument("--older-than", required=True, metavar="DURATION",
                   help='last active longer ago than this: "30d", "12h", "90m", or seconds')
    p.add_argument("--status", action="append", choices=STATUSES, metavar="S",
                   help=f"only runs with this status (repeatable): {', '.join(STATUSES)}")
    p.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    return p


def remove(folder: Path, *, dry_run: bool = False) -> tuple[str, int] | str:
    """Delete one run folder: (its line, bytes freed), or why it stays (a str). A run folder that is a symbolic
    link (ga never makes one) loses the link, never what it points to."""
    if folder.is_symlink():
        target = os.readlink(folder)
        if not dry_run:
            folder.unlink()
        return f"{folder.name}  a link to {target} (the link only: what it points to stays)", 0
    try:
        lock = hold_lock(folder / "lock")  # held while deleting: a resume starting now is refused, not half-deleted
    except BlockingIOError as e:
        return f"{folder.name} is in use by a ga process (pid {e.args[0]}): stop it first (runs stop {folder.name})"
    try:
        state = read_state(folder) or {}
        status = effective_status(folder, state) if state else "unreadable"
        if status == "running":
            return f"{folder.name} is running (pid {state.get('pid')}): stop it first (runs stop {folder.name})"
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
        if not dry_run:
            try:
                shutil.rmtree(folder)
            except OSError as e:
                return f"{folder.name} could not be removed whole: {e.strerror or e} ({e.filename})"
        task = " ".join(clean(str(state.get("task", ""))).split())
        return f"{folder.name}  {status:<11} {amount(size):>9}  {task[:60] + ('…' if len(task) > 60 else '')}", size
    finally:
        os.close(lock)


def rm(argv: list[str]) -> int:
    args = rm_parser().parse_args(argv)
    runs_dir = load_settings().runs_dir
    folders = [runs_dir / resolve_id(runs_dir, given) for given in args.run_ids]  # all named well, or none removed
    kept = _report([remove(f) for f in dict.fromkeys(folders)], dry_run=False)
    return 1 if kept else 0  # a run named to be removed is still there


def prune(argv: list[str]) -> int:
    args = prune_parser().parse_args(argv)
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|m|h|d)?", args.older_than.strip(), re.IGNORECASE)
    if not match:
        raise ConfigError(f"--older-than {args.older_than!r} is not a duration: use e.g. 30d, 12h, 90m or seconds")
    age = float(match[1]) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[(match[2] or "").lower()]
    runs_dir, now = load_settings().runs_dir, time.time()
    chosen = []
    for folder in (runs_dir / run_id for run_id in run_ids(runs_dir)):
        state = read_state(folder)
        if state is not None and now - last_progress(folder, state) >= age and (
                not args.status or effective_status(folder, state) in args.status):
            chosen.append(folder)
    if not chosen:
        print(f"No run in {runs_dir} was last active more than {args.older_than} ago"
              f"{' with that status' if args.status else ''}: nothing removed.", file=sys.stderr)
        return 0
    _report([remove(f, dry_run=args.dry_run) for f in chosen], dry_run=args.dry_run)
    return 0  # a run in use is not pruned, by design


def _report(results: list[tuple[str, int] | str], *, dry_run: bool) -> int:
    """Says what was (or would be) removed and what was kept; returns how many were kept."""
    verb = "would remove" if dry_run else "removed"
    removed = [r for r in results if isinstance(r, tuple)]
    for result in results:
        print(f"{verb} {result[0]}" if isinstance(result, tuple) else f"ga: kept {result}",
              file=sys.stdout if isinstance(result, tuple) else sys.stderr)
    kept = len(results) - len(removed)
    print(f"{verb} {len(removed)} run{'s' if len(removed) != 1 else ''} ({amount(sum(n for _, n in removed))})"
          + (f"; kept {kept} in use" if kept else ""), file=sys.stderr)
    return kept
