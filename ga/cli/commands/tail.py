"""python run.py tail RUN_ID: follow a run's progress lines live; exit with its exit code when it ends.

A background run (--detach) is followed through RUN_DIR/output.log, exactly as it printed; any other run through
its trajectory, one short line per event.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ga.cli.commands import run_folder
from ga.invocation import invocation
from ga.runs.detach import OUTPUT
from ga.runs.folder import read_state
from ga.runs.liveness import EXIT_CODES, effective_status, process_alive
from ga.tooling.screen import clean, one_line

POLL = 0.1


class Follower:
    """What was appended to a file since the last read, in whole lines (a line still being written waits)."""

    def __init__(self, path: Path):
        self.path, self.offset, self.rest = path, 0, b""

    def read(self, final: bool = False) -> bytes:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            data = b""
        self.offset += len(data)
        data, self.rest = self.rest + data, b""
        if not final and data and not data.endswith(b"\n"):
            head, _, self.rest = data.rpartition(b"\n")
            data = head + b"\n" if head else b""
        return data


def render(line: bytes) -> str:
    """One trajectory event as a progress line ("" for events not worth one), its text shown, never obeyed."""
    try:
        event = json.loads(line)
    except ValueError:
        return ""
    kind = event.get("type")
    if kind == "message" and event["message"].get("role") == "assistant":
        return one_line(str(event["message"].get("content") or ""), 300)
    if kind == "result":
        head = next(iter(clean(str(event.get("content", ""))).splitlines()), "")[:160]
        return one_line(f"{'✗' if event.get('is_error') else '✓'} {event.get('name')}: {head}", 400)
    if kind == "stage":
        return one_line(f"! escalation stage {event.get('stage')}: {event.get('reason')}", 400)
    if kind in ("status", "notice"):
        return one_line(f"· {event.get('status', '')} {event.get('message') or event.get('text') or ''}", 2000)
    return ""


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog=f"{invocation()} tail",
                                description="Follow a run until it ends; exit with its code.")
    p.add_argument("run_id", help="a run id or a unique prefix of one")
    args = p.parse_args(argv)
    folder = run_folder(args.run_id)
    detached = (folder / OUTPUT).exists()
    source = Follower(folder / (OUTPUT if detached else "trajectory.jsonl"))
    try:
        return _follow(folder, detached, source)
    except KeyboardInterrupt:  # Ctrl-C stops the following, not the run
        if process_alive(read_state(folder) or {}, folder):
            print(f"\nga: stopped following run {folder.name}; it goes on (tail it again, or stop it with: "
                  f"{invocation()} stop {folder.name})", file=sys.stderr)
        return 130


def _follow(folder: Path, detached: bool, source: Follower) -> int:
    out = sys.stdout.buffer
    while True:
        state = read_state(folder) or {}
        running = process_alive(state, folder)  # read before the output: what it printed last is then in the file
        data = source.read(final=not running)
        if detached:  # whole lines: an escape sequence is never split between two reads
            out.write(clean(data.decode("utf-8", errors="replace")).encode())
        else:
            out.write("".join(f"{text}\n" for raw in data.splitlines() if (text := render(raw))).encode())
        out.flush()
        if not running:
            break
        time.sleep(POLL)
    status = effective_status(folder, read_state(folder) or {})
    if status == "crashed":
        print(f"ga: run {folder.name} crashed (its process is gone): resume with {invocation()} --resume "
              f"{folder.name}", file=sys.stderr)
    elif status == "paused":  # what a paused run waits for, with its own id
        print(f"answer with: {invocation()} answer {folder.name} \"...\"", file=sys.stderr)
    return EXIT_CODES.get(status, 1)
