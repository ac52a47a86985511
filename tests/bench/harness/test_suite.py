"""The shipped suites: every task is well formed, oracle solves every one, nop solves none; splits and tiers fixed."""

from __future__ import annotations

from collections import Counter

from bench.harness.tasks import families, load_suite
from tests.bench.harness.conftest import ROOT, SUITE, bench, rows

SUITES = ROOT / "bench" / "suites"

NINE_TOOLS = {"file_read", "file_patch", "file_write", "code_run", "web_scan", "web_execute_js",
              "update_working_checkpoint", "start_long_term_update", "ask_user"}


def test_the_offline_suite_is_well_formed_and_covers_the_nine_tools():
    tasks = load_suite(SUITE)
    assert len(tasks) >= 20
    for task in tasks:
        assert (task.path / "solution" / "solve.sh").is_file(), task.name
        assert task.instruction.strip() and task.agent_timeout > 0 and task.tags, task.name
    assert set().union(*(t.tags for t in tasks)) >= NINE_TOOLS
    kinds = {t.category for t in tasks}
    assert {"debugging", "data", "refactoring", "investigation", "web", "human"} <= kinds
    assert any(t.answers for t in tasks) and sum(t.has_site for t in tasks) >= 4
    chains = families(tasks)
    assert len(chains) >= 2 and all([t.round for t in c] == [1, 2, 3] for c in chains.values())


def test_every_task_has_its_split_and_tier_and_each_tier_is_split_in_halves():
    tasks = load_suite(SUITES)
    assert all("split" in (t.path / "task.toml").read_text() for t in tasks)  # fixed in the file, not defaulted
    counts = Counter((t.tier, t.split) for t in tasks)
    assert counts[("small", "dev")] >= 6 and counts[("small", "test")] >= 6  # at least 12 small tasks
    for tier in ("small", "standard"):
        assert abs(counts[(tier, "dev")] - counts[(tier, "test")]) <= 1, counts
    for chain in families(tasks).values():
        assert len({t.split for t in chain}) == 1  # a family's rounds are never split apart
    assert load_suite(SUITES, split="test", tier="small") and all(
        t.split == "test" and t.tier == "small" for t in load_suite(SUITES, split="test", tier="small"))


def test_oracle_passes_and_nop_fails_every_shipped_task(tmp_path):
    out = tmp_path / "out"
    assert bench(SUITES, "--agents", "oracle,nop", "--out", out, "--workers", "3", "--no-report") == 0
    found = rows(out)
    names = {t.name for t in load_suite(SUITES)}
    oracle = {r["task"]: r for r in found if r["agent"] == "oracle"}
    nop = {r["task"]: r for r in found if r["agent"] == "nop"}
    assert set(oracle) == set(nop) == names
    broken = {t: r["verifier"]["output"][-300:] or r["error"] for t, r in oracle.items() if not r["success"]}
    assert not broken, f"oracle fails: {broken}"
    passing = sorted(t for t, r in nop.items() if r["success"])
    assert not passing, f"these checkers pass an untouched workspace: {passing}"
