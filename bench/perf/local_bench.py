"""The embedded model (--local) end to end, through the real CLI: a one-word reply, the README's example and a
multi-turn task, cold and warm. Needs the model provisioned (`python run.py models pull`).

    python bench/perf/local_bench.py reply [--rounds 2]     "Reply with one word: WORD": cold (no saved prefix),
                                                            cold with the saved prefix, warm (the server kept)
    python bench/perf/local_bench.py readme [--rounds 1]    the README's example, the same three ways
        [--ways cold saved warm]                            only some of them (the README's example is long)
    python bench/perf/local_bench.py task [--turns 10]      a multi-turn task: per turn, prompt tokens evaluated
                                                            vs new, and its wall time

Each run prints its wall time, when the server was ready and when the run started, the time to the first token
(the first reply's arrival less its other tokens at the server's pace), prompt tokens evaluated and reused (the
server's own counts, from its log) and the server's pace during the run: the physical limit to compare with
(bench/perf/local_server_bench.py measures it alone). The machine is usually shared: every line says the load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.perf.local_server_bench import call, first_request, load  # noqa: E402
from ga.local import prefix  # noqa: E402
from ga.local.endpoint import local_cache  # noqa: E402
from ga.local.provision import is_ready  # noqa: E402
from ga.local.server_folder import folder_of  # noqa: E402
from ga.local.shared import stop  # noqa: E402

TIMING = re.compile(r"prompt eval time =\s+([\d.]+) ms /\s+(\d+) tokens.*?\n\s+eval time =\s+([\d.]+) ms /\s+(\d+) "
                    r"tokens", re.DOTALL)
README_TASK = "Summarise README.md in three bullet points"
TEN_TURNS = ("Read the files part01.txt to part10.txt in this folder with file_read, one file per turn and in order; "
             "each holds one number. Then answer with the sum of the ten numbers.")


def ga_run(task: str, workspace: Path, home: Path, keep: str, *extra: str) -> dict:
    """One real `run.py --local --jsonl` run: its events with the seconds since the command started, its wall time,
    and the server's own timings of its requests (from the part of the server's log this run added)."""
    log = folder_of(local_cache()).log
    offset = log.stat().st_size if log.exists() else 0
    env = {**os.environ, "GA_HOME": str(home), "GA_LOCAL_KEEP_ALIVE": keep}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), "--local", "--jsonl", "--autonomous", *extra, task],
                            cwd=workspace, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    events = []
    for line in proc.stdout:
        if line.startswith("{"):
            events.append({**json.loads(line), "at": time.monotonic() - started})
    stderr = proc.stderr.read()
    proc.wait()
    wall = time.monotonic() - started
    notices = " ".join(e.get("text", "") for e in events if e["type"] == "notice")
    ready = re.search(r"ready at \S+ in ([\d.]+) s \((\w[\w ]*)\)", notices + stderr)
    text = log.read_text(errors="replace")
    tail = text if ready and ready[2] == "started" else text[offset:]  # a new server starts a new log
    timings = [(float(a), int(b), float(c), int(d)) for a, b, c, d in TIMING.findall(tail)]
    return {"events": events, "wall": wall, "timings": timings, "stderr": stderr, "code": proc.returncode,
            "ready_s": float(ready[1]) if ready else None, "how": ready[2] if ready else "?"}


def per_request(run: dict) -> list[dict]:
    """Each request: prompt tokens, those served from the cache, those evaluated (the server's count), its time."""
    totals = [e for e in run["events"] if e["type"] == "usage"]
    turns = [e for e in run["events"] if e["type"] == "turn"]
    counts = ("prompt_tokens", "cached_tokens", "completion_tokens")
    rows, before = [], dict.fromkeys(counts, 0)
    for i, usage in enumerate(totals):
        row = {k: usage[k] - before[k] for k in counts}
        if i < len(run["timings"]):
            pp_ms, evaluated, tg_ms, generated = run["timings"][i]
            row.update(evaluated=evaluated, pp_ms=pp_ms, tg_ms=tg_ms, generated=generated)
        row["at"] = turns[i]["at"] if i < len(turns) else usage["at"]
        rows.append(row)
        before = usage
    return rows


def first_token_s(run: dict) -> float | None:
    """When the first reply's first token came, from the command's start: its arrival less the rest of its tokens
    at the server's generation pace."""
    rows = per_request(run)
    if not rows or "tg_ms" not in rows[0]:
        return None
    r = rows[0]
    return r["at"] - r["tg_ms"] / 1000 * (r["generated"] - 1) / max(1, r["generated"])


def describe_run(name: str, run: dict) -> str:
    rows = per_request(run)
    prompt = sum(r["prompt_tokens"] for r in rows)
    evaluated = sum(r.get("evaluated", r["prompt_tokens"] - r["cached_tokens"]) for r in rows)
    pp = [r["evaluated"] / (r["pp_ms"] / 1000) for r in rows if r.get("pp_ms") and r["evaluated"] > 20]
    tg = [r["generated"] / (r["tg_ms"] / 1000) for r in rows if r.get("tg_ms") and r["generated"] > 1]
    ttft = first_token_s(run)
    pace = (f"; server pace: prompt {statistics.median(pp):.0f} tok/s" if pp else "") + (
        f", generation {statistics.median(tg):.1f} tok/s" if tg else "")
    begun = next((e["at"] for e in run["events"] if e["type"] == "start"), 0)
    busy = sum(r.get("pp_ms", 0) + r.get("tg_ms", 0) for r in rows) / 1000  # the model's own work
    return (f"{name:20s} wall {run['wall']:6.1f} s · server {run['how']} in {run['ready_s'] or 0:.1f} s · run started "
            f"at {begun:.1f} s · first token at {ttft or 0:.1f} s · model busy {busy:.1f} s · {len(rows)} requests, "
            f"prompt {prompt:,} tokens, evaluated {evaluated:,}, reused {prompt - evaluated:,}{pace} · exit "
            f"{run['code']} ({load()})")


def hide_prefixes() -> Path:
    """Move the saved prefixes aside (for a truly cold start); returns where, for put_back."""
    folder = local_cache().root / "prefix"
    aside = folder.with_name("prefix.aside")
    shutil.rmtree(aside, ignore_errors=True)
    if folder.exists():
        folder.rename(aside)
    return aside


def put_back(aside: Path) -> None:
    folder = aside.with_name("prefix")
    if aside.exists():
        shutil.rmtree(folder, ignore_errors=True)
        aside.rename(folder)


WORDS = ("hello", "goodbye", "thanks", "yes", "no", "maybe", "today", "never", "always")


WAYS = ("cold", "saved", "warm")


def reply_bench(rounds: int, task: str, extra: list[str], ways: tuple[str, ...] = WAYS) -> None:
    """Cold (no saved prefix), cold with the saved prefix, warm (the server kept from the run before), or some of
    them (a saved prefix and a warm server are made by a short run when the way before is left out). The word
    changes from run to run, as tasks do."""
    with tempfile.TemporaryDirectory() as tmp:
        workspace, home = Path(tmp) / "ws", Path(tmp) / "home"
        workspace.mkdir()
        if task == README_TASK:
            shutil.copy(REPO / "README.md", workspace / "README.md")
        words = iter(WORDS * rounds)
        for r in range(rounds):
            stop(local_cache())
            if "cold" in ways:
                aside = hide_prefixes()
                try:
                    run = ga_run(task.format(word=next(words)), workspace, home, "0", *extra)
                    print(describe_run(f"{r + 1} cold", run), flush=True)
                finally:
                    put_back(aside)
            elif not any(prefix.folder(local_cache()).glob("*.bin")):
                ga_run("Reply with one word: ready", workspace, home, "0", "--no-learn")  # a prefix saved
            for way, name in (("saved", "cold, prefix saved"), ("warm", "warm")):
                if way in ways:
                    run = ga_run(task.format(word=next(words)), workspace, home, "300", *extra)
                    print(describe_run(f"{r + 1} {name}", run), flush=True)
                elif way == "saved" and "warm" in ways:
                    ga_run("Reply with one word: ready", workspace, home, "300", "--no-learn")  # a warm server
        stop(local_cache())


def fixed_prefix_tokens() -> int:
    """Tokens of a run's system turn (system prompt and tool schemas), counted by the running server."""
    state = json.loads(folder_of(local_cache()).state.read_text())
    key = folder_of(local_cache()).key.read_text().strip()
    root = f"http://127.0.0.1:{state['port']}"
    messages, tools = first_request()
    prompt = call(root, "/apply-template", {"messages": messages, "tools": tools}, key)["prompt"]
    cut = prefix.run_prefix(prompt, lambda path, body: call(root, path, body, key))
    return len(call(root, "/tokenize", {"content": cut}, key)["tokens"])


def task_bench(turns: int) -> None:
    """A multi-turn task, cold with the saved prefix (GA_LOCAL_KEEP_ALIVE=0), then warm: per turn, wall time and
    prompt tokens evaluated vs new. New: the growth of the conversation (those not in the previous request; for the
    first request, those after the fixed system turn)."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        for name in ("cold", "warm"):  # the same task in another folder: its first message differs, as tasks do
            (Path(tmp) / name).mkdir()
            for i in range(1, 11):
                (Path(tmp) / name / f"part{i:02d}.txt").write_text(f"{i * 7}\n")
        stop(local_cache())
        ga_run("Reply with one word: ready", Path(tmp), home, "0", "--no-learn")  # a prefix saved
        cold = ga_run(TEN_TURNS, Path(tmp) / "cold", home, "300", "--max-turns", str(turns), "--no-learn")
        fixed = fixed_prefix_tokens()
        warm = ga_run(TEN_TURNS, Path(tmp) / "warm", home, "300", "--max-turns", str(turns), "--no-learn")
        stop(local_cache())
    print(f"the fixed system turn: {fixed:,} tokens")
    for name, run in (("cold, prefix saved", cold), ("warm", warm)):
        print(describe_run(name, run))
        turn_table(per_request(run), fixed)


def turn_table(rows: list[dict], fixed: int) -> None:
    print("turn | prompt | new | evaluated | reused | prompt eval s | generated | turn wall s")
    previous, last_at, new_total, evaluated_total = None, 0.0, 0, 0
    for i, r in enumerate(rows, 1):
        new = max(0, r["prompt_tokens"] - (previous["prompt_tokens"] if previous else fixed))
        evaluated = r.get("evaluated", r["prompt_tokens"] - r["cached_tokens"])
        new_total, evaluated_total = new_total + new, evaluated_total + evaluated
        print(f"{i:4d} | {r['prompt_tokens']:6,} | {new:5,} | {evaluated:9,} | {r['prompt_tokens'] - evaluated:6,} | "
              f"{r.get('pp_ms', 0) / 1000:13.1f} | {r.get('generated', r['completion_tokens']):9} | "
              f"{r['at'] - last_at:11.1f}")
        previous, last_at = r, r["at"]
    ratio = evaluated_total / max(1, new_total)
    print(f"evaluated {evaluated_total:,} prompt tokens for {new_total:,} new ones: {ratio:.2f}× (target ≤ 1.5×)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("reply")
    r.add_argument("--rounds", type=int, default=2)
    r.add_argument("--task", default="Reply with one word: {word}")
    r.add_argument("--ways", nargs="+", choices=WAYS, default=WAYS)
    m = sub.add_parser("readme")
    m.add_argument("--rounds", type=int, default=1)
    m.add_argument("--ways", nargs="+", choices=WAYS, default=WAYS)
    sub.add_parser("task").add_argument("--turns", type=int, default=10)
    opts = parser.parse_args()
    if not is_ready(local_cache()):
        sys.exit("the local model is not provisioned: python run.py models pull")
    print(f"{os.cpu_count()} CPUs, {load()}")
    if opts.what == "reply":
        reply_bench(opts.rounds, opts.task, ["--no-learn"], tuple(opts.ways))
    elif opts.what == "readme":
        reply_bench(opts.rounds, README_TASK, [], tuple(opts.ways))
    else:
        task_bench(opts.turns)


if __name__ == "__main__":
    main()
