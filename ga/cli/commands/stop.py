"""ga stop RUN_ID [--now] [--wait]: end a running run after its current tool, through its mailbox (RUN_DIR/inbox);
--now also sends SIGTERM: it stops at once, as at Ctrl-C (a running program is killed). Saved either way."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

from ga.cli.commands import run_folder
from ga.invocation import invocation
from ga.runs.folder import read_state
from ga.runs.liveness import effective_status, process_alive
from ga.runs.mailbox import post


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog=f"{invocation()} stop", description="Stop a running run after its current tool.")
    p.add_argument("run_id", help="a run id or a unique prefix of one")
    p.add_argument("--now", action="store_true", help="do not wait for the current tool or model reply (SIGTERM)")
    p.add_argument("--wait", action="store_true", help="return only once the run has ended")
    args = p.parse_args(argv)
    folder = run_folder(args.run_id)
    run_id = folder.name
    state = read_state(folder) or {}
    status = effective_status(folder, state)
    if status != "running":
        print(f"ga: run {run_id} is {status}, not running: nothing to stop.", file=sys.stderr)
        return 1
    post(folder, "stop")
    if args.now and isinstance(state.get("pid"), int) and process_alive(state):  # the same process, not a reused pid
        os.kill(state["pid"], signal.SIGTERM)
    print(f"Stop requested: run {run_id} {'stops now' if args.now else 'ends after its current tool'}.")
    if args.wait:
        while process_alive(read_state(folder) or {}, folder):
            time.sleep(0.1)
        print(f"Run {run_id} is {effective_status(folder, read_state(folder) or {})}.")
    return 0
