"""ga tail RUN_ID: follow a run's progress lines live; exit with its exit code when it ends. A background run
(--detach) is followed through RUN_DIR/output.log, exactly as it printed; any other through its trajectory, one short
line per event."""

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
    folder = run_folder(p.parse_args(argv).run_id)
    try:
        return _follow(folder, detached=(folder / OUTPUT).exists())
    except KeyboardInterrupt:  # Ctrl-C stops the following, not the run
        if process_alive(read_state(folder) or {}, folder):
            print(f"\nga: stopped following run {folder.name}; it goes on (tail it again, or stop it with: "
                  f"{invocation()} stop {folder.name})", file=sys.stderr)
        return 130


def _follow(folder: Path, *, detached: bool) -> int:
    path, out = folder / (OUTPUT if detached else "trajectory.jsonl"), sys.stdout.buffer
    offset, rest = 0, b""
    while True:
        running = process_alive(read_state(folder) or {}, folder)  # read first: what it printed last is then there
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read()
        except FileNotFoundError:
            data = b""
        offset += len(data)
        data = rest + data
        cut = data.rfind(b"\n") + 1 if running else len(data)  # whole lines: a line being written waits
        data, rest = data[:cut], data[cut:]
        if detached:  # an escape sequence is never split between two reads
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
