"""The whole pipeline on three shipped tasks with the scripted upstream: ga and a tiny CLI agent through the proxy,
the checkers, results.jsonl, resume, ATIF, and the report in a real Chromium."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from bench.harness.results import REQUIRED
from tests.bench.harness.conftest import bench, copy_tasks, rows, tiny_config

TASKS = ("fix-calc-bug", "csv-report", "ask-user-region")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

TINY_SCRIPTS = {
    "fix-calc-bug": [
        {"tool_calls": [{"name": "run", "arguments": {"command": "cat stats.py"}}]},
        {"tool_calls": [{"name": "run", "arguments": {
            "command": "sed -i 's|(len(values) + 1)|len(values)|' stats.py && python3 -m unittest -q"}}]},
        {"content": "fixed"}],
    "csv-report": [
        {"tool_calls": [{"name": "run", "arguments": {"command": (
            "python3 -c \"import csv,collections as c; t=c.Counter()\n"
            "for r in csv.DictReader(open('sales.csv')): t[r['region']]+=int(r['quantity'])*float(r['unit_price'])\n"
            "open('report.md','w').write(''.join(f'- {k}: {v:.2f}\\n' for k,v in t.most_common()))\"")}}]},
        {"content": "done"}],
    # tiny cannot ask the human: it guesses, and the checker must fail it
    "ask-user-region": [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "deploy.toml", "content": (
            'service = "receipts"\nregion = "us-east-1"\nreplicas = 2\n\n[health]\npath = "/healthz"\n'
            'interval_s = 15\n')}}]},
        {"content": "guessed us-east-1"}],
}


def with_usage(steps: list[dict], base: int) -> list[dict]:
    """Each step serves known usage: prompt 1000+, completion 10+, cached 400."""
    return [{**step, "usage": {"prompt_tokens": base + 100 * i, "completion_tokens": 10 + i,
                               "prompt_tokens_details": {"cached_tokens": 400}}} for i, step in enumerate(steps)]


def served(steps: list[dict]) -> dict:
    return {"input_tokens": sum(s["usage"]["prompt_tokens"] for s in steps),
            "cached_tokens": sum(s["usage"]["prompt_tokens_details"]["cached_tokens"] for s in steps),
            "output_tokens": sum(s["usage"]["completion_tokens"] for s in steps), "requests": len(steps),
            "tool_calls": sum(len(s.get("tool_calls") or []) for s in steps)}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One bench run of ga and tiny on the three tasks; yields (out, expected usage by (task, agent), tiny.toml)."""
    base = tmp_path_factory.mktemp("e2e")
    suite = copy_tasks(base / "suite", *TASKS)
    expected = {}
    for task in TASKS:
        scripts = {"ga": json.loads((suite / task / "scripted" / "ga.json").read_text()), "tiny": TINY_SCRIPTS[task]}
        for agent, plain in scripts.items():
            steps = with_usage(plain, 1000 + 37 * len(expected))
            (suite / task / "scripted" / f"{agent}.json").write_text(json.dumps(steps))
            expected[task, agent] = served(steps)
    tiny = tiny_config(base)
    out = base / "out"
    assert bench(suite, "--agents", f"ga,{tiny}", "--upstream", "scripted", "--out", out, "--workers", "2") == 0
    return out, expected, tiny, suite


def test_every_trial_has_the_contracts_fields(run):
    out, expected, _, _ = run
    found = rows(out)
    assert sorted((r["task"], r["agent"]) for r in found) == sorted(expected)
    for row in found:
        assert all(k in row for k in REQUIRED) and row["trial"] == 1 and row["wall_s"] > 0


def test_metered_numbers_equal_what_the_fake_served(run):
    out, expected, _, _ = run
    for row in rows(out):
        assert {k: row[k] for k in expected[row["task"], row["agent"]]} == expected[row["task"], row["agent"]], row
        assert row["script_complete"] is True and row["usage_local"] == 0
        if row["agent"] == "ga":  # and what ga says about itself agrees with the meter (learning asks nothing)
            usage = row["self_reported"]["usage"]
            assert (usage["prompt_tokens"], usage["completion_tokens"], usage["requests"]) == (
                row["input_tokens"], row["output_tokens"], row["requests"])


