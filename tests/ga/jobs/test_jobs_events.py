"""What programs driving ga see: --jsonl events on stdout, and GA_NOTIFY called once per outcome."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.ga.cli.test_cli import RUN_PY, events, ga, ga_env, wait_for
from tests.scripted import ScriptedServer, tool_call


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def test_jsonl_streams_one_event_per_line_and_ends_with_the_outcome(home, workspace):
    (workspace / "a.txt").write_text("a\n")
    steps = [{"content": "Looking.", "tool_calls": [tool_call("file_read", path="missing.txt")]},
             {"tool_calls": [tool_call("file_read", path="gone.txt")]},
             {"tool_calls": [tool_call("file_read", path="a.txt")]}, {"content": "found it"}]
    with ScriptedServer(steps) as server:
        proc = ga(["find", "--jsonl"], server, home, workspace, GA_STAGE2_AFTER="2")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    kinds = [e["type"] for e in lines]
    assert proc.returncode == 0 and proc.stderr == ""
    assert kinds == ["start", *["turn", "usage", "tool_start", "tool_end", "stage"] * 3, "turn", "usage", "end"]
    assert lines[0]["run_id"] == lines[-1]["run_id"] and lines[0]["task"] == "find"
    assert lines[1] == {"type": "turn", "turn": 1, "text": "Looking."}
    assert lines[3]["name"] == "file_read" and lines[3]["arguments"]["path"] == "missing.txt"
    assert lines[4]["ok"] is False and "missing.txt" in lines[4]["summary"]
    assert [e["stage"] for e in lines if e["type"] == "stage"] == [1, 2, 0]
    assert lines[-2]["requests"] == 4 and lines[-1]["status"] == "done" and lines[-1]["answer"] == "found it"
    assert lines[-1]["exit_code"] == 0 and lines[-1]["tool_calls"] == 3


def test_jsonl_reports_a_configuration_error_as_its_end_event(home, workspace):
    proc = ga(["task", "--jsonl"], None, home, workspace)
    (event,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 2 and event["type"] == "end" and event["status"] == "error"
    assert event["exit_code"] == 2 and "OPENAI_BASE_URL" in event["answer"]


def test_json_and_jsonl_do_not_go_together(home, workspace):
    proc = ga(["task", "--json", "--jsonl"], None, home, workspace)
    assert proc.returncode == 2 and "not allowed with argument" in proc.stderr


NOTIFIER = textwrap.dedent("""
    import json, pathlib, sys, time
    event = json.load(sys.stdin)
    folder = pathlib.Path(event["run_dir"])
    event["seen"] = {"state": json.loads((folder / "state.json").read_text())["status"],
                     "result": json.loads((folder / "outbox" / "result.json").read_text())["status"],
                     "at": time.time()}
    with open(sys.argv[1], "a") as f:
        f.write(json.dumps(event) + "\\n")
""")


def notified(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_the_notifier_gets_exactly_one_event_per_outcome_after_the_files_are_final(home, workspace, tmp_path):
    script, log = tmp_path / "notify.py", tmp_path / "events.jsonl"
    script.write_text(NOTIFIER)
    env = {"GA_NOTIFY": f"{sys.executable} {script} {log}"}
    steps = [{"tool_calls": [tool_call("ask_user", question="Which?", candidates=["x", "y"])]},
             {"content": "picked y"}, {"tool_calls": [tool_call("file_read", path=".")]}]
    with ScriptedServer(steps) as server:
        paused = json.loads(ga(["pick", "--json"], server, home, workspace, **env).stdout)
        wait_for(lambda: len(notified(log)) == 1)
        done = ga(["--resume", paused["run_id"], "--answer", "2", "--json"], server, home, workspace, **env)
        wait_for(lambda: len(notified(log)) == 2)
        ga(["--resume", paused["run_id"]], server, home, workspace, **env)  # reports it again: not a new outcome
        limited = json.loads(ga(["loop", "--json", "--max-turns", "1"], server, home, workspace, **env).stdout)
        wait_for(lambda: len(notified(log)) == 3)
        time.sleep(1.5)  # time for a duplicate to show up, if there were one
    pause, end, limit = notified(log)
    assert len(notified(log)) == 3 and json.loads(done.stdout)["status"] == "done"
    assert pause["event"] == "pause" and pause["status"] == "paused" and pause["question"] == "Which?"
    assert pause["candidates"] == ["x", "y"] and "answer" not in pause and pause["run_id"] == paused["run_id"]
    assert pause["seen"] == {"state": "paused", "result": "paused", "at": pause["seen"]["at"]}
    assert end["event"] == "end" and end["status"] == "done" and end["answer"] == "picked y" and end["exit_code"] == 0
    assert end["task"] == "pick" and end["usage"]["requests"] == 2 and end["seen"]["state"] == "done"
    assert end["run_dir"] == str(home / "runs" / paused["run_id"]) and end["workdir"] == str(workspace)
    assert limit["run_id"] == limited["run_id"] and limit["status"] == "limit" and limit["exit_code"] == 4


def exit_delay(server, home: Path, workspace: Path, **env: str) -> tuple[float, Path]:
    """Seconds from a run's last event to its process's exit, and the run folder."""
    proc = subprocess.Popen([sys.executable, RUN_PY, "hang", "--json"], cwd=workspace, env=ga_env(server, home, **env),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, _ = proc.communicate(timeout=60)
    exited = time.time()
    assert proc.returncode == 0
    run_dir = home / "runs" / json.loads(out)["run_id"]
    return exited - events(run_dir, "status")[-1]["t"], run_dir


def test_a_hanging_notifier_does_not_delay_the_exit_and_a_failing_one_is_logged(home, workspace):
    with ScriptedServer([{"content": str(i)} for i in range(5)]) as server:
        # Python's own teardown takes a while on a loaded machine: the delay is measured against runs without one
        baseline, hanging = [], []
        for _ in range(2):
            baseline.append(exit_delay(server, home, workspace)[0])
            delay, run_dir = exit_delay(server, home, workspace, GA_NOTIFY="sleep 60", GA_NOTIFY_TIMEOUT="3")
            hanging.append(delay)
        failing = ga(["fail", "--json"], server, home, workspace, GA_NOTIFY="echo broken >&2; exit 7")
        failing = json.loads(failing.stdout)
        wait_for((run_dir / "notify.log").exists, timeout=20)
        failing_log = home / "runs" / failing["run_id"] / "notify.log"
        wait_for(failing_log.exists, timeout=20)
    assert min(hanging) - min(baseline) < 1.0, (hanging, baseline)
    assert failing["status"] == "done"
    assert "killed after 3 s" in (run_dir / "notify.log").read_text()  # it hung on after the run had exited
    assert "exited 7: broken" in failing_log.read_text()
