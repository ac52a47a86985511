"""Command line: python run.py "task" [options] | python run.py --resume RUN_ID [--answer TEXT] | python run.py COMMAND.

Subcommands in the style of simonw/llm: a first word that names a command runs it; any other first word
starts a task; `python run.py run "TEXT"` always starts a task (even one called "runs").
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from pathlib import Path

from ga.config import Settings, load_settings
from ga.errors import AgentStop, ConfigError

EXIT_USAGE = 2

COMMANDS: dict[str, str] = {
    "memory": "memory.cli",
    "models": "ga.local.cli",
}
"""Subcommand name → the module whose main(argv) -> exit code runs it (imported only when used)."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="run.py", description="ga: a minimal general-purpose LLM agent.",
                                epilog="Exit codes: 0 done, 1 failed, 2 usage/configuration, 3 paused for a "
                                       "human, 4 a limit was reached.")
    p.add_argument("task", nargs="?", help="what to do")
    models = p.add_mutually_exclusive_group()
    models.add_argument("--model", help="model name (default: $GA_MODEL)")
    models.add_argument("--local", action="store_true",
                   help="use the embedded local model (= --model local; provisioned into ~/.cache/ga on first use)")
    p.add_argument("--workdir", type=Path, help="workspace folder (default: the current folder)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of the answer")
    p.add_argument("--autonomous", action="store_true",
                   help="never block on a human (implied when stdin is not a terminal)")
    p.add_argument("--resume", metavar="RUN_ID", help="continue a run that stopped, crashed or was paused")
    p.add_argument("--answer", help="with --resume: the answer to the question the run paused on")
    p.add_argument("--max-turns", type=int, help="model requests per run (default 100, 0 = no limit)")
    p.add_argument("--max-tokens", type=int, help="prompt+completion tokens per run (0 = no limit)")
    p.add_argument("--max-time", type=float, help="seconds per invocation (0 = no limit)")
    modes = p.add_mutually_exclusive_group()
    modes.add_argument("--plan", action="store_true", help="only read-only tools run (= --mode plan)")
    modes.add_argument("--confirm", action="store_true", help="ask before every change (= --mode confirm)")
    modes.add_argument("--mode", choices=("default", "plan", "confirm"),
                       help="permission mode; a resumed run keeps its own unless given")
    p.add_argument("--allow-path", action="append", type=Path, default=[], metavar="DIR",
                   help="let the file tools reach DIR too (repeatable)")
    p.add_argument("--sandbox", action="store_true", help="run code_run inside bubblewrap")
    p.add_argument("--headed", action="store_true", help="show the browser window")
    p.add_argument("--no-browser-profile", action="store_true", help="fresh browser profile, nothing kept")
    p.add_argument("--no-stream", action="store_true", help="do not stream replies")
    p.add_argument("--no-learn", action="store_true", help="write no memory: no distillation, ledger or archive "
                   "(= GA_LEARN=0)")
    p.add_argument("-q", "--quiet", action="store_true", help="only tool lines and the answer")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    return p


def settings_from(args: argparse.Namespace) -> Settings:
    for flag in ("max_turns", "max_tokens", "max_time"):
        if getattr(args, flag) is not None and getattr(args, flag) < 0:
            raise ConfigError(f"--{flag.replace('_', '-')} must be 0 (no limit) or more")
    interactive = sys.stdin.isatty() and not args.autonomous
    return load_settings(
        model="local" if args.local else args.model, workdir=args.workdir, json=args.json, autonomous=not interactive,
        max_turns=args.max_turns, max_tokens=args.max_tokens, max_time=args.max_time,
        mode="plan" if args.plan else "confirm" if args.confirm else args.mode or "default",
        allow_paths=[p.expanduser().resolve() for p in args.allow_path], sandbox=args.sandbox or None,
        headed=args.headed or None, browser_profile=False if args.no_browser_profile else None,
        stream=False if args.no_stream else None, learn=False if args.no_learn else None,
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in COMMANDS:
        return importlib.import_module(COMMANDS[argv[0]]).main(argv[1:])
    if argv and argv[0] == "run":
        argv = argv[1:]
    return run_command(argv)


def run_command(argv: list[str]) -> int:
    """Start or resume a task."""
    parser = build_parser()
    args = parser.parse_args(argv)  # unknown flags: argparse prints usage and exits 2
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.answer is not None and not args.resume:
        parser.error("--answer goes with --resume RUN_ID")
    if not args.task and not args.resume:
        parser.error("give a task, or --resume RUN_ID")
    if args.task and args.resume:
        parser.error("give either a task or --resume RUN_ID, not both")
    try:
        settings = settings_from(args)
        from ga.session import run_task  # the heavy imports wait until the flags are known good

        given = frozenset(k for k, flag in (("workdir", args.workdir), ("model", args.model or args.local),
                                            ("sandbox", args.sandbox),
                                            ("mode", args.plan or args.confirm or args.mode),
                                            ("allow_paths", args.allow_path), ("learn", args.no_learn)) if flag)
        outcome = run_task(settings, task=args.task, resume=args.resume, answer=args.answer, quiet=args.quiet,
                           given=given)
    except (ConfigError, AgentStop) as e:  # AgentStop here: a failure before the loop started
        print(f"ga: {e}", file=sys.stderr)
        if args.json:  # a harness reading stdout still gets the documented object
            usage = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
            print(json.dumps({"run_id": args.resume, "status": "error", "answer": str(e), "usage": usage,
                              "tool_calls": 0}))
        return e.exit_code if isinstance(e, AgentStop) else EXIT_USAGE
    if args.json:
        print(json.dumps(outcome.as_json(), ensure_ascii=False))
    return outcome.exit_code
