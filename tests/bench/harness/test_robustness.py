"""An agent that crashes, hangs or leaves children behind is a failed trial, never a crashed harness; bad input
gets a clear error before any trial runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bench.harness.conftest import ROOT, agent_config, bench, copy_tasks, kill_tree, rows


def _alive(pid: int, within: float = 3.0) -> bool:
    """Still running after `within` seconds (a zombie waiting for its reaper counts as gone)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.05)
    return True


def test_crash_hang_and_strays_are_failed_trials(tmp_path, upstream):
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug")
    crasher = agent_config(tmp_path, "crasher", ["${python}", "-c", "import os, signal; os.kill(os.getpid(), "
                                                                    "signal.SIGSEGV)"])
    # a hang that also leaves a background child: both must be gone when the trial ends
    hanger = agent_config(tmp_path, "hanger", ["bash", "-c", "sleep 300 & echo $$! > ${log_dir}/child.pid; "
                                                             "echo $$$$ > ${log_dir}/self.pid; sleep 300"])
    out = tmp_path / "out"
    started = time.monotonic()
    # they never call a model: the endpoint is only there to be configured
    assert bench(suite, "--agents", f"oracle,{crasher},{hanger}", "--out", out, "--timeout", "3", "--no-report",
                 "--upstream", upstream, "--model", "m") == 0
    assert time.monotonic() - started < 60
    by = {r["agent"]: r for r in rows(out)}
    assert by["oracle"]["success"]
    assert not by["crasher"]["success"] and "exited -11" in by["crasher"]["error"]
    hung = by["hanger"]
    assert not hung["success"] and hung["timed_out"] and hung["exit_code"] is None
    assert 2.5 < hung["wall_s"] < 15 and "killed after 3 s" in hung["error"]
    logs = out / "trials" / "hanger" / "fix-calc-bug" / "1" / "logs"
    for name in ("self.pid", "child.pid"):
        assert not _alive(int((logs / name).read_text())), f"{name} survived the trial"


def test_bad_input_is_refused_before_any_trial(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug")
    missing = agent_config(tmp_path, "missing", ["/nonexistent/agent-binary"])
    assert bench(suite, "--agents", f"oracle,{missing}", "--out", tmp_path / "out") == 2
    assert "/nonexistent/agent-binary not found" in capsys.readouterr().err
    assert bench(suite, "--agents", "oracle,no-such-agent", "--out", tmp_path / "out") == 2
    assert "Unknown agent 'no-such-agent'" in capsys.readouterr().err
    assert bench(tmp_path / "nowhere", "--agents", "oracle") == 2
    assert "is not a folder of tasks" in capsys.readouterr().err
    assert bench(suite, "--agents", "ga", "--out", tmp_path / "out", "--model", "m") == 2
    assert "No model endpoint" in capsys.readouterr().err
    (suite / "fix-calc-bug" / "task.toml").write_text("[agent\ntimeout_sec = 1")
    assert bench(suite, "--agents", "oracle") == 2
    assert "is not valid TOML" in capsys.readouterr().err
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_one_results_folder_holds_one_model(tmp_path, capsys):
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug")
    out = tmp_path / "out"
    assert bench(suite, "--agents", "oracle", "--out", out, "--model", "a", "--no-report") == 0
    assert bench(suite, "--agents", "oracle", "--out", out, "--model", "b", "--no-report") == 2
    assert "holds trials of model 'a'" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["--trials=0", "--workers=0", "--timeout=-1"])
def test_bad_numbers(tmp_path, bad, capsys):
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug")
    assert bench(suite, "--agents", "oracle", "--out", tmp_path / "out", bad) == 2


def test_a_dead_worker_costs_one_failed_trial_and_the_run_goes_on(tmp_path, upstream):
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug", "csv-to-json")
    # the harness's own worker process dies (as under the out-of-memory killer), every time this agent runs
    killer = agent_config(tmp_path, "killer", ["${python}", "-c", "import os, signal; os.kill(os.getppid(), "
                                                                  "signal.SIGKILL)"])
    out = tmp_path / "out"
    assert bench(suite, "--agents", f"{killer},oracle", "--out", out, "--no-report", "--upstream",
                 upstream, "--model", "m") == 0
    by = {(r["agent"], r["task"]): r for r in rows(out)}
    assert by["oracle", "fix-calc-bug"]["success"] and by["oracle", "csv-to-json"]["success"]
    assert not by["killer", "fix-calc-bug"]["success"] and "worker lost" in by["killer", "fix-calc-bug"]["error"]


@pytest.mark.parametrize(("stop", "background"), [(signal.SIGINT, False), (signal.SIGTERM, True)],
                         ids=["kill -INT", "kill (TERM) of a harness started with &"])
def test_interrupting_the_harness_alone_stops_its_trials_and_their_agents(tmp_path, stop, background, upstream):
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug", "fix-json-config")  # the second waits in the queue
    hanger = agent_config(tmp_path, "hanger", ["bash", "-c", "echo $$$$ > ${log_dir}/self.pid; sleep 300"])
    args = [sys.executable, str(ROOT / "run.py"), "bench", str(suite), "--agents", str(hanger), "--out",
            str(tmp_path / "out"), "--upstream", upstream, "--model", "m", "--no-report"]
    if background:  # what `run.py bench ... &` in a script does: SIGINT ignored, for the workers too
        args = ["bash", "-c", 'trap "" INT; exec "$@"', "bash", *args]
    harness = subprocess.Popen(args, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    pid_file = tmp_path / "out" / "trials" / "hanger" / "fix-calc-bug" / "1" / "logs" / "self.pid"
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.is_file() and pid_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.1)
        os.kill(harness.pid, stop)  # only the harness gets it, not its workers
        assert harness.wait(timeout=30) == 130
    finally:
        kill_tree(harness, tmp_path / "out")
    assert not _alive(int(pid_file.read_text()))
    assert not (tmp_path / "out" / "results.jsonl").exists() or not rows(tmp_path / "out")
    assert not (tmp_path / "out" / "trials" / "hanger" / "fix-json-config").exists()  # the queued job never began


def test_a_harness_killed_outright_lets_no_queued_trial_start(tmp_path, upstream):
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug", "fix-json-config")  # the second waits in the queue
    hanger = agent_config(tmp_path, "hanger", ["bash", "-c", "echo $$$$ > ${log_dir}/self.pid; sleep 300"])
    out = tmp_path / "out"
    args = [sys.executable, str(ROOT / "run.py"), "bench", str(suite), "--agents", str(hanger), "--out", str(out),
            "--upstream", upstream, "--model", "m", "--no-report"]
    harness = subprocess.Popen(args, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    pid_file = out / "trials" / "hanger" / "fix-calc-bug" / "1" / "logs" / "self.pid"
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.is_file() and pid_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.1)
        agent = int(pid_file.read_text())
        worker = int(Path(f"/proc/{agent}/stat").read_text().rsplit(")", 1)[1].split()[1])
        os.kill(harness.pid, signal.SIGKILL)  # the harness alone: its worker and the agent live on
        harness.wait(timeout=10)
        os.kill(agent, signal.SIGKILL)  # the running trial ends; the worker would take the next queued job
        assert not _alive(worker, within=20)
    finally:
        kill_tree(harness, out)
    assert not (out / "trials" / "hanger" / "fix-json-config").exists()
