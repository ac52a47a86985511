"""What the command line accepts: the subcommands (each imported only when used), a task's flags, and the
combinations of flags that are refused before anything starts."""

from __future__ import annotations

import argparse
from pathlib import Path

import ga
from ga.invocation import invocation

COMMANDS: dict[str, str] = {name: "memory.cli" if name == "memory" else f"ga.cli.commands.{name}" for name in (
    "runs", "tail", "answer", "stop", "schedule", "config", "bench", "memory", "models", "completion")}
"""Subcommand name → the module whose main(argv) -> exit code runs it (imported only when used)."""
EXIT_CODES = """exit codes:
  0    done
  1    failed or gave up
  2    usage or configuration error
  3    paused, waiting for a human: --resume RUN_ID --answer "..."
  4    a limit was reached (turns, tokens, time)
  130  interrupted (Ctrl-C or SIGTERM); the run is saved: --resume RUN_ID continues it"""
ENVIRONMENT = """environment: OPENAI_BASE_URL, OPENAI_API_KEY and GA_MODEL name the endpoint and the model; GA_HOME
(default ~/.ga) holds ga's data. Every variable ga reads: docs/configuration.md"""


def build_parser() -> argparse.ArgumentParser:
    prog = invocation()
    p = argparse.ArgumentParser(prog=prog, description=f"ga: a minimal general-purpose LLM agent. `{prog} \"task\"` "
                                "works on it in the current folder.\n"
                                f"commands: {', '.join(COMMANDS)} (`{prog} COMMAND --help`);\n"
                                f"`{prog} run TEXT` always starts a task, even one that names a command.",
                                epilog=f"{ENVIRONMENT}\n\n{EXIT_CODES}",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", nargs="?", help="what to do (none, on a terminal: a chat over one run; Ctrl-D ends it)")
    p.add_argument("-p", "--print", dest="print_task", metavar="TASK",
                   help="do TASK once and print the answer, never waiting for a human (= TASK --autonomous)")
    p.add_argument("--version", action="version", version=f"ga {ga.__version__}", help="print ga's version")
    models = p.add_mutually_exclusive_group()
    models.add_argument("--model", metavar="NAME", help="model name (default: $GA_MODEL)")
    models.add_argument("--local", action="store_true",
                   help="use the embedded local model (= --model local; provisioned into ~/.cache/ga on first use)")
    p.add_argument("--profile", metavar="NAME", help="the endpoint of [profiles.NAME] in GA_HOME/config.toml "
                   f"(see: {invocation()} config); a resumed run keeps its own unless given")
    p.add_argument("--workdir", type=Path, metavar="DIR", help="workspace folder (default: the current folder)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of the answer")
    out.add_argument("--jsonl", action="store_true",
                     help="stream one JSON event per line on stdout (turn, tool_start, tool_end, usage, stage, end)")
    p.add_argument("--autonomous", action="store_true",
                   help="never block on a human (implied when stdin is not a terminal)")
    p.add_argument("-r", "--resume", metavar="RUN_ID", help="continue a run that stopped, crashed or was paused "
                                                      "(a unique prefix of its id will do)")
    p.add_argument("-c", "--continue", "--last", dest="continue_run", action="store_true",
                   help="resume the newest run of this workspace; a task given with it is a follow-up message")
    p.add_argument("--answer", metavar="TEXT", help="with --resume: the answer to the question the run paused on")
    p.add_argument("--detach", action="store_true",
                   help="run in the background: print the run id and return (follow it with: tail RUN_ID)")
    p.add_argument("--detached-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--check", metavar="CMD",
                   help="what done means: run CMD in the workspace when the model answers (as code_run would); the "
                        "run is done only when it exits 0, otherwise its output goes back to the model (= GA_CHECK)")
    p.add_argument("--max-turns", type=int, metavar="N", help="model requests per run (default 100, 0 = no limit)")
    p.add_argument("--max-tokens", type=int, metavar="N", help="prompt+completion tokens per run (0 = no limit)")
    p.add_argument("--max-time", type=float, metavar="SECONDS", help="seconds per invocation (0 = no limit)")
    _how(p)
    return p


def _how(p: argparse.ArgumentParser) -> None:
    """How a task runs: its permission mode, the places and sandbox its tools have, what is shown."""
    modes = p.add_mutually_exclusive_group()
    modes.add_argument("--plan", action="store_true", help="only read-only tools run (= --mode plan)")
    modes.add_argument("--confirm", action="store_true", help="ask before every change (= --mode confirm)")
    modes.add_argument("--mode", choices=("default", "plan", "confirm"),
                       help="permission mode; a resumed run keeps its own unless given")
    p.add_argument("--allow-path", action="append", type=Path, default=[], metavar="DIR",
                   help="let the file tools reach DIR too (repeatable)")
    boxes = p.add_mutually_exclusive_group()
    boxes.add_argument("--sandbox", action="store_true",
                       help="run code_run inside bubblewrap (the default when it works)")
    boxes.add_argument("--no-sandbox", action="store_true", help="run code_run without the sandbox")
    p.add_argument("--headed", action="store_true", help="show the browser window")
    p.add_argument("--no-browser-profile", action="store_true", help="fresh browser profile, nothing kept")
    p.add_argument("--no-stream", action="store_true", help="do not stream replies")
    p.add_argument("--no-learn", action="store_true", help="write no memory: no learnt script, ledger or archive "
                   "(= GA_LEARN=0)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the answer (and errors)")
    p.add_argument("--raw", action="store_true", help="print the answer as the model wrote it, without rendering "
                   "its Markdown on a terminal")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also show ga's own decisions: escalation, compaction, the SOPs listed and why, permissions")


def check_combinations(parser: argparse.ArgumentParser, args: argparse.Namespace, *, chat: bool = False) -> None:
    if args.resume and args.continue_run:
        parser.error("give either --resume RUN_ID or --continue, not both")
    if args.answer is not None and not (args.resume or args.continue_run):
        parser.error("--answer goes with --resume RUN_ID (or --continue)")
    if args.continue_run and args.task and args.answer is not None:
        parser.error("with --continue, give a follow-up task or --answer, not both")
    if not args.task and not args.resume and not args.continue_run and not chat:
        parser.error("give a task, or --resume RUN_ID, or --continue (or nothing, on a terminal: a chat)")
    if args.task and args.resume:
        parser.error("give either a task or --resume RUN_ID, not both")
    if args.check is not None and not args.check.strip():
        parser.error("--check needs a command (e.g. --check 'python -m pytest -q')")
    if args.check and (args.plan or args.mode == "plan"):
        parser.error("--check verifies changes, and plan mode makes none: use one or the other")
