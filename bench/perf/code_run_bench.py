"""code_run benchmark: overhead against bare subprocess.run, agent memory under a 100 MB flood, policy speed,
and the command policy's corpus (tests/tools/guard/corpus.py) with and without the sandbox.

    python bench/perf/code_run_bench.py            # everything
    python bench/perf/code_run_bench.py corpus     # only the corpus figures
    python bench/perf/code_run_bench.py policy     # only the policy's speed

Targets: overhead ≤ 1.5×, RSS growth ≤ 50 MB, policy check < 5 ms per command. Both sides of a
ratio run in the same process, interleaved, so machine noise hits them alike. The corpus runs against a
throw-away HOME outside /tmp (bench_corpus.py): dangerous commands are executed only inside the sandbox.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.perf.bench_corpus import corpus_figures
from ga.config import load_settings
from ga.tooling.spec import ToolContext
from tests.scripted import ScriptedTerminal
from tests.tools.guard.corpus import DANGEROUS, EVERYDAY
from tools.code_run import SPEC
from tools.guard.policy import check_script

ROUNDS = 60


def make_ctx(root: Path) -> ToolContext:
    (root / "ws").mkdir()
    settings = load_settings(env={}, home=root / "home", workdir=root / "ws")
    run_dir = settings.runs_dir / "bench"
    run_dir.mkdir(parents=True)
    return ToolContext(settings=settings, run_dir=run_dir, ui=ScriptedTerminal(), call_id="bench")


def overhead(ctx: ToolContext, script: str, kind: str) -> tuple[float, float]:
    argv = [sys.executable, "-c", script] if kind == "python" else ["bash", "-c", script]
    bare, tool = [], []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        subprocess.run(argv, cwd=ctx.workspace, capture_output=True, check=False)
        bare.append(time.perf_counter() - t)
        t = time.perf_counter()
        ctx.settings.sandbox = False
        args = SPEC.check({"script": script, "type": kind}, ctx)
        SPEC.run(args, ctx)
        tool.append(time.perf_counter() - t)
    return statistics.median(bare), statistics.median(tool)


def flood_growth(ctx: ToolContext) -> tuple[float, float]:
    me = psutil.Process()
    before, peak, done = me.memory_info().rss, [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], me.memory_info().rss)
            time.sleep(0.005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    script = "import sys\nblock = ('x' * 99 + '\\n') * 10_000\nfor _ in range(100):\n    sys.stdout.write(block)"
    started = time.perf_counter()
    try:
        SPEC.run({"script": script, "timeout": 300}, ctx)
    finally:
        done.set()
        sampler.join()
    return (peak[0] - before) / 1e6, time.perf_counter() - started


def policy_speed(workspace: Path) -> tuple[float, float, float, int]:
    """Mean and worst per-command median (5 runs each: a median shrugs off scheduler noise), and the raw max."""
    corpus = [(c.script, c.kind) for c in DANGEROUS + EVERYDAY]
    check_script("echo warm-up", "bash", workspace=workspace, home=Path.home())
    medians, raw_max = [], 0.0
    for script, kind in corpus:
        timings = []
        for _ in range(5):
            t = time.perf_counter()
            check_script(script, kind, workspace=workspace, home=Path.home())
            timings.append(time.perf_counter() - t)
        medians.append(statistics.median(timings))
        raw_max = max(raw_max, *timings)
    return statistics.mean(medians) * 1e3, max(medians) * 1e3, raw_max * 1e3, len(corpus)


def print_policy_speed(workspace: Path) -> None:
    mean, worst, raw_max, count = policy_speed(workspace)
    print(f"policy check over {count} commands: mean {mean:.3f} ms, slowest command {worst:.3f} ms "
          f"(median of 5), single worst sample {raw_max:.2f} ms (target < 5 ms) {'ok' if worst < 5 else 'OVER'}")


def main() -> None:
    if sys.argv[1:] == ["corpus"]:
        corpus_figures()
        return
    if sys.argv[1:] == ["policy"]:
        with tempfile.TemporaryDirectory() as folder:
            print_policy_speed(Path(folder))
        return
    with tempfile.TemporaryDirectory() as folder:
        ctx = make_ctx(Path(folder))
        for script, kind in (("print('hello')", "python"), ("echo hello", "bash")):
            bare, tool = overhead(ctx, script, kind)
            verdict = "ok" if tool / bare <= 1.5 else "OVER TARGET"
            print(f"overhead {kind:6}: bare {bare * 1e3:6.1f} ms, code_run {tool * 1e3:6.1f} ms, "
                  f"ratio {tool / bare:.2f}× (target ≤ 1.5×) {verdict}")
        growth, took = flood_growth(ctx)
        print(f"100 MB output: agent RSS growth {growth:.1f} MB (target ≤ 50 MB) in {took:.2f} s "
              f"{'ok' if growth <= 50 else 'OVER TARGET'}")
        print_policy_speed(ctx.workspace)
    corpus_figures()


if __name__ == "__main__":
    main()
