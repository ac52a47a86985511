"""Command line: ga "task" [options] | ga --resume RUN_ID [--answer TEXT] | ga COMMAND (or python run.py ...).
A first word that names a command runs it (`help` and `version` too); any other starts a task, as does `ga run TEXT`."""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import ga
from ga.cli import logs, piped, warm
from ga.cli.arguments import COMMANDS, build_parser, check_combinations
from ga.errors import AgentStop, ConfigError
from ga.invocation import invocation
from ga.tooling.permissions import check_allow_paths
from ga.tooling.redact import redact

if TYPE_CHECKING:
    from ga.config import Settings

EXIT_USAGE = 2
NO_RUN = frozenset({"-h", "--help", "--version", "--detach"})  # this process starts no run: no SDK import


def wants_chat(args: argparse.Namespace) -> bool:
    """`ga` (or `ga --continue`, `ga --resume ID`) with no task on a terminal, and no program's output asked: a chat."""
    quiet_ways = args.json or args.jsonl or args.detach or args.detached_child or args.autonomous
    return not args.task and args.answer is None and not quiet_ways and sys.stdin.isatty() and sys.stdout.isatty()


def settings_from(args: argparse.Namespace, remembered: dict | None = None) -> Settings:
    """`remembered`: the endpoint a resumed run started with ({"base_url", "profile"}, never a key)."""
    for flag in ("max_turns", "max_tokens", "max_time"):
        value = getattr(args, flag)
        if value is not None and not 0 <= value < math.inf:  # NaN fails both
            raise ConfigError(f"--{flag.replace('_', '-')} must be a number, 0 (no limit) or more")
    why = ("--autonomous" if args.autonomous else "--jsonl" if args.jsonl else "a background run" if args.detached_child
           else "" if sys.stdin.isatty() else f"stdin is {piped.kind() or 'not a terminal'}")
    from ga.config import load_settings  # after warm.start(): reading the config overlaps the SDK's import

    return load_settings(
        model="local" if args.local else args.model, workdir=args.workdir, json=args.json, autonomous=bool(why),
        autonomous_why=why, profile=args.profile or (remembered or {}).get("profile") or None,
        remembered_url=(remembered or {}).get("base_url", ""),
        max_turns=args.max_turns, max_tokens=args.max_tokens, max_time=args.max_time,
        mode="plan" if args.plan else "confirm" if args.confirm else args.mode or "default",
        allow_paths=[p.expanduser().resolve() for p in args.allow_path],
        sandbox=True if args.sandbox else False if args.no_sandbox else None,
        headed=args.headed or None, browser_profile=False if args.no_browser_profile else None,
        stream=False if args.no_stream else None, learn=False if args.no_learn else None, check=args.check,
    )


