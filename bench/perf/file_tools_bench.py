"""File tools on big files and under a symlink race: peak memory, time, and what lands outside the workspace.

    python bench/perf/file_tools_bench.py                      # this checkout: 400 MB patch, 1 GiB append, race counts
    python bench/perf/file_tools_bench.py --tree DIR    # another checkout (e.g. `git archive main | tar -x -C DIR`)
    python bench/perf/file_tools_bench.py --patch-mb 40 --append-mb 100 --attempts 200     # smaller and quicker

Each case runs in a fresh interpreter (peak RSS is its own ru_maxrss) against real files on disk. The race: a
background thread swaps a folder of the workspace with a symlink to an outside folder (renameat2 RENAME_EXCHANGE)
while file_write / file_read run through it; the figures are how many calls wrote or read outside.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CASE = r"""
import json, os, resource, sys, time
from pathlib import Path
from tests.scripted import ScriptedTerminal
from ga.config import load_settings
from ga.tooling.dispatch import Dispatcher
from ga.tooling.spec import ToolContext
from ga.protocols import ToolCall
from tools import file_patch, file_read, file_write

def context(ws: Path) -> ToolContext:
    settings = load_settings(env={}, home=ws.parent / "home", workdir=ws)
    run_dir = ws.parent / "run"
    run_dir.mkdir(exist_ok=True)
    return ToolContext(settings=settings, run_dir=run_dir, ui=ScriptedTerminal())

def call(ctx, name, **args):
    spec = {"file_patch": file_patch, "file_read": file_read, "file_write": file_write}[name].SPEC
    return Dispatcher([spec]).dispatch([ToolCall(id="c", name=name, arguments=json.dumps(args))], ctx)[0]

def race(ws: Path, outside: Path, attempts: int) -> dict:
    import ctypes, threading
    libc = ctypes.CDLL(None, use_errno=True)
    inside, swap = ws / "d", ws / "swap"
    inside.mkdir()
    (inside / "secret.txt").write_text("inside\n")
    swap.symlink_to(outside)
    (outside / "secret.txt").write_text("OUTSIDE\n")
    ctx, stop = context(ws), threading.Event()
    def flip():
        while not stop.is_set():
            libc.renameat2(-100, os.fsencode(inside), -100, os.fsencode(swap), 2)
    sys.setswitchinterval(1e-5)
    threading.Thread(target=flip, daemon=True).start()
    writes = [call(ctx, "file_write", path=f"d/w{i}.txt", content="x") for i in range(attempts)]
    reads = [call(ctx, "file_read", path="d/secret.txt") for i in range(attempts)]
    stop.set()
    landed = sum(1 for p in outside.iterdir() if p.name != "secret.txt")
    return {"writes": attempts, "writes_outside": landed, "writes_ok": sum(not r.is_error for r in writes),
            "reads": attempts, "reads_outside": sum("OUTSIDE" in r.content for r in reads),
            "reads_ok": sum(not r.is_error for r in reads)}

case, ws = sys.argv[1], Path(sys.argv[2])
ctx = context(ws)
started = time.perf_counter()
if case == "patch-miss":
    result = call(ctx, "file_patch", path="big.txt", old_content="no such line anywhere\nnor this one", new_content="x")
elif case == "patch-hit":
    target = f"line {int(sys.argv[3]):7d} of the file"
    result = call(ctx, "file_patch", path="big.txt", old_content=target, new_content="patched")
elif case == "append":
    result = call(ctx, "file_write", path="big.txt", content="one more line\n", mode="append")
elif case == "race":
    print(json.dumps(race(ws, ws.parent / "outside", int(sys.argv[3]))))
    sys.exit(0)
took = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": round(took, 2), "peak_rss_mb": round(rss / 2**20), "is_error": result.is_error,
                  "content": result.content[:160]}))
"""


LINE_BYTES = len("line 1234567 of the file\n")


def make_file(path: Path, megabytes: int) -> None:
    """Numbered text lines, about `megabytes` MiB."""
    lines = megabytes * 2**20 // LINE_BYTES
    with open(path, "w") as f:
        for start in range(0, lines, 100_000):
            f.write("".join(f"line {n:7d} of the file\n" for n in range(start, min(lines, start + 100_000))))


def run_case(tree: Path, case: str, ws: Path, *extra: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", CASE, case, str(ws), *extra], cwd=tree, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(tree)}, check=False)
    if proc.returncode != 0:
        return {"crashed": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--patch-mb", type=int, default=400)
    parser.add_argument("--append-mb", type=int, default=1024)
    parser.add_argument("--attempts", type=int, default=200)
    args = parser.parse_args()
    tree = args.tree.resolve()
    print(f"tree: {tree}")
    with tempfile.TemporaryDirectory(prefix="ga-file-bench-") as tmp:
        for case, megabytes in (("patch-miss", args.patch_mb), ("patch-hit", args.patch_mb),
                                ("append", args.append_mb)):
            ws = Path(tmp) / case / "ws"
            ws.mkdir(parents=True)
            make_file(ws / "big.txt", megabytes)
            figures = run_case(tree, case, ws, str(megabytes * 2**20 // LINE_BYTES // 2))  # hit: the middle line
            print(f"{case:<11} {megabytes:>5} MiB file: {json.dumps(figures, ensure_ascii=False)}")
            (ws / "big.txt").unlink()
        ws = Path(tmp) / "race" / "ws"
        ws.mkdir(parents=True)
        (ws.parent / "outside").mkdir()
        print(f"race       {json.dumps(run_case(tree, 'race', ws, str(args.attempts)))}")


if __name__ == "__main__":
    main()
