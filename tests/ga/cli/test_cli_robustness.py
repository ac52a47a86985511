"""Through run.py: text that is not UTF-8, broken and hanging servers, and limits that hold."""

from __future__ import annotations

import json
import os
import time

import pytest

from ga.reply import CUT_TEXT
from tests.ga.cli.test_cli import events, ga, only_run
from tests.scripted import ScriptedServer, tool_call


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def _state(folder) -> dict:
    return json.loads((folder / "state.json").read_text())


def test_a_latin1_file_is_patched_recorded_and_the_run_resumes(home, workspace):
    (workspace / "menu.txt").write_bytes("caf\xe9 cr\xe8me\nthe end\n".encode("latin-1"))
    steps = [{"tool_calls": [tool_call("file_read", path="menu.txt")]},
             {"tool_calls": [tool_call("file_patch", path="menu.txt", old_content="the end", new_content="fin")]},
             {"content": "patched"}]
    with ScriptedServer(steps) as server:
        proc = ga(["patch the menu", "--json"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "menu.txt").read_bytes() == "caf\xe9 cr\xe8me\nfin\n".encode("latin-1")
    folder = only_run(home)
    assert [e["name"] for e in events(folder, "result")] == ["file_read", "file_patch"]
    with ScriptedServer([]) as server:  # a finished run resumes and reports itself again
        again = ga(["--resume", folder.name, "--json"], server, home, workspace)
    assert again.returncode == 0 and json.loads(again.stdout)["answer"] == "patched"


def test_a_folder_holding_a_file_name_that_is_not_utf8_is_listed(home, workspace):
    os.mkdir(workspace / "data")
    with open(os.path.join(os.fsencode(workspace / "data"), b"caf\xe9.txt"), "wb") as f:
        f.write(b"x")
    steps = [{"tool_calls": [tool_call("file_read", path="data")]}, {"content": "listed"}]
    with ScriptedServer(steps) as server:
        proc = ga(["list data", "--json"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    (listing,) = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "caf\\xe9.txt" in listing
    assert "caf\\xe9.txt" in events(only_run(home), "result")[0]["content"]


def test_a_lone_surrogate_in_tool_arguments_is_written_safely(home, workspace):
    raw = '{"path": "smile.txt", "content": "half an emoji: \\ud83d"}'
    steps = [{"tool_calls": [{"name": "file_write", "arguments": raw}]},
             {"tool_calls": [{"name": "update_working_checkpoint", "arguments": '{"key_info": "note \\ud83d"}'}]},
             {"tool_calls": [{"name": "file_write", "arguments": raw}]},
             {"content": "wrote it"}]
    with ScriptedServer(steps) as server:
        proc = ga(["write a smile", "--json"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "smile.txt").read_text(encoding="utf-8") == "half an emoji: \ufffd"
    folder = only_run(home)
    assert [e["is_error"] for e in events(folder, "result")] == [False, False, False]
    assert _state(folder)["tool_state"]["checkpoint"] == "note \ufffd"


def test_a_task_that_is_not_utf8_is_kept(home, workspace):
    with ScriptedServer([{"content": "ok"}]) as server:
        proc = ga([os.fsdecode(b"lis le fichier caf\xe9"), "--json"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    assert _state(only_run(home))["task"] == "lis le fichier caf\\xe9"


@pytest.mark.parametrize("fault", ["truncated_json", "bad_sse"])
def test_a_broken_reply_is_retried_then_fails_with_the_json_object_and_resumes(home, workspace, fault):
    with ScriptedServer([{"fault": fault}] * 3) as server:
        proc = ga(["hello", "--json"], server, home, workspace, GA_RETRIES="2")
        server.assert_complete()
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["status"] == "failed" and "broken reply" in out["answer"] and "after 3 attempts" in out["answer"]
    folder = only_run(home)
    assert out["run_id"] == folder.name and _state(folder)["status"] == "failed"
    with ScriptedServer([{"content": "hi there"}]) as server:
        again = ga(["--resume", folder.name, "--json"], server, home, workspace)
    assert again.returncode == 0 and json.loads(again.stdout)["answer"] == "hi there"


@pytest.mark.parametrize("fault", ["silent", "keepalive"])
def test_max_time_ends_a_hanging_request_with_exit_4_and_the_run_saved(home, workspace, fault):
    with ScriptedServer([{"fault": fault}, {"content": "back"}]) as server:
        started = time.monotonic()
        proc = ga(["hello", "--json", "--max-time", "4"], server, home, workspace)
        took = time.monotonic() - started
        assert proc.returncode == 4, proc.stderr
        assert took < 4 + 8  # the interpreter's start-up on a loaded machine, not the hang
        out = json.loads(proc.stdout)
        assert out["status"] == "limit" and "time limit" in out["answer"]
        folder = only_run(home)
        assert _state(folder)["status"] == "limit"
        again = ga(["--resume", folder.name, "--json"], server, home, workspace)
    assert again.returncode == 0 and json.loads(again.stdout)["answer"] == "back"


def test_a_small_models_reply_may_take_a_third_of_the_time_left_then_it_is_cut_and_the_run_goes_on(home, workspace):
    slow = "A long answer that a slow model streams. " * 3  # in three pieces, 2 s apart: 10 s for the whole reply
    with ScriptedServer([{"content": slow, "drip": 2}, {"content": "The answer is short."}]) as server:
        proc = ga(["hello", "--json", "--max-time", "12"], server, home, workspace, GA_MODEL_SETTINGS="small")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "The answer is short."
    cut, told = server.requests[1]["messages"][-2:]
    assert cut["role"] == "assistant" and slow.startswith(cut["content"]) and cut["content"] != slow  # stopped at ~4 s
    assert told["content"] == CUT_TEXT


def test_a_server_that_is_not_there_fails_fast_and_leaves_no_run(home, workspace):
    with ScriptedServer() as gone:
        url = gone.url
    started = time.monotonic()
    proc = ga(["hello", "--json"], None, home, workspace, OPENAI_BASE_URL=url, OPENAI_API_KEY="k", GA_MODEL="m")
    assert time.monotonic() - started < 15
    assert proc.returncode == 1
    assert f"Cannot reach the model server at {url}" in proc.stderr and "--resume" not in proc.stderr
    out = json.loads(proc.stdout)
    assert (out["run_id"], out["status"]) == (None, "error") and url in out["answer"]
    assert not (home / "runs").exists() or not list((home / "runs").iterdir())


def test_a_100_mb_reply_is_neither_read_whole_nor_kept(home, workspace):
    with ScriptedServer([{"fault": "huge"}, {"content": "small again"}]) as server:
        proc = ga(["hello", "--json", "--no-stream"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert "reply larger than 16 MB; dropped" in proc.stderr
    assert json.loads(proc.stdout)["answer"] == "small again"
    assert (only_run(home) / "trajectory.jsonl").stat().st_size < 20_000


def test_a_reply_that_repeats_itself_is_stopped_runs_nothing_and_the_model_is_told(home, workspace):
    loop = "import unittest\nimport sys\nsys.path.append('/work/trials/ga/fix-calc-bug')\n" * 400  # a 1.5B model's
    steps = [{"tool_calls": [tool_call("file_write", path="test_stats.py", content=loop)]}, {"content": "I stopped."}]
    with ScriptedServer(steps) as server:
        proc = ga(["fix the tests", "--json"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0 and json.loads(proc.stdout)["answer"] == "I stopped."
    assert not (workspace / "test_stats.py").exists()
    told = server.requests[1]["messages"][-1]
    assert told["role"] == "tool" and told["content"].startswith("Your reply was stopped: it kept repeating")
    assert "nothing of it was run" in told["content"]


def test_a_run_that_deletes_ga_home_stops_with_what_happened_not_a_traceback(home, workspace):
    # code made at run time: the command policy cannot see what it does (only the sandbox is a boundary)
    hidden = f"import shutil; shutil.rmtree({str(home)!r})".encode().hex()
    wipe = f"exec(bytes.fromhex('{hidden}').decode())"
    steps = [{"tool_calls": [tool_call("code_run", script=wipe, type="python")]}, {"content": "never asked"}]
    (workspace / "kept.txt").write_text("the workspace stays\n")
    with ScriptedServer(steps) as server:
        proc = ga(["tidy up", "--json", "--no-sandbox"], server, home, workspace)
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "failed" and "was deleted while the run went on" in result["answer"]
    assert "Traceback" not in proc.stderr and "was deleted while the run went on" in proc.stderr
    assert (workspace / "kept.txt").is_file() and len(server.requests) == 1
