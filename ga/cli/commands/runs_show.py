"""python run.py runs show ID [--json]: one run in full: its task, status, verification, usage, the files it changed and
where its outputs are."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from ga.cli.commands import run_folder
from ga.cli.next_steps import resume
from ga.invocation import invocation
from ga.runs.folder import Run, read_state
from ga.runs.listing import describe
from ga.tooling.screen import clean, escaped_json

FILE_TOOLS = ("file_write", "file_patch")
ANSWER_LINES = 6


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{invocation()} runs show", description="One run in full: task, status, "
                                "verified, usage, the files it changed, where its outputs are.")
    p.add_argument("run_id", metavar="ID", help="a run id, or a unique prefix of one")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--diffs", action="store_true", help="also the diff of every change file_write and file_patch "
                   "made, in order")
    return p


def changes(run: Run) -> tuple[list[dict], int]:
    """The files the file tools wrote (each once, in order of first change), and how many code_run calls ran: what a
    script changed is not tracked."""
    files: dict[str, dict] = {}
    scripts = 0
    for event in run.events():
        if event.get("type") != "result" or event.get("is_error"):
            continue
        details = event.get("details") or {}
        if event.get("name") == "code_run":
            scripts += 1
        elif event.get("name") in FILE_TOOLS and details.get("path"):
            entry = files.setdefault(details["path"], {"path": details["path"], "created": False, "writes": 0})
            entry["writes"] += 1
            entry["created"] = entry["created"] or bool(details.get("created"))
    return list(files.values()), scripts


def outputs(folder: Path) -> dict:
    """Where a run's outputs are: its folder, the full outputs of truncated results, a background run's log."""
    saved = sorted(p for p in (folder / "outputs").iterdir() if p.is_file()) if (folder / "outputs").is_dir() else []
    log = folder / "output.log"
    return {"folder": str(folder), "trajectory": str(folder / "trajectory.jsonl"),
            "outputs": [str(p) for p in saved], "outputs_bytes": sum(p.stat().st_size for p in saved),
            "log": str(log) if log.is_file() else None}


def details(folder: Path) -> dict:
    state = read_state(folder) or {}
    run = Run(folder, state)
    row = describe(folder, state, time.time(), 0)
    files, scripts = changes(run)
    return {**row, "answer": state.get("answer", ""), "mode": state.get("mode"), "model": state.get("model"),
            "sandbox": state.get("sandbox"), "check": state.get("check") or None, "files_changed": files,
            "scripts_run": scripts, **outputs(folder)}


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else "?"


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} kB" if n >= 1000 else f"{n} bytes"


def _place(path: str, workdir: str | None) -> str:
    if workdir and Path(path).is_relative_to(workdir):
        return os.path.relpath(path, workdir)
    return path


def _status(d: dict) -> str:
    verified = {True: " · verified", False: " · not verified", None: ""}[d["verified"]]
    return f"{d['status']}{verified}"


def text(d: dict) -> str:
    u = d["usage"] or {}
    prompt, cached = int(u.get("prompt_tokens", 0)), int(u.get("cached_tokens", 0) or 0)
    share = f", {cached * 100 // prompt}% cached" if cached and prompt else ""
    lines = [f"run       {d['run_id']}", f"task      {' '.join(str(d['task']).split())}",
             f"status    {_status(d)}" + (f" (check: {d['check']})" if d["check"] else ""),
             f"where     {d['workdir']} · {d['model'] or '?'} · {d['mode'] or 'default'} mode"
             + (" · sandboxed" if d["sandbox"] else ""),
             f"time      started {_when(d['created'])}, last active {_when(d['updated'])}",
             f"usage     {d['turns']} turns · {int(u.get('requests', 0))} requests · {prompt:,} in{share} / "
             f"{int(u.get('completion_tokens', 0)):,} out tokens · {d['tool_calls'] or 0} tool calls"]
    changed = [f"{_place(f['path'], d['workdir'])}{' (new)' if f['created'] else ''}" for f in d["files_changed"]]
    lines.append(f"files     {', '.join(changed) if changed else 'none written by file_write or file_patch'}")
    if d["scripts_run"]:
        lines.append(f"          and {d['scripts_run']} code_run call(s), whose changes are not tracked")
    said = (d["answer"] or d["message"] or "").strip().splitlines()
    if said:
        more = f" … ({len(said) - ANSWER_LINES} more lines)" if len(said) > ANSWER_LINES else ""
        lines += [f"{'answer' if d['answer'] else 'message':<9} {said[0]}", *(f"          {s}" for s in
                                                                              said[1:ANSWER_LINES])]
        lines[-1] += more
    lines.append(f"outputs   {d['folder']}/ (trajectory.jsonl, state.json)")
    if d["outputs"]:
        lines.append(f"          {len(d['outputs'])} full output(s) in outputs/ ({_size(d['outputs_bytes'])})")
    if d["log"]:
        lines.append(f"          {d['log']} (what the background run printed)")
    if hint := resume(d["run_id"], d["status"]):
        lines.append(f"next      {hint}")
    return "\n".join(lines)


def diffs(run: Run) -> list[dict]:
    """Each change the file tools made, in order: {"tool", "path", "diff"}."""
    return [{"tool": e.get("name"), "path": (e.get("details") or {}).get("path"), "diff": e["details"]["diff"]}
            for e in run.events() if e.get("type") == "result" and not e.get("is_error")
            and e.get("name") in FILE_TOOLS and (e.get("details") or {}).get("diff")]


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    folder = run_folder(args.run_id)
    d = details(folder)
    if args.diffs:
        d["diffs"] = diffs(Run(folder, read_state(folder) or {}))
    # what the run's task, answer and files say is shown, never obeyed by the terminal (OSC 52, clear-screen...)
    print(escaped_json(json.dumps(d, ensure_ascii=False)) if args.json else clean(text(d)))
    for change in d["diffs"] if args.diffs and not args.json else []:
        print(f"\n# {change['tool']} {clean(_place(str(change['path']), d['workdir']))}")
        print(clean(change["diff"]).rstrip("\n"))
    return 0
