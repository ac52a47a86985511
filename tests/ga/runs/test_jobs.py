"""Long-running jobs through the real CLI: background runs, tail, the mailbox, stop, crashes, --continue, runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ga.cli.test_cli import RUN_PY, events, ga, ga_env, wait_for
from tests.scripted import ScriptedServer, tool_call


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def recorded(folder: Path, kind: str) -> list[dict]:
    """The run's trajectory events of one kind (none yet while the run is still starting)."""
    return events(folder, kind) if (folder / "trajectory.jsonl").exists() else []


def detach(args: list[str], server, home: Path, cwd: Path) -> str:
    proc = ga([*args, "--detach"], server, home, cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def state(home: Path, run_id: str) -> dict:
    return json.loads((home / "runs" / run_id / "state.json").read_text())


def runs_json(home: Path, *args: str) -> list[dict]:
    proc = ga(["runs", "--json", *args], None, home, home.parent)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def status_of(home: Path, run_id: str) -> str:
    return next(r["status"] for r in runs_json(home) if r["run_id"] == run_id)


def ended(home: Path, run_id: str) -> bool:
    return status_of(home, run_id) != "running"


def test_a_detached_run_is_listed_tailed_and_answered_through_the_mailbox(home, workspace):
    ask = tool_call("ask_user", question="Which file?", candidates=["a.txt", "b.txt"])
    steps = [{"delay": 1.5, "tool_calls": [ask]},
             {"tool_calls": [tool_call("file_write", path="b.txt", content="chosen")]}, {"content": "wrote b.txt"}]
    with ScriptedServer(steps) as server:
        run_id = detach(["pick a file"], server, home, workspace)
        listed = runs_json(home)
        tailed = ga(["tail", run_id], None, home, workspace)
        question = json.loads((home / "runs" / run_id / "outbox" / "question.json").read_text())
        answered = ga(["answer", run_id[:17], "2"], server, home, workspace)
        finished = ga(["tail", run_id], None, home, workspace)
        server.assert_complete()
    assert [(r["run_id"], r["status"]) for r in listed] == [(run_id, "running")]
    assert tailed.returncode == 3 and "Which file?" in tailed.stdout
    assert question["question"] == "Which file?" and question["candidates"] == ["a.txt", "b.txt"]
    assert answered.returncode == 0, answered.stderr
    assert finished.returncode == 0 and "wrote b.txt" in finished.stdout
    assert (workspace / "b.txt").read_text() == "chosen"
    assert server.requests[1]["messages"][-1]["content"] == "The user answered: b.txt"
    folder = home / "runs" / run_id
    assert [p.suffix for p in (folder / "inbox" / "done").iterdir()] == [".answer"] and not list(
        p for p in (folder / "inbox").iterdir() if p.is_file())
    assert not (folder / "outbox" / "question.json").exists()
    assert json.loads((folder / "outbox" / "result.json").read_text())["answer"] == "wrote b.txt"
    assert status_of(home, run_id) == "done"


def test_detach_reports_a_configuration_error_with_its_exit_code(home, workspace):
    proc = ga(["task", "--detach"], None, home, workspace)
    assert proc.returncode == 2 and "OPENAI_BASE_URL" in proc.stderr and not proc.stdout
    assert not (home / "runs").exists()


def test_an_intervention_reaches_the_model_at_the_next_turn(home, workspace):
    (workspace / "a.txt").write_text("a\n")
    steps = [{"tool_calls": [tool_call("file_read", path="a.txt")]},
             {"delay": 2, "tool_calls": [tool_call("file_read", path="a.txt")]}, {"content": "done"}]
    with ScriptedServer(steps) as server:
        run_id = detach(["read a"], server, home, workspace)
        wait_for(lambda: len(server.requests) == 2)  # the second reply is on its way
        inbox = home / "runs" / run_id / "inbox"
        inbox.mkdir(exist_ok=True)
        (inbox / ".writing").write_text("Also look at b.txt, please.\n")  # plain files: any program can steer
        os.rename(inbox / ".writing", inbox / "0001.message")
        assert ga(["tail", run_id], None, home, workspace).returncode == 0
    second, third = server.requests[1]["messages"], server.requests[2]["messages"]
    wanted = {"role": "user", "content": "Message from the user while you work: Also look at b.txt, please."}
    assert wanted not in second and third[-1] == wanted and third[-2]["role"] == "tool"
    assert [e["mail"] for e in events(home / "runs" / run_id, "message") if "mail" in e] == ["0001.message"]


def test_stop_ends_a_run_cleanly_after_the_current_tool(home, workspace):
    slow = "import time; time.sleep(2); open('first.txt', 'w').write('1')"
    steps = [{"tool_calls": [tool_call("code_run", script=slow, type="python"),
                             tool_call("file_write", path="second.txt", content="2")]}, {"content": "both"}]
    with ScriptedServer(steps) as server:
        run_id = detach(["two steps"], server, home, workspace)
        folder = home / "runs" / run_id
        wait_for(lambda: recorded(folder, "call_start"))
        stopped = ga(["stop", run_id, "--wait"], None, home, workspace)
        after_stop = (len(server.requests), (workspace / "first.txt").exists(), (workspace / "second.txt").exists())
        tailed = ga(["tail", run_id], None, home, workspace)
        resumed = ga(["--resume", run_id], server, home, workspace)
    assert stopped.returncode == 0 and "interrupted" in stopped.stdout
    assert after_stop == (1, True, False)  # the current tool finished; the next one and the next request did not run
    assert tailed.returncode == 130 and "Stopped on request" in tailed.stdout
    assert resumed.returncode == 0 and resumed.stdout.strip() == "both"
    assert (workspace / "second.txt").read_text() == "2"
    assert [e["name"] for e in events(folder, "result")] == ["code_run", "file_write"]


def test_stop_of_a_run_that_is_not_running_says_so(home, workspace):
    with ScriptedServer([{"content": "hi"}]) as server:
        run_id = json.loads(ga(["hi", "--json"], server, home, workspace).stdout)["run_id"]
    proc = ga(["stop", run_id], None, home, workspace)
    assert proc.returncode == 1 and "is done, not running" in proc.stderr
    assert not (home / "runs" / run_id / "inbox").exists()


def test_kill_9_of_a_detached_run_shows_crashed_and_resumes(home, workspace):
    steps = [{"tool_calls": [tool_call("file_write", path="one.txt", content="1")]},
             {"delay": 30, "content": "never delivered"}, {"content": "recovered"}]
    with ScriptedServer(steps) as server:
        run_id = detach(["crash me"], server, home, workspace)
        wait_for(lambda: len(server.requests) == 2)
        os.kill(state(home, run_id)["pid"], signal.SIGKILL)
        wait_for(lambda: ended(home, run_id))
        crashed = runs_json(home, "--status", "crashed")
        tailed = ga(["tail", run_id], None, home, workspace)
        resumed = ga(["--resume", run_id], server, home, workspace)
    assert state(home, run_id)["status"] == "done" and [r["run_id"] for r in crashed] == [run_id]
    assert tailed.returncode == 1 and "crashed" in tailed.stderr
    assert resumed.returncode == 0 and resumed.stdout.strip() == "recovered"
    assert (workspace / "one.txt").read_text() == "1"


def test_a_run_whose_process_is_gone_is_crashed_never_running(home, workspace, tmp_path):
    # killed while its first model request is in flight: nothing but the task was recorded
    with ScriptedServer([{"delay": 30, "content": "late"}]) as server:
        proc = subprocess.Popen([sys.executable, RUN_PY, "first words"], cwd=workspace, env=ga_env(server, home),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: len(server.requests) == 1)
        proc.kill()
        proc.wait()
    (run,) = runs_json(home)
    assert run["status"] == "crashed" and state(home, run["run_id"])["status"] == "running"
    # a reused pid is not the run's process: same pid, another start time
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        folder = home / "runs" / run["run_id"]
        stale = {**state(home, run["run_id"]), "pid": sleeper.pid, "pid_started": time.time() - 3600}
        (folder / "state.json").write_text(json.dumps(stale))
        assert status_of(home, run["run_id"]) == "crashed"
        (folder / "state.json").write_text(json.dumps({**stale, "pid_started": None}))
        assert status_of(home, run["run_id"]) == "running"  # no start time recorded: the pid alone decides
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_live_run_without_progress_shows_as_stalled(home, workspace):
    with ScriptedServer([{"delay": 30, "content": "late"}]) as server:
        run_id = detach(["wait"], server, home, workspace)
        wait_for(lambda: len(server.requests) == 1)
        time.sleep(1.5)
        stalled = runs_json(home, "--stalled-after", "0.02")  # minutes
        fresh = runs_json(home)
        table = ga(["runs", "--stalled-after", "0.02"], None, home, workspace).stdout
        os.kill(state(home, run_id)["pid"], signal.SIGKILL)
    assert stalled[0]["status"] == "running" and stalled[0]["stalled"] and stalled[0]["idle_s"] >= 1
    assert not fresh[0]["stalled"]
    assert "stalled" in table.splitlines()[1]


def test_continue_picks_the_newest_run_of_this_workspace(home, workspace, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    steps = [{"content": "first done"}, {"content": "second done"}, {"content": "elsewhere"},
             {"content": "followed up"}, {"content": "last one"}]
    with ScriptedServer(steps) as server:
        first = json.loads(ga(["first task", "--json"], server, home, workspace).stdout)["run_id"]
        second = json.loads(ga(["second task", "--json"], server, home, workspace).stdout)["run_id"]
        ga(["task elsewhere"], server, home, other)
        followed = json.loads(ga(["--continue", "and one more thing", "--json"], server, home, workspace).stdout)
        last = ga(["--last", "--answer", "again"], server, home, workspace)
        server.assert_complete()
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = ga(["--continue"], None, home, empty)
    assert followed["run_id"] == second != first and followed["answer"] == "followed up"
    continued = server.requests[3]["messages"]
    assert continued[1]["content"].endswith("\n\nsecond task")
    assert continued[-1]["content"] == "The user adds: and one more thing"
    assert last.returncode == 0 and server.requests[4]["messages"][1]["content"].endswith("\n\nsecond task")
    assert nothing.returncode == 2 and "No run in this workspace" in nothing.stderr


def test_resume_takes_a_unique_prefix(home, workspace):
    with ScriptedServer([{"content": "one"}, {"content": "two"}]) as server:
        a = json.loads(ga(["a", "--json"], server, home, workspace).stdout)["run_id"]
        b = json.loads(ga(["b", "--json"], server, home, workspace).stdout)["run_id"]
        again = ga(["--resume", a[:-2], "--json"], server, home, workspace)
        ambiguous = ga(["--resume", "20", "--json"], server, home, workspace)
    assert json.loads(again.stdout)["answer"] == "one"
    assert ambiguous.returncode == 2 and "matches 2 runs" in ambiguous.stderr and a in ambiguous.stderr
    assert b in ambiguous.stderr


def test_runs_lists_status_age_turns_tokens_and_task_and_filters(home, workspace):
    steps = [{"tool_calls": [tool_call("file_read", path=".")]}, {"content": "listed"},
             {"tool_calls": [tool_call("ask_user", question="Go?")]},
             {"tool_calls": [tool_call("file_read", path=".")]}]
    with ScriptedServer(steps) as server:
        done = json.loads(ga(["list the files", "--json"], server, home, workspace).stdout)
        paused = json.loads(ga(["ask first", "--json"], server, home, workspace).stdout)
        limited = json.loads(ga(["loop", "--json", "--max-turns", "1"], server, home, workspace).stdout)
    table = ga(["runs"], None, home, workspace)
    rows = runs_json(home)
    only_paused = runs_json(home, "--status", "paused")
    assert [r["run_id"] for r in rows] == [limited["run_id"], paused["run_id"], done["run_id"]]  # newest first
    assert [r["status"] for r in rows] == ["limit", "paused", "done"]
    assert rows[2]["turns"] == 2 and rows[2]["tokens"] == done["usage"]["prompt_tokens"] + done["usage"][
        "completion_tokens"] and rows[2]["task"] == "list the files" and rows[2]["workdir"] == str(workspace)
    assert [r["run_id"] for r in only_paused] == [paused["run_id"]]
    header, *lines = table.stdout.splitlines()
    assert header.split() == ["ID", "STATUS", "AGE", "TURNS", "TOKENS", "TASK"]
    assert lines[1].split()[:2] == [paused["run_id"], "paused"] and lines[2].strip().startswith("? ")  # its question
    assert lines[3].split()[:2] == [done["run_id"], "done"] and lines[3].endswith("list the files")
    bad = ga(["runs", "--status", "sleeping"], None, home, workspace)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_run_forces_a_task_named_like_a_command(home, workspace):
    with ScriptedServer([{"content": "ran it"}]) as server:
        proc = ga(["run", "runs", "--json"], server, home, workspace)
    assert json.loads(proc.stdout)["answer"] == "ran it"
    assert server.requests[0]["messages"][1]["content"].endswith("\n\nruns")


def test_tail_follows_a_run_started_in_the_foreground_through_its_trajectory(home, workspace):
    steps = [{"content": "Writing it.", "tool_calls": [tool_call("file_write", path="x.txt", content="x")]},
             {"delay": 1.5, "content": "all written"}]
    with ScriptedServer(steps) as server:
        proc = subprocess.Popen([sys.executable, RUN_PY, "write x"], cwd=workspace, env=ga_env(server, home),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for(lambda: len(server.requests) == 2)
        (run_id,) = [p.name for p in (home / "runs").iterdir()]
        tailed = ga(["tail", run_id], None, home, workspace)
        proc.communicate(timeout=30)
    assert tailed.returncode == 0
    lines = tailed.stdout.splitlines()
    assert lines[:2] == ["· running", "Writing it."] and lines[2].startswith("✓ file_write: Created x.txt")
    assert lines[3:] == ["all written", "· done all written"]


def test_answer_refuses_a_run_that_is_not_waiting(home, workspace):
    with ScriptedServer([{"content": "hi"}]) as server:
        run_id = json.loads(ga(["hi", "--json"], server, home, workspace).stdout)["run_id"]
    proc = ga(["answer", run_id, "yes"], None, home, workspace)
    assert proc.returncode == 1 and "is done, not waiting for an answer" in proc.stderr and "--resume" in proc.stderr
    assert not (home / "runs" / run_id / "inbox").exists()


@pytest.mark.parametrize(("state_text", "line"), [
    ("[1, 2]", '{"type": "message"}'),
    ("[" * 100_000 + "]" * 100_000, "[1]"),
    ('{"task": "odd", "created": "yesterday", "status": "done"}', "[" * 100_000 + "]" * 100_000),
    ('{"task": "odd", "created": 1, "status": "done", "usage": {"prompt_tokens": "many"}}', "7"),
], ids=["list", "deep", "bad-created", "bad-usage"])
def test_a_bad_run_folder_is_skipped_with_a_line_and_resume_refuses_it_clearly(home, workspace, state_text, line):
    with ScriptedServer([{"content": "fine"}]) as server:
        good = ga(["hello", "--json"], server, home, workspace)
    good_id = json.loads(good.stdout)["run_id"]
    bad = home / "runs" / "20000101-000000-badbad"
    bad.mkdir()
    (bad / "state.json").write_text(state_text)
    (bad / "trajectory.jsonl").write_text(line + "\n")
    (home / "runs" / good_id / "trajectory.jsonl").open("a").write(line + "\n")  # a foreign line in a good run
    listed = ga(["runs"], None, home, workspace)
    assert listed.returncode == 0 and good_id in listed.stdout and "Traceback" not in listed.stderr
    assert f"runs: skipped {bad.name}" in listed.stderr
    assert [r["run_id"] for r in runs_json(home)] == [good_id]
    with ScriptedServer([]) as server:
        resumed = ga(["--resume", bad.name], server, home, workspace)
        again = ga(["--resume", good_id, "--json"], server, home, workspace)  # done: reported again, not run
    assert "Traceback" not in resumed.stderr
    if state_text.startswith("["):
        assert resumed.returncode == 2 and f"Run {bad.name} has" in resumed.stderr
    assert again.returncode == 0 and json.loads(again.stdout)["answer"] == "fine", again.stderr
