"""ga schedule [list]|add|rm: jobs that start by themselves, as entries of the user's crontab (ga/jobs/cron.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ga.config import load_settings
from ga.errors import ConfigError
from ga.invocation import invocation
from ga.jobs import cron


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{invocation()} schedule", description="Jobs that start ga by themselves: "
                                "entries of your crontab, marked as ga's (with no command: list).")
    sub = p.add_subparsers(dest="action", required=True, metavar="add|list|rm", help="what to do (each has --help)")
    add = sub.add_parser("add", help="install a job in your crontab (or replace one with --force)")
    add.add_argument("name", help="the job's name (letters, digits, '.', '_', '-')")
    add.add_argument("task", help="what the run is asked to do")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--every", help='an interval cron keeps evenly: "15m", "6h", "1d"')
    when.add_argument("--at", metavar="HH:MM", help='every day at this local time, e.g. "03:30"')
    when.add_argument("--cron", help='a cron schedule in local time, e.g. "0 3 * * 1-5"')
    add.add_argument("--workdir", type=Path, default=Path.cwd(), help="the workspace (default: this folder)")
    add.add_argument("--model", default="", help="the model (default: the one configured when the job fires)")
    add.add_argument("--profile", default="", metavar="NAME", help="a profile of GA_HOME/config.toml for its runs")
    add.add_argument("--max-turns", type=int, help="model requests per run")
    add.add_argument("--max-tokens", type=int, help="tokens per run")
    add.add_argument("--max-time", type=float, help="seconds per run")
    add.add_argument("--check", default="", metavar="CMD", help="what done means: run CMD when the model answers; "
                     "the run is done only when it exits 0")
    add.add_argument("--force", action="store_true", help="replace a job of the same name")
    ls = sub.add_parser("list", help="ga's jobs in your crontab")
    ls.add_argument("--json", action="store_true", help="one JSON array of jobs on stdout")
    sub.add_parser("rm", help="remove a job from your crontab").add_argument("name", help="the job's name (see list)")
    return p


def main(argv: list[str]) -> int:
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["list", *argv]  # a group lists by default: `schedule`, `schedule --json`
    args = parser().parse_args(argv)
    return ACTIONS[args.action](args)


def _add(args: argparse.Namespace) -> int:
    schedule = cron.when(every=args.every or "", at=args.at or "", cron=args.cron or "")
    flags = ["--workdir", str(args.workdir.expanduser().resolve())]
    if not Path(flags[1]).is_dir():
        raise ConfigError(f"--workdir {flags[1]} is not a folder")
    for flag, value in (("--model", args.model), ("--profile", args.profile), ("--max-turns", args.max_turns),
                        ("--max-tokens", args.max_tokens), ("--max-time", args.max_time), ("--check", args.check)):
        if isinstance(value, (int, float)) and value < 0:
            raise ConfigError(f"{flag} must be 0 (no limit) or more")
        flags += [flag, str(value)] if value not in (None, "") else []
    home = load_settings().home
    log = home / "schedule" / f"{args.name}.log"
    job = cron.entry(args.name, schedule, flags, args.task, env={**os.environ, "GA_HOME": str(home)}, log=log)
    program = cron.crontab()
    if program is None:
        return _print_instead(job)
    table = cron.read_crontab(program)
    if any(e.name == args.name for e in cron.entries(table)) and not args.force:
        raise ConfigError(f"A job named {args.name!r} is in your crontab: pick another name, or --force to replace it.")
    log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    cron.write_crontab(program, cron.without(table, args.name) + job.line + "\n")
    print(f"Added to your crontab: {job.line}")
    print(f"Its runs are listed by `{invocation()} runs`; what starting them printed is in {log}.", file=sys.stderr)
    if os.environ.get("OPENAI_API_KEY"):
        print(f"ga: cron does not see OPENAI_API_KEY (the entry never holds a key): keep it with `{invocation()} "
              "config set api_key` if the endpoint needs one.", file=sys.stderr)
    return 0


def _print_instead(job: cron.Entry) -> int:
    service, timer = cron.systemd_units(job)
    unit = f"~/.config/systemd/user/ga-{job.name}"
    print("ga: crontab is not installed (Debian and Ubuntu: apt-get install cron), so nothing was installed. Add this "
          "line to a crontab, or use the systemd units below.", file=sys.stderr)
    print(f"{job.line}\n\n# {unit}.service\n{service}\n# {unit}.timer\n{timer}\n"
          f"# then: systemctl --user daemon-reload && systemctl --user enable --now ga-{job.name}.timer")
    return 1


def _list(args: argparse.Namespace) -> int:
    program = cron.crontab()
    rows = [e.row() for e in cron.entries(cron.read_crontab(program))] if program else []
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
    elif not rows:
        print(f"No ga jobs in your crontab: add one with {invocation()} schedule add NAME TASK --every 1h"
              + ("" if program else " (crontab is not installed)"), file=sys.stderr)
    for r in [] if args.json else rows:
        print(f"{r['name']:<16} {r['when']:<16} {r['workdir']}  {r['task']}")
    return 0


def _rm(args: argparse.Namespace) -> int:
    program = cron.crontab()
    if program is None:
        raise ConfigError("crontab is not installed: remove the job's entry or systemd timer where you put it.")
    table = cron.read_crontab(program)
    if not any(e.name == args.name for e in cron.entries(table)):
        raise ConfigError(f"No job {args.name!r} in your crontab (list them with: {invocation()} schedule list).")
    cron.write_crontab(program, cron.without(table, args.name))
    print(f"Removed {args.name} from your crontab.")
    return 0


ACTIONS = {"add": _add, "list": _list, "rm": _rm}
