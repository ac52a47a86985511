"""End to end: the real run.py in a subprocess, the real openai client, the scripted server over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.scripted import ScriptedServer, tool_call

RUN_PY = str(Path(__file__).resolve().parents[3] / "run.py")


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def ga_env(server: ScriptedServer | None, home: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GA_"))}
    # learning off unless a test asks for it: it replays the run's work in the sandbox, seconds a test need not pay
    env.update({"GA_HOME": str(home), "GA_RETRY_BASE": "0.01", "GA_LEARN": "0", **extra})
    if server is not None:
        env.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="test", GA_MODEL="scripted")
    return env


def ga(args: list[str], server, home, cwd, timeout: float = 60, **extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, RUN_PY, *args], cwd=cwd, env=ga_env(server, home, **extra), check=False,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def ga_background(args: list[str], server, home, cwd, **extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, RUN_PY, *args], cwd=cwd, env=ga_env(server, home, **extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)


def only_run(home: Path) -> Path:
    (folder,) = (home / "runs").iterdir()
    return folder


def events(folder: Path, kind: str) -> list[dict]:
    lines = (folder / "trajectory.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


def wait_for(predicate, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


def test_reads_patches_and_writes_files_then_answers_on_stdout(home, workspace):
    (workspace / "notes.txt").write_text("hello world\nsecond line\n")
    steps = [
        {"content": "Reading first.", "tool_calls": [tool_call("file_read", path="notes.txt")]},
        {"tool_calls": [tool_call("file_patch", path="notes.txt", old_content="hello", new_content="goodbye")]},
        {"tool_calls": [tool_call("file_write", path="out/summary.txt", content="patched\n")]},
        {"content": "All done: notes patched, summary written."},
    ]
    with ScriptedServer(steps) as server:
        proc = ga(["fix the notes"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "All done: notes patched, summary written."
    assert (workspace / "notes.txt").read_text() == "goodbye world\nsecond line\n"
    assert (workspace / "out/summary.txt").read_text() == "patched\n"
    second = server.requests[1]["messages"]
    assert "hello world" in second[-1]["content"] and second[-1]["role"] == "tool"
    assert [t["function"]["name"] for t in server.requests[0]["tools"]][:3] == ["file_read", "file_patch", "file_write"]
    assert "file_patch" in proc.stderr  # one progress line per tool call


def test_json_output_is_the_documented_object(home, workspace):
    steps = [{"tool_calls": [tool_call("file_write", path="a.txt", content="x")]}, {"content": "wrote it"}]
    with ScriptedServer(steps) as server:
        proc = ga(["write a", "--json"], server, home, workspace)
    out = json.loads(proc.stdout)
    assert proc.returncode == 0
    assert set(out) == {"run_id", "status", "answer", "verified", "usage", "tool_calls", "model", "duration_s",
                        "model_settings"}
    assert (out["status"], out["answer"], out["tool_calls"], out["verified"]) == ("done", "wrote it", 1, None)
    assert out["model"] == "scripted" and 0 < out["duration_s"] < 60
    assert out["usage"]["requests"] == 2 and out["usage"]["prompt_tokens"] > 0
    assert (home / "runs" / out["run_id"] / "state.json").is_file()


def test_bad_model_input_becomes_errors_the_run_survives(home, workspace):
    steps = [
        {"tool_calls": [{"name": "no_such_tool", "arguments": "{}"}]},
        {"tool_calls": [{"name": "file_read", "arguments": '{"path": "a.txt",'}]},
        {"tool_calls": [tool_call("file_read", path="a.txt", count="")]},
        {"tool_calls": [tool_call("file_read", path="/etc/passwd")]},
        {"content": "gave up politely"},
    ]
    (workspace / "a.txt").write_text("a\n")
    with ScriptedServer(steps) as server:
        proc = ga(["try things", "--json"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    results = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert "Unknown tool 'no_such_tool'" in results[0]
    assert "not valid JSON" in results[1]
    assert "Invalid arguments for file_read" in results[2] and "count" in results[2]
    assert "outside the workspace" in results[3]


def test_server_errors_are_retried_500_twice_then_200(home, workspace):
    with ScriptedServer([{"fault": "500"}, {"fault": "500"}, {"content": "made it"}]) as server:
        proc = ga(["x"], server, home, workspace)
    assert (proc.returncode, proc.stdout.strip()) == (0, "made it")
    assert len(server.requests) == 3


def test_kill_9_mid_run_then_resume_does_every_side_effect_once(home, workspace):
    append = [{"tool_calls": [tool_call("file_write", path="log.txt", content=f"{w}\n", mode="append")]}
              for w in ("one", "two", "three")]
    steps = [append[0], append[1], {"delay": 30, "content": "never delivered"}, append[2], {"content": "logged"}]
    with ScriptedServer(steps) as server:
        proc = ga_background(["log three words"], server, home, workspace)
        wait_for(lambda: len(server.requests) == 3)  # the third request is in flight
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        run_id = only_run(home).name
        resumed = ga(["--resume", run_id], server, home, workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "logged"
    assert (workspace / "log.txt").read_text() == "one\ntwo\nthree\n"
    assert len(events(only_run(home), "result")) == 3


def test_ask_user_pauses_with_exit_3_and_resume_answer_continues(home, workspace):
    steps = [{"tool_calls": [tool_call("ask_user", question="Which file?", candidates=["a.txt", "b.txt"])]},
             {"tool_calls": [tool_call("file_write", path="b.txt", content="chosen")]}, {"content": "wrote b.txt"}]
    with ScriptedServer(steps) as server:
        paused = ga(["pick a file", "--json"], server, home, workspace)
        run_id = json.loads(paused.stdout)["run_id"]
        resumed = ga(["--resume", run_id, "--answer", "2"], server, home, workspace)
        server.assert_complete()
    assert paused.returncode == 3 and "Which file?" in paused.stderr and "--answer" in paused.stderr
    assert resumed.returncode == 0 and resumed.stdout.strip() == "wrote b.txt"
    assert (workspace / "b.txt").read_text() == "chosen"
    assert server.requests[1]["messages"][-1]["content"] == "The user answered: b.txt"


def test_ctrl_c_saves_the_run_and_it_resumes(home, workspace):
    with ScriptedServer([{"delay": 30, "content": "lost"}, {"content": "finished"}]) as server:
        proc = ga_background(["slow"], server, home, workspace)
        wait_for(lambda: len(server.requests) == 1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        state = json.loads((only_run(home) / "state.json").read_text())
        resumed = ga(["--resume", only_run(home).name], server, home, workspace)
    assert proc.returncode == 130 and "Traceback" not in err
    assert state["status"] == "interrupted"
    assert resumed.returncode == 0 and resumed.stdout.strip() == "finished"


def test_unknown_flag_is_a_usage_error(home, workspace):
    proc = ga(["task", "--turbo"], None, home, workspace)
    assert proc.returncode == 2 and "unrecognized arguments: --turbo" in proc.stderr


def test_resume_of_a_run_that_does_not_exist(home, workspace):
    with ScriptedServer([]) as server:
        proc = ga(["--resume", "nope"], server, home, workspace)
    assert proc.returncode == 2 and "No run 'nope'" in proc.stderr and "Traceback" not in proc.stderr


def test_no_endpoint_configured_names_the_variables(home, workspace):
    proc = ga(["task"], None, home, workspace)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "OPENAI_BASE_URL" in proc.stderr and "OPENAI_API_KEY" in proc.stderr and "Ollama" in proc.stderr
    assert not (home / "runs").exists()
    as_json = json.loads(ga(["task", "--json"], None, home, workspace).stdout)
    assert as_json["status"] == "error" and "OPENAI_BASE_URL" in as_json["answer"]


def test_limits_end_with_exit_4(home, workspace):
    steps = [{"tool_calls": [tool_call("file_read", path=".")]}] * 2
    with ScriptedServer(steps) as server:
        proc = ga(["loop", "--max-turns", "2"], server, home, workspace)
    assert proc.returncode == 4 and "turn limit" in proc.stderr


def test_a_resumed_run_keeps_plan_mode(home, workspace):
    steps = [{"tool_calls": [tool_call("ask_user", question="Go?")]},
             {"tool_calls": [tool_call("file_write", path="planned.txt", content="x")]}, {"content": "planned it"}]
    with ScriptedServer(steps) as server:
        paused = ga(["plan it", "--plan", "--json"], server, home, workspace)
        resumed = ga(["--resume", json.loads(paused.stdout)["run_id"], "--answer", "yes"], server, home, workspace)
    assert paused.returncode == 3 and resumed.returncode == 0
    assert not (workspace / "planned.txt").exists()
    assert "plan mode" in server.requests[-1]["messages"][-1]["content"]


def test_resuming_a_finished_run_reports_it_again(home, workspace):
    steps = [{"tool_calls": [tool_call("file_read", path=".")]}, {"content": "listed"}]
    with ScriptedServer(steps) as server:
        first = json.loads(ga(["list the files", "--json"], server, home, workspace).stdout)
        again = ga(["--resume", first["run_id"], "--json"], server, home, workspace)
    assert json.loads(again.stdout) == first and again.returncode == 0


def test_an_unusable_ga_home_is_a_configuration_error(tmp_path, workspace):
    (tmp_path / "home-file").write_text("")
    with ScriptedServer([]) as server:
        proc = ga(["task", "--json"], server, tmp_path / "home-file", workspace)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["status"] == "error" and "GA_HOME" in proc.stderr


def test_a_call_id_is_never_used_as_a_path(home, workspace):
    script = "print('x' * 200_000)"
    steps = [{"tool_calls": [{"id": "../../../../escaped", "name": "code_run", "arguments": {"script": script}}]},
             {"content": "printed"}]
    with ScriptedServer(steps) as server:
        proc = ga(["print"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    assert not list(home.parent.rglob("escaped*"))
    assert list((only_run(home) / "outputs").iterdir())
