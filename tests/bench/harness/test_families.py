"""Task families: rounds run in order, in one HOME and GA_HOME per agent and trial; round 1 starts cold; the report
compares cold and warm."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

from tests.bench.harness.conftest import ROOT, SUITE, agent_config, bench, kill_tree, rows


def test_rounds_share_home_and_ga_home_and_round_one_is_cold(tmp_path, upstream):
    # the agent counts the rounds it has seen, in GA_HOME and in HOME, and leaves the counts in the workspace
    counter = agent_config(tmp_path, "counter", ["bash", "-c", "echo x >> $$GA_HOME/seen; echo x >> $$HOME/seen; "
                                                               "wc -l < $$GA_HOME/seen > ga_home.txt; "
                                                               "wc -l < $$HOME/seen > home.txt"])
    out = tmp_path / "out"
    args = ("--agents", f"oracle,{counter}", "--tasks", "release-notes*", "--trials", "2", "--out", out,
            "--upstream", upstream, "--model", "m")
    assert bench(SUITE, *args) == 0

    def counts(trial: int) -> list[tuple[str, str]]:
        folder = out / "trials" / "counter"
        return [((folder / f"release-notes-r{r}" / str(trial) / "workspace" / "ga_home.txt").read_text().strip(),
                 (folder / f"release-notes-r{r}" / str(trial) / "workspace" / "home.txt").read_text().strip())
                for r in (1, 2, 3)]

    assert counts(1) == counts(2) == [("1", "1"), ("2", "2"), ("3", "3")]  # each trial's family starts cold
    found = rows(out)
    assert len(found) == 12 and {r["family"] for r in found} == {"release-notes"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cold_warm"]["release-notes"]["oracle"]["cold"]["rate"] == 1.0
    assert (out / "charts" / "cold_vs_warm.png").is_file()
    assert "cold success" in (out / "report.html").read_text()


def test_an_interrupted_round_runs_again_from_the_state_before_it(tmp_path, upstream):
    flag = tmp_path / "hang-once"
    flag.touch()
    # the first time round 3 runs (the counter reads 3), the agent hangs and the harness is interrupted
    counter = agent_config(tmp_path, "counter", ["bash", "-c", "echo x >> $$GA_HOME/seen; "
                                                               "wc -l < $$GA_HOME/seen > ga_home.txt; "
                                                               f"if [ $$(cat ga_home.txt) = 3 ] && [ -f {flag} ]; "
                                                               f"then rm {flag}; sleep 300; fi"])
    out = tmp_path / "out"
    args = [sys.executable, str(ROOT / "run.py"), "bench", str(SUITE), "--agents", str(counter), "--tasks",
            "release-notes*", "--out", str(out), "--upstream", upstream, "--model", "m", "--no-report"]
    harness = subprocess.Popen(args, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while flag.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        os.killpg(harness.pid, signal.SIGINT)  # Ctrl-C
        assert harness.wait(timeout=30) == 130
    finally:
        kill_tree(harness, out)
    assert b"run the same command to resume" in harness.stderr.read()
    assert len(rows(out)) == 2  # rounds 1 and 2
    assert subprocess.run(args, capture_output=True, timeout=120, check=False).returncode == 0
    round3 = out / "trials" / "counter" / "release-notes-r3" / "1" / "workspace" / "ga_home.txt"
    assert round3.read_text().strip() == "3"  # not 4: the interrupted attempt left nothing behind
    assert len(rows(out)) == 3


def test_the_learning_arms_taught_and_nolearn_and_the_curve_per_round(tmp_path, capsys):
    """ga:taught has round 1 played by a capable model (the scripted upstream runs solve.sh through code_run) and
    runs the script it learnt in rounds 2 and 3; ga:nolearn learns nothing; the curve shows both per round."""
    suite = tmp_path / "suite"
    for n in (1, 2, 3):
        shutil.copytree(ROOT / "bench/suites/small" / f"csv-column-sum-r{n}", suite / f"csv-column-sum-r{n}")
    learnt = "{{workspace}}/../../../family-csv-column-sum/1/ga_home/sop/*/scripts/main.py"  # solve.sh's program
    values = {2: "sales.csv price sum.txt", 3: "expenses.csv cost result.txt"}
    for n, args in values.items():
        scripted = suite / f"csv-column-sum-r{n}" / "scripted"
        scripted.mkdir()
        (scripted / "ga:taught.json").write_text(json.dumps([
            {"tool_calls": [{"name": "code_run", "arguments": {"type": "bash", "script": f"python3 {learnt} {args}"}}]},
            {"content": "Done."}]))
        (scripted / "ga:nolearn.json").write_text(json.dumps([{"content": "I do not know how."}]))
    (suite / "csv-column-sum-r1" / "scripted").mkdir()
    (suite / "csv-column-sum-r1" / "scripted" / "ga:nolearn.json").write_text(json.dumps([
        {"tool_calls": [{"name": "code_run", "arguments": {"type": "bash", "script": "ls"}}]},
        {"content": "I do not know how."}]))
    out = tmp_path / "out"
    assert bench(suite, "--agents", "ga:taught,ga:nolearn", "--upstream", "scripted", "--out", out) == 0
    by = {(r["agent"], r["round"]): r["success"] for r in rows(out)}
    assert by == {("ga:taught", 1): True, ("ga:taught", 2): True, ("ga:taught", 3): True,
                  ("ga:nolearn", 1): False, ("ga:nolearn", 2): False, ("ga:nolearn", 3): False}
    assert not list((out / "trials/ga:nolearn").glob("family-*/1/ga_home/sop/*/scripts"))  # nothing learnt
    curve = json.loads((out / "summary.json").read_text())["curve"]["dev"]
    assert [(c["round"], c["successes"], c["trials"]) for c in curve["ga:taught"]["rounds"]] == [(1, 1, 1), (2, 1, 1),
                                                                                                 (3, 1, 1)]
    assert curve["ga:nolearn"]["warm"]["successes"] == 0 and curve["ga:taught"]["warm"]["successes"] == 2
    assert "learning curve" in capsys.readouterr().err and "Learning curve" in (out / "report.html").read_text()