def test_checkers_decide_success_and_the_human_answered_ga(run):
    out, _, _, _ = run
    by = {(r["task"], r["agent"]): r for r in rows(out)}
    assert all(by[t, "ga"]["success"] for t in TASKS)
    assert by["ask-user-region", "ga"]["answers_given"] == 1
    assert by["csv-report", "ga"]["reward"] == 1.0  # its checker writes Harbor's reward.txt
    failed = by["ask-user-region", "tiny"]  # a failing checker marks the trial failed though the agent exited 0
    assert not failed["success"] and failed["exit_code"] == 0 and failed["error"] == ""
    assert "us-east-1" in failed["verifier"]["output"]
    assert by["fix-calc-bug", "tiny"]["success"] and by["csv-report", "tiny"]["success"]
    # what each said beside what was true: tiny exited 0 on all three (a claim), one of them wrong
    assert all(by[t, a]["claimed_done"] is True for t in TASKS for a in ("ga", "tiny"))
    summary = json.loads((out / "summary.json").read_text())["agents"]
    assert (summary["tiny"]["claimed"], summary["tiny"]["claimed_true"]) == (3, 2)
    assert summary["ga"]["claim_accuracy"] == 1.0


def test_trajectories_are_atif(run):
    out, expected, _, _ = run
    for (task, agent), numbers in expected.items():
        atif = json.loads((out / "trials" / agent / task / "1" / "trajectory.atif.json").read_text())
        assert atif["schema_version"] == "ATIF-v1.4" and atif["agent"]["name"] == agent
        steps = atif["steps"]
        assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
        assert steps[0]["source"] == "system" and steps[1]["source"] == "user"
        call_ids = {c["tool_call_id"] for s in steps for c in s.get("tool_calls", [])}
        results = [r for s in steps for r in s.get("observation", {}).get("results", [])]
        assert len(call_ids) == numbers["tool_calls"] and {r["source_call_id"] for r in results} == call_ids
        assert atif["final_metrics"]["total_prompt_tokens"] == numbers["input_tokens"]
        assert atif["final_metrics"]["total_cached_tokens"] == numbers["cached_tokens"]
    ga = json.loads((out / "trials/ga/ask-user-region/1/trajectory.atif.json").read_text())
    assert any("eu-west-3" in r["content"] for s in ga["steps"] for r in s.get("observation", {}).get("results", []))


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="needs Chromium (apt-get install chromium)")
def test_report_renders_in_chromium_with_the_table_and_charts(run):
    from playwright.sync_api import sync_playwright

    out = run[0]
    assert {p.name for p in (out / "charts").iterdir()} == {"tokens_per_task.png", "success_vs_tokens.png"}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM or "/usr/bin/chromium")
        page = browser.new_page()
        page.goto((out / "report.html").as_uri())
        header = page.locator("#summary tr").first.inner_text()
        agents = page.locator("#summary tr td:first-child").all_inner_texts()
        tasks = page.locator("#tasks tr td:first-child").all_inner_texts()
        images = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.naturalWidth)")
        ga_row = page.locator("#summary tr").nth(1).inner_text()
        browser.close()
    assert "success" in header and "tokens / solved" in header and "pass^k (k = 1)" in header
    assert "claimed done" in header and "3 (3, 100%)" in ga_row
    assert agents == ["ga", "tiny"] and sorted(tasks) == sorted(TASKS)
    assert len(images) == 2 and all(w > 100 for w in images)
    assert "3/3 (100%)" in ga_row


def test_resume_skips_finished_trials_and_runs_only_the_missing(run):
    out, _, tiny, suite = run
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("trials/*/*/1/result.json")}
    again = ("--agents", f"ga,{tiny}", "--upstream", "scripted", "--out", out, "--no-report")
    assert bench(suite, *again) == 0
    assert len(rows(out)) == 6 and all(p.stat().st_mtime_ns == t for p, t in stamps.items())
    # the harness died after a trial finished but before its line was written: the line comes back, no rerun
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20])  # and a torn tail
    assert bench(suite, *again) == 0
    assert len(rows(out)) == 6 and all(p.stat().st_mtime_ns == t for p, t in stamps.items())
    # a trial that never finished runs again, and only it
    lost = out / "trials" / "tiny" / "fix-calc-bug" / "1" / "result.json"
    lost.unlink()
    kept = [line for line in (out / "results.jsonl").read_text().splitlines()
            if not ('"fix-calc-bug"' in line and '"tiny"' in line)]
    (out / "results.jsonl").write_text("\n".join(kept) + "\n")
    assert bench(suite, *again) == 0
    assert lost.is_file() and len(rows(out)) == 6
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items() if p != lost)
