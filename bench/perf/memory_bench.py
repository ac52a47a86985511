"""Memory figures: SOP retrieval quality, prompt growth with the library's size, and retrieval time.

    python bench/perf/memory_bench.py [--part dev|heldout|all] [--show] [--only retrieval]

Retrieval runs the labelled set in bench/perf/memory_retrieval.yaml (task phrasings → the SOP a run should list
first, plus unrelated tasks that should list none) through the same code a run uses, at the set's own size and
padded to 200 SOPs with generated distractors. The tasks are split in two by a hash of their text: tune on
`--part dev` (with `--show` to see its misses), judge on `--part heldout`. Prints figures; asserts nothing.
Targets: hit@1 ≥ 0.90, hit@3 ≥ 0.97, unrelated tasks listing an SOP ≤ 5% (at 53 and at 200 SOPs);
≤ +300 tokens of fixed context for "Hello" from 0 to 200 SOPs; retrieval time well below a run's start-up time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.perf.memory_corpus import PARTS, distractors, labelled
from sop import ledger, retrieval
from sop.skill import Skill


def chinese(text: str) -> bool:
    return any(ord(c) > 0x2E80 for c in text)


def evaluate(skills: list[Skill], queries: list[dict], unrelated: list[str], *, show: bool) -> dict:
    """hit@1, hit@3 and the unrelated tasks that list an SOP: for all tasks, those whose SOP has no hand-written
    keywords (as a foreign library's would not) and those in Chinese."""
    plain = {s.name for s in skills if not s.metadata.get("keywords")}
    rows, misses = [], []
    for item in queries:
        names = [s.name for s, _ in retrieval.relevant(skills, item["q"])]
        rows.append((item, bool(names) and names[0] == item["sop"], item["sop"] in names))
        if not names or names[0] != item["sop"]:
            misses.append(f"  miss: {item['q']!r} → {names} (want {item['sop']})")
    listed = [(q, [s.name for s, _ in retrieval.relevant(skills, q)]) for q in unrelated]
    false = [(q, names) for q, names in listed if names]
    if show:
        print("\n".join(misses + [f"  unrelated lists: {q!r} → {names}" for q, names in false]))
    out = {"sops": len(skills), "queries": len(queries), "unrelated": len(unrelated),
           "unrelated_listing": len(false) / len(unrelated),
           "chinese_unrelated": (sum(chinese(q) for q, _ in false), sum(map(chinese, unrelated)))}
    for label, keep in (("", lambda item: True), ("plain_", lambda item: item["sop"] in plain),
                        ("chinese_", lambda item: chinese(item["q"]))):
        mine = [r for r in rows if keep(r[0])]
        out[f"{label}n"] = len(mine)
        out[f"{label}hit@1"] = sum(r[1] for r in mine) / max(len(mine), 1)
        out[f"{label}hit@3"] = sum(r[2] for r in mine) / max(len(mine), 1)
    return out


def seeds_figures(show: bool, part: str) -> None:
    """A new GA_HOME holds only the seeds: tasks about them should list them, every other task nothing."""
    from sop.library import SEEDS, skill_files
    from sop.skill import read

    seeds = [read(path) for path in skill_files(SEEDS)]
    names = {s.name for s in seeds}
    _, queries, unrelated = labelled(part)
    mine = [q for q in queries if q["sop"] in names]
    others = [q["q"] for q in queries if q["sop"] not in names] + unrelated
    hits = sum(q["sop"] in [s.name for s, _ in retrieval.relevant(seeds, q["q"])] for q in mine)
    false = [(q, [s.name for s, _ in retrieval.relevant(seeds, q)]) for q in others]
    false = [(q, n) for q, n in false if n]
    if show:
        print("\n".join(f"  lists a seed: {q!r} → {n}" for q, n in false))
    print(f"   {len(seeds)} seeds alone: {hits}/{len(mine)} tasks about a seed list it; "
          f"{len(false)}/{len(others)} other tasks list one ({len(false) / len(others):.1%})")


def retrieval_figures(show: bool, part: str) -> None:
    skills, queries, unrelated = labelled(part)
    print(f"\n== retrieval, part {part}: {len(queries)} labelled tasks "
          f"({sum(any(ord(c) > 0x2E80 for c in q['q']) for q in queries)} in Chinese), {len(unrelated)} unrelated")
    for library in (skills, skills + distractors(200 - len(skills))):
        r = evaluate(library, queries, unrelated, show=show)
        print(f"{r['sops']:4d} SOPs: hit@1 {r['hit@1']:.3f}  hit@3 {r['hit@3']:.3f}  "
              f"unrelated listing an SOP {r['unrelated_listing']:.1%}   (targets ≥ 0.90, ≥ 0.97, ≤ 5%)")
        print(f"      no hand-written keywords ({r['plain_n']}): hit@1 {r['plain_hit@1']:.3f}  "
              f"hit@3 {r['plain_hit@3']:.3f};  Chinese ({r['chinese_n']}): hit@1 {r['chinese_hit@1']:.3f}  "
              f"hit@3 {r['chinese_hit@3']:.3f}, Chinese unrelated listing {r['chinese_unrelated'][0]}"
              f"/{r['chinese_unrelated'][1]}")
    bare = [Skill(name=s.name, description=s.description, body=s.body, metadata={"status": "ok"}) for s in skills]
    r = evaluate(bare, queries, unrelated, show=False)
    print(f"  {len(bare)} SOPs, every hand-written keyword removed (a foreign library): hit@1 {r['hit@1']:.3f}  "
          f"hit@3 {r['hit@3']:.3f}  unrelated listing an SOP {r['unrelated_listing']:.1%}")
    seeds_figures(show, part)


def _install(home: Path, skills: list[Skill]) -> None:
    from memory.index import refresh
    from sop import store
    from sop.library import save

    for skill in skills:
        skill.metadata = ledger.stamp(skill.metadata, run_id="bench", source="bench")
        save(home, skill)
    with store.locked(home):
        refresh(home)


def _fixed_context(home: Path, workspace: Path, task: str) -> tuple[int, int]:
    """Tokens of system prompt + nine tool schemas + the first user message for `task`; and the index's share."""
    from bench.harness.meter import count as count_tokens
    from ga.config import load_settings
    from ga.prompts import first_message, system_prompt
    from memory.hooks import RunMemory
    from tools import load_tools

    settings = load_settings(env={}, home=home, workdir=workspace, model="m")
    memory = RunMemory(settings, run_id="bench", run_dir=home / "runs" / "bench")
    tools = json.dumps([s.schema() for s in load_tools()])
    system = system_prompt(memory, memory.task_listing(task))
    total = count_tokens(system) + count_tokens(tools) + count_tokens(first_message(settings, task))
    return total, count_tokens(memory.system_section())


def prompt_growth() -> None:
    skills, _, _ = labelled()
    pool = skills + distractors(200 - len(skills))
    print('\n== prompt growth: fixed context for "Hello" (system + 9 tool schemas + first message, o200k_base)')
    base = None
    for n in (0, 20, 200):
        with tempfile.TemporaryDirectory() as tmp:
            home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
            workspace.mkdir()
            _install(home, [Skill(**{**s.__dict__, "metadata": dict(s.metadata)}) for s in pool[:n]])
            total, index = _fixed_context(home, workspace, "Hello")
            related, _ = _fixed_context(home, workspace, "summarize the columns of sales.csv by region")
            base = total if base is None else base
            print(f"{n:4d} SOPs: {total:5d} tokens (+{total - base}; index {index})   "
                  f"a related task: {related} tokens")
    with tempfile.TemporaryDirectory() as tmp:
        from sop.library import install_seeds

        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        workspace.mkdir()
        install_seeds(home)
        total, index = _fixed_context(home, workspace, "Hello")
        related, _ = _fixed_context(home, workspace, "pip says ModuleNotFoundError: No module named 'yaml'")
        print(f"the seeds of a new GA_HOME: {total} tokens (index {index})   a task one fits: {related} tokens")
    print("target: ≤ +300 tokens from 0 to 200 SOPs; ≤ 1,300 for \"Hello\" with all nine tools")


PROBE = """
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from memory.index import system_section, task_listing
home, out = Path(sys.argv[2]), []
def timed(step):
    start = time.perf_counter()
    step()
    out.append(time.perf_counter() - start)
out.append(time.perf_counter() - t0)
timed(lambda: (system_section(home), task_listing(home, "Hello")))
hello_loads = "bm25s" in sys.modules
timed(lambda: task_listing(home, "summarize the columns of sales.csv"))
timed(lambda: task_listing(home, "convert this mp4 video"))
timed(lambda: task_listing(home, "在后台运行这个爬虫并查看日志"))
import ga.cli.compose
out.append(time.perf_counter() - t0 - sum(out))
print(json.dumps({"times": out, "hello_loads_bm25s": hello_loads}))
"""


def retrieval_time(repeats: int) -> None:
    """At 200 SOPs on disk, in fresh processes: what a run's start pays for listing, next to the start itself."""
    skills, _, _ = labelled()
    root = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        workspace.mkdir()
        _install(home, skills + distractors(200 - len(skills)))
        probe = [sys.executable, "-c", PROBE, root, str(home)]
        first = subprocess.run(probe, check=True, capture_output=True, text=True)  # tokenises the 200 SOPs once
        runs = [json.loads(subprocess.run(probe, check=True, capture_output=True, text=True).stdout)
                for _ in range(repeats)]
        startup = [float(subprocess.run([sys.executable, "-c", (
            "import time, subprocess, sys; t = time.perf_counter(); "
            f"subprocess.run([sys.executable, {str(Path(root) / 'run.py')!r}, '--help'], capture_output=True); "
            "print(time.perf_counter() - t)")], check=True, capture_output=True, text=True).stdout)
            for _ in range(repeats)]
    med = [statistics.median(col) * 1e3 for col in zip(*(r["times"] for r in runs), strict=True)]
    cold = json.loads(first.stdout)["times"][2] * 1e3
    print(f"\n== retrieval time at 200 SOPs (median of {repeats} fresh processes, SOP tokens cached)")
    print(f"import memory+bm25s {med[0]:.0f} ms; L1 index + listing for \"Hello\" {med[1]:.0f} ms (bm25s loaded: "
          f"{'yes' if any(r['hello_loads_bm25s'] for r in runs) else 'no'})")
    print(f"the first task with words (builds the index) {med[2]:.0f} ms; another listing, warm "
          f"{med[3]:.1f} ms; the first Chinese task (loads the dictionary) {med[4]:.0f} ms")
    print(f"a new library's first listing (tokenises its 200 SOPs, then cached): {cold:.0f} ms")
    print(f"for scale: importing ga's run machinery {med[5]:.0f} ms; `run.py --help` end to end "
          f"{statistics.median(startup) * 1e3:.0f} ms (a real run then waits seconds for its first model reply)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", action="store_true", help="print every miss and every false listing")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--part", choices=(*PARTS, "all"), help="retrieval on one half only (default: each)")
    parser.add_argument("--only", choices=("retrieval",), help="skip the prompt and timing figures")
    args = parser.parse_args()
    for part in [args.part] if args.part else PARTS:
        retrieval_figures(args.show, part)
    if args.only:
        return
    prompt_growth()
    retrieval_time(args.repeats)


if __name__ == "__main__":
    main()
