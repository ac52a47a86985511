"""python run.py schedule [list]|add|rm|enable|disable|run: jobs that run by themselves (see ga/jobs/job.py).

With no command (or only options), `schedule` lists, as `runs` does.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

from ga.config import load_settings
from ga.errors import ConfigError
from ga.invocation import invocation
from ga.jobs.job import History, Job, load_job, load_jobs, parse_every, save_job, written
from ga.runs.folder import read_state
from ga.runs.liveness import effective_status


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{invocation()} schedule", description="Scheduled jobs in GA_HOME/schedule/ "
                                "(with no command: list).")
    sub = p.add_subparsers(dest="action", required=True, metavar="add|list|rm|enable|disable|run",
                           help="what to do (each has its own --help)")
    add = sub.add_parser("add", help="add a job (or replace one with --force)")
    add.add_argument("name", help="the job's name (letters, digits, '.', '_', '-')")
    add.add_argument("task", help="what the run is asked to do")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", help='a cron expression in local time, e.g. "0 3 * * *"')
    when.add_argument("--every", help='an interval: "90s", "15m", "6h", "1d"')
    add.add_argument("--workdir", type=Path, default=Path.cwd(), help="the workspace (default: this folder)")
    add.add_argument("--model", default="", help="the model (default: GA_MODEL when the job fires)")
    add.add_argument("--profile", default="", metavar="NAME", help="a profile of GA_HOME/config.toml for its runs")
    add.add_argument("--max-turns", type=int, help="model requests per run")
    add.add_argument("--max-tokens", type=int, help="tokens per run")
    add.add_argument("--max-time", type=float, help="seconds per run")
    add.add_argument("--check", default="", metavar="CMD", help="what done means: run CMD when the model answers; "
                     "the run is done only when it exits 0")
    add.add_argument("--disabled", action="store_true", help="add it switched off")
    add.add_argument("--force", action="store_true", help="replace a job of the same name")
    ls = sub.add_parser("list", help="the jobs, when they fire next, and their last run")
    ls.add_argument("--json", action="store_true", help="one JSON array of jobs on stdout")
    for action in ("rm", "enable", "disable"):
        sub.add_parser(action, help=f"{action} a job").add_argument("name", help="the job's name (see list)")
    serve = sub.add_parser("run", help="the scheduler: fire due jobs until stopped (keep it alive with systemd)")
    serve.add_argument("--once", action="store_true", help="fire what is due now, wait for those runs, then exit: 0 "
                       "when each ended done, 1 otherwise (for cron)")
    serve.add_argument("--tick", type=float, default=5.0, help="seconds between checks (default 5)")
    return p


def main(argv: list[str]) -> int:
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["list", *argv]  # a group lists by default: `schedule`, `schedule --json`
    args = parser().parse_args(argv)
    home = load_settings().home
    return ACTIONS[args.action](home / "schedule", home, args)


def _add(folder: Path, home: Path, args: argparse.Namespace) -> int:
    if (folder / f"{args.name}.toml").exists() and not args.force:
        raise ConfigError(f"A job named {args.name!r} exists: pick another name, or --force to replace it.")
    for flag in ("max_turns", "max_tokens", "max_time"):
        if (getattr(args, flag) or 0) < 0:
            raise ConfigError(f"--{flag.replace('_', '-')} must be 0 (no limit) or more")
    workdir = args.workdir.expanduser().resolve()
    if not workdir.is_dir():
        raise ConfigError(f"--workdir {workdir} is not a folder")
    job = Job(name=args.name, task=args.task, workdir=workdir, cron=args.cron or "",
              every=parse_every(args.every) if args.every else 0, enabled=not args.disabled, model=args.model,
              profile=args.profile, max_turns=args.max_turns, max_tokens=args.max_tokens, max_time=args.max_time,
              check=args.check.strip())
    path = save_job(folder, job)
    History(folder).append(job.name, {"event": "added", "slot": time.time()})  # counts from now, not earlier runs
    print(f"Added {path} ({job.when}); it fires while `{invocation()} schedule run` is running.")
    return 0


def _list(folder: Path, home: Path, args: argparse.Namespace) -> int:
    jobs, errors = load_jobs(folder)
    rows = []
    for job in jobs:
        try:
            rows.append(_row(job, folder, home))
        except Exception as e:  # one job's fault never hides the others
            errors.append(f"{folder / job.name}.toml: {type(e).__name__}: {e}")
    for error in errors:
        print(f"ga: skipping {error}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
    elif not rows:
        print(f"No jobs in {folder}: add one with {invocation()} schedule add NAME TASK --every 1h", file=sys.stderr)
    for r in [] if args.json else rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["next"])) if r["next"] else "disabled"
        last = ("never" if not r["last"] else f"could not start: {r['last']['error']}" if r["last"].get("error")
                else f"{r['last']['run_id']} {r['last']['status']} {r['last']['tokens']} tokens")
        print(f"{r['name']:<16} {r['when']:<16} next {when:<16}  last {last}")
    return 0


def _row(job: Job, folder: Path, home: Path) -> dict:
    history = History(folder)
    base = history.last_slot(job.name) or written(folder, job)  # as the scheduler counts
    fired, _ = history.last_run(job.name)
    last = None
    failed = next((r for r in reversed(history.recent(job.name)) if r.get("event") in ("fired", "failed")), None)
    if failed and failed.get("event") == "failed":  # its last firing never made a run: that is its outcome
        said = str(failed.get("error", "")).strip().splitlines() or ["no reason recorded"]
        last = {"run_id": None, "at": failed.get("t"), "status": "could not start", "tokens": 0, "error": said[-1]}
    elif fired:
        state = read_state(home / "runs" / fired["run_id"]) or {}
        usage = state.get("usage") or {}
        last = {"run_id": fired["run_id"], "at": fired["t"],
                "status": effective_status(home / "runs" / fired["run_id"], state) if state else "missing",
                "tokens": int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))}
    return {"name": job.name, "enabled": job.enabled, "when": job.when, "task": job.task,
            "workdir": str(job.workdir), "next": job.next_after(base) if job.enabled else None, "last": last}


def _existing(folder: Path, name: str) -> Path:
    path = folder / f"{name}.toml"
    if not path.exists():
        raise ConfigError(f"No job {name!r} in {folder} (list them with: {invocation()} schedule list).")
    return path


def _rm(folder: Path, home: Path, args: argparse.Namespace) -> int:
    path = _existing(folder, args.name)
    path.unlink()
    print(f"Removed {path} (its history stays in {folder / 'history'}).")
    return 0


def _toggle(folder: Path, home: Path, args: argparse.Namespace) -> int:
    job = load_job(_existing(folder, args.name))
    job.enabled = args.action == "enable"
    save_job(folder, job)
    print(f"{args.name}: {'enabled' if job.enabled else 'disabled'}.")
    return 0


def _serve(folder: Path, home: Path, args: argparse.Namespace) -> int:
    from ga.jobs.scheduler import Scheduler

    def say(line: str) -> None:
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", flush=True)

    signal.signal(signal.SIGTERM, signal.default_int_handler)  # systemd's stop: a clean exit; runs go on
    scheduler = Scheduler(home, say=say)
    try:
        scheduler.serve(tick=max(0.05, args.tick), once=args.once)
        if args.once:  # the lock is free again: a later --once is not held up by these runs
            return scheduler.wait_fired()
    except KeyboardInterrupt:
        say("scheduler stopped (runs it started go on)")
    return 0


ACTIONS = {"add": _add, "list": _list, "rm": _rm, "enable": _toggle, "disable": _toggle, "run": _serve}
