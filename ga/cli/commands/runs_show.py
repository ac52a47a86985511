"""ga runs show ID [--json] [--diffs]: one run in full: its task, status, usage, the files it changed, its outputs."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from ga.cli.commands import amount, run_folder
from ga.invocation import invocation
from ga.runs.folder import Run, read_state
from ga.runs.listing import describe
from ga.tooling.screen import clean, escaped_json

FILE_TOOLS = ("file_write", "file_patch")
ANSWER_LINES = 6
VERIFIED = {True: " · verified", False: " · not verified", None: ""}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{invocation()} runs show", description="One run in full: task, status, "
                                "verified, usage, the files it changed, where its outputs are.")
    p.add_argument("run_id", metavar="ID", help="a run id, or a unique prefix of one")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--diffs", action="store_true", help="also the diff of every change file_write and file_patch "
                   "made, in order")
    return p


def details(folder: Path, *, diffs: bool = False) -> dict:
    """The run's listing row, its answer and settings, the files the file tools wrote (each once, in order of first
    change), how many code_run calls ran (what a script changed is not tracked), and where its outputs are; `diffs`:
    also each change the file tools made, in order."""
    state = read_state(folder) or {}
    files: dict[str, dict] = {}
    scripts, changes = 0, []
    for event in Run(folder, state).events():
        info = event.get("details") or {}
        if event.get("type") != "result" or event.get("is_error"):
            continue
        if event.get("name") == "code_run":
            scripts += 1
        elif event.get("name") in FILE_TOOLS and info.get("path"):
            entry = files.setdefault(info["path"], {"path": info["path"], "created": False, "writes": 0})
            entry["writes"] += 1
            entry["created"] = entry["created"] or bool(info.get("created"))
            changes += [{"tool": event["name"], "path": info["path"], "diff": info["diff"]}] if info.get("diff") else []
    saved = sorted(p for p in (folder / "outputs").iterdir() if p.is_file()) if (folder / "outputs").is_dir() else []
    log = folder / "output.log"
    return {**describe(folder, state, time.time(), 0), "answer": state.get("answer", ""), "mode": state.get("mode"),
            "model": state.get("model"), "sandbox": state.get("sandbox"), "check": state.get("check") or None,
            "files_changed": list(files.values()), "scripts_run": scripts, "folder": str(folder),
            "trajectory": str(folder / "trajectory.jsonl"), "outputs": [str(p) for p in saved],
            "outputs_bytes": sum(p.stat().st_size for p in saved), "log": str(log) if log.is_file() else None,
            **({"diffs": changes} if diffs else {})}


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else "?"


def _place(path: str, workdir: str | None) -> str:
    if workdir and Path(path).is_relative_to(workdir):
        return os.path.relpath(path, workdir)
    return path


def text(d: dict) -> str:
    u = d["usage"] or {}
    prompt, cached = int(u.get("prompt_tokens", 0)), int(u.get("cached_tokens", 0) or 0)
    share = f", {cached * 100 // prompt}% cached" if cached and prompt else ""
    lines = [f"run       {d['run_id']}", f"task      {' '.join(str(d['task']).split())}",
             f"status    {d['status']}{VERIFIED[d['verified']]}" + (f" (check: {d['check']})" if d["check"] else ""),
             f"where     {d['workdir']} · {d['model'] or '?'} · {d['mode'] or 'default'} mode"
             + (" · sandboxed" if d["sandbox"] else ""),
             f"time      started {_when(d['created'])}, last active {_when(d['updated'])}",
             f"usage     {d['turns']} turns · {int(u.get('requests', 0))} requests · {prompt:,} in{share} / "
             f"{int(u.get('completion_tokens', 0)):,} out tokens · {d['tool_calls'] or 0} tool calls"]
    changed = [f"{_place(f['path'], d['workdir'])}{' (new)' if f['created'] else ''}" for f in d["files_changed"]]
    lines.append(f"files     {', '.join(changed) if changed else 'none written by file_write or file_patch'}")
    if d["scripts_run"]:
        lines.append(f"          and {d['scripts_run']} code_run call(s), whose changes are not tracked")
    if said := (d["answer"] or d["message"] or "").strip().splitlines():
        lines += [f"{'answer' if d['answer'] else 'message':<9} {said[0]}", *(f"{'':<10}{s}" for s in
                                                                              said[1:ANSWER_LINES])]
        lines[-1] += f" … ({len(said) - ANSWER_LINES} more lines)" if len(said) > ANSWER_LINES else ""
    lines.append(f"outputs   {d['folder']}/ (trajectory.jsonl, state.json)")
    if d["outputs"]:
        lines.append(f"          {len(d['outputs'])} full output(s) in outputs/ ({amount(d['outputs_bytes'])})")
    if d["log"]:
        lines.append(f"          {d['log']} (what the background run printed)")
    if d["status"] == "paused":
        lines.append(f'next      {invocation()} answer {d["run_id"]} "..."')
    elif d["status"] in ("limit", "interrupted", "failed", "crashed", "stalled"):
        lines.append(f"next      {invocation()} --resume {d['run_id']}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    d = details(run_folder(args.run_id), diffs=args.diffs)
    # what the run's task, answer and files say is shown, never obeyed by the terminal (OSC 52, clear-screen...)
    print(escaped_json(json.dumps(d, ensure_ascii=False)) if args.json else clean(text(d)))
    for change in d["diffs"] if args.diffs and not args.json else []:
        print(f"\n# {change['tool']} {clean(_place(str(change['path']), d['workdir']))}")
        print(clean(change["diff"]).rstrip("\n"))
    return 0
