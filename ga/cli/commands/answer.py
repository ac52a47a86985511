"""ga answer RUN_ID "TEXT": answer the question a run paused on; the run continues in the background. The answer
goes into the run's mailbox (RUN_DIR/inbox), so it is never lost: a later `--resume RUN_ID` finds it when the run
cannot resume here; a running run reads it as the human's message at its next turn."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ga.cli.commands import run_folder
from ga.invocation import invocation
from ga.runs.detach import DetachFailed, spawn
from ga.runs.folder import read_state
from ga.runs.liveness import effective_status
from ga.runs.mailbox import post


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog=f"{invocation()} answer", description="Answer a paused run; it continues in the "
                                                                  "background.")
    p.add_argument("run_id", help="a run id or a unique prefix of one")
    p.add_argument("text", help='the answer (a number picks that candidate; "-" reads it from stdin)')
    args = p.parse_args(argv)
    folder = run_folder(args.run_id)
    run_id = folder.name
    if not _waiting(folder):  # said before asking for an answer that could go nowhere
        return 1
    text = _typed(folder) if args.text == "-" else args.text
    if text is None:
        return 1
    if not text.strip():
        print("ga: the answer is empty", file=sys.stderr)
        return 2
    if not (status := _waiting(folder)):
        return 1
    path = post(folder, "answer", text)
    if status == "paused":
        try:
            spawn(["--resume", run_id, *(["--jsonl"] if (read_state(folder) or {}).get("jsonl") else [])])
        except DetachFailed as e:
            if effective_status(folder, read_state(folder) or {}) != "running":  # else another ga resumed it
                print(f"ga: the answer is saved ({path}), but run {run_id} could not resume here:\n{e}\n"
                      f"Resume it with: {invocation()} --resume {run_id}", file=sys.stderr)
                return e.exit_code
        else:
            print(f"Answered; run {run_id} continues in the background. Follow it with: {invocation()} tail {run_id}")
            return 0
    print(f"Delivered to run {run_id}: it reads it at its next turn.")
    return 0


def _waiting(folder: Path) -> str:
    """The run's status when it can take an answer (running or paused); else why not is said and it is ""."""
    status = effective_status(folder, read_state(folder) or {})
    if status in ("running", "paused"):
        return status
    print(f"ga: run {folder.name} is {status}, not waiting for an answer. To continue it with a message: "
          f'{invocation()} --resume {folder.name} --answer "..."', file=sys.stderr)
    return ""


def _typed(folder: Path) -> str | None:
    """The answer from stdin: on a terminal, the question first and one line typed (None: Ctrl-D, nothing sent)."""
    if not sys.stdin.isatty():
        return sys.stdin.read()
    from rich.console import Console

    from ga.cli.questions import ask_prompt

    try:
        asked = json.loads((folder / "outbox" / "question.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        asked = {}
    asked = asked if isinstance(asked, dict) else {}
    console = Console(stderr=True, highlight=False, markup=False, emoji=False)
    try:
        return ask_prompt(console, str(asked.get("question") or ""), [str(c) for c in asked.get("candidates") or []])
    except EOFError:
        print("nothing sent", file=sys.stderr)
        return None