def choose_sandbox(settings: Settings, args: argparse.Namespace) -> None:
    """--sandbox holds or the run is refused; every new run is sandboxed when bubblewrap works, on a terminal too
    (--no-sandbox opts out; a resumed run keeps its own choice)."""
    from tools import sandbox_problem

    if args.sandbox and (reason := sandbox_problem()):
        raise ConfigError(f"--sandbox cannot hold on this host: {reason}. Fix that, or run with --no-sandbox.")
    if args.sandbox or args.no_sandbox or args.resume:
        settings.sandbox_why = ("--sandbox" if args.sandbox else "--no-sandbox" if args.no_sandbox
                                else "as the run started")
        return
    reason = sandbox_problem()
    settings.sandbox, settings.sandbox_why = not reason, reason or "the default"
    if reason:
        print(f"ga: code_run runs without a sandbox: {reason}; --no-sandbox silences this.", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """The command line; Ctrl-C outside a run and a reader that went away (`ga runs | head -1`) end it quietly."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if (not argv or argv[0] not in (*COMMANDS, "help", "version")) and not NO_RUN.intersection(argv):
        warm.start()  # a run is coming: the SDK's import overlaps everything up to the model client (warm.py)
    try:
        code = dispatch(argv)
        sys.stdout.flush()  # here, not at exit: a buffered listing meets a closed pipe where it is handled
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        from ga.cli.pipes import EXIT_PIPE, reader_gone

        reader_gone(sys.stdout, say=True)
        reader_gone(sys.stderr)
        return EXIT_PIPE


def dispatch(argv: list[str]) -> int:
    if argv[:1] == ["help"]:  # `ga help [COMMAND]`: the top --help, or that command's
        if argv[1:] and argv[1] not in COMMANDS:
            print(f"ga: no command {argv[1]!r}; commands: {', '.join(COMMANDS)} (`{invocation()} help`)",
                  file=sys.stderr)
            return EXIT_USAGE
        argv = [*argv[1:2], "--help"]
    if argv and argv[0] in COMMANDS:
        try:
            return importlib.import_module(COMMANDS[argv[0]]).main(argv[1:])
        except ConfigError as e:  # a command's bad input (no such run, a bad job file): one message, exit 2
            print(redact(f"ga: {e}"), file=sys.stderr)
            return EXIT_USAGE
    if argv == ["version"]:
        print(f"ga {ga.__version__}")
        return 0
    return run_command(argv[1:] if argv[:1] == ["run"] else argv)


def run_command(argv: list[str]) -> int:
    """Start or resume a task."""
    parser = build_parser()
    args = parser.parse_args(argv)  # unknown flags: argparse prints usage and exits 2
    logs.configure(args.verbose)
    if args.print_task is not None:  # -p TASK, as Claude Code, Gemini CLI and Pi have it: once, unattended
        if args.task:
            parser.error("give the task once: as -p TASK or as the task, not both")
        args.task, args.autonomous = args.print_task, True
    piped.adopt(args)  # `… | ga`: the task comes on stdin
    chat_wanted = wants_chat(args)  # `ga` alone on a terminal
    check_combinations(parser, args, chat=chat_wanted)
    try:
        return _start(argv, args, chat_wanted=chat_wanted)
    except (ConfigError, AgentStop) as e:  # AgentStop here: a failure before the loop started
        print(redact(f"ga: {e}"), file=sys.stderr)
        code = e.exit_code if isinstance(e, AgentStop) else EXIT_USAGE
        if args.json or args.jsonl:  # a harness reading stdout still gets the documented object
            result = _empty_result(args.resume, "error", redact(str(e)))
            print(json.dumps({"type": "end", **result, "exit_code": code} if args.jsonl else result))
        return code


def _start(argv: list[str], args: argparse.Namespace, *, chat_wanted: bool) -> int:
    settings = settings_from(args)
    for line in check_allow_paths(settings.allow_paths, home=Path.home(), ga_home=settings.home):
        print(f"ga: {line}", file=sys.stderr)
    if args.detach:
        return detach_run(argv, args)
    if args.continue_run:
        _continue(args, settings)
    if args.resume:  # from a new shell too: the run's own profile and endpoint, the key from this shell
        settings = settings_from(args, _remembered(settings, args.resume))
    intake = piped.take(args)
    from ga.cli.compose import run_task  # the heavy imports wait until the flags are known good
    from tools import hide_own_environment

    hide_own_environment()  # before any child exists: /proc/<ga>/environ no longer shows the key
    choose_sandbox(settings, args)
    flags = {"workdir": args.workdir, "model": args.model or args.local or args.profile, "check": args.check,
             "sandbox": args.sandbox or args.no_sandbox, "mode": args.plan or args.confirm or args.mode,
             "allow_paths": args.allow_path, "learn": args.no_learn}
    given = frozenset(name for name, flag in flags.items() if flag)  # a resumed run keeps its own for the others
    if chat_wanted:
        from ga.cli.chat import chat

        return chat(settings, resume=args.resume, given=given, quiet=args.quiet, raw=args.raw)
    return run_task(settings, task=args.task, resume=args.resume, answer=args.answer, quiet=args.quiet,
                    given=given, jsonl=args.jsonl, detached=args.detached_child, piped=intake, raw=args.raw).exit_code


def _continue(args: argparse.Namespace, settings: Settings) -> None:
    """--continue / --last: the newest run of this workspace; a task given with it is the follow-up message."""
    from ga.runs.folder import newest_run

    args.resume = newest_run(settings.runs_dir, settings.workdir)
    if args.resume is None:
        raise ConfigError(f"No run in this workspace ({settings.workdir}) to continue: start one with a task.")
    if args.task:
        args.answer, args.task = args.task, None


def _remembered(settings: Settings, resume: str) -> dict:
    from ga.runs.folder import Run
    from ga.tooling.boundary.trust import remembered_endpoint

    try:
        return remembered_endpoint(Run.open(settings.runs_dir, resume))
    except ConfigError:  # no such run: run_task says so
        return {}


def _empty_result(run_id: str | None, status: str, answer: str) -> dict:
    usage = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0}
    return {"run_id": run_id, "status": status, "answer": answer, "verified": None, "usage": usage, "tool_calls": 0,
            "model": None, "duration_s": None, "model_settings": None}


def detach_run(argv: list[str], args: argparse.Namespace) -> int:
    """--detach: the same command in the background; prints the run id (or --json's object) and returns."""
    from ga.runs.detach import DetachFailed, spawn

    given, env = piped.read_all().for_child() if piped.kind() else (None, None)  # read as this process would
    try:  # what the child says before its run exists (an error, --local's provisioning) shows as it comes
        run_id, _ = spawn([a for a in argv if a != "--detach"], echo=sys.stderr, timeout=None, stdin=given, env=env)
    except DetachFailed as e:
        if not e.shown:
            print(f"ga: {e}", file=sys.stderr)
        return e.exit_code
    print(json.dumps(_empty_result(run_id, "running", "")) if args.json else run_id, flush=True)
    if not args.json:
        print(f"follow it with: {invocation()} tail {run_id}", file=sys.stderr)
    return 0
