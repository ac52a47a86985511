"""Honest runs through the real CLI: what a capable model does goes through untouched by default, the end state says
what happened (`verified`), --check says what done means, and a reasoning model's thinking stays apart."""

from __future__ import annotations

import json
import sys
import uuid

import pytest

from tests.ga.cli.test_cli import events, ga, only_run
from tests.scripted import ScriptedServer, tool_call


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def bash(script: str) -> dict:
    return {"tool_calls": [tool_call("code_run", script=script, type="bash")]}


def last_user(request: dict) -> str:
    return next(m["content"] for m in reversed(request["messages"]) if m["role"] in ("user", "tool"))


def test_distinct_greps_that_find_nothing_never_pause_the_run(home, workspace):
    (workspace / "app.log").write_text("all quiet\n")
    greps = [bash(f"grep -n 'ERROR-{i}' app.log") for i in range(7)]
    with ScriptedServer([*greps, {"content": "No error of those kinds is in app.log."}]) as server:
        proc = ga(["find the errors", "--json"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "done" and not events(only_run(home), "stage")
    assert all("Escalation" not in last_user(r) for r in server.requests)


def test_the_same_command_failing_the_same_way_escalates_and_the_human_only_after_another_call(home, workspace):
    (workspace / "app.log").write_text("all quiet\n")
    same = bash("grep -n ERROR app.log")
    other = {"tool_calls": [tool_call("file_read", path="missing.log")]}
    with ScriptedServer([same, same, same, other, same]) as server:
        proc = ga(["find the errors", "--json"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 3 and json.loads(proc.stdout)["status"] == "paused", proc.stderr
    assert "code_run repeated with the same arguments after it failed" in last_user(server.requests[2])
    assert "do not retry what failed" in last_user(server.requests[3])  # a third time: still stage 2
    assert [e["stage"] for e in events(only_run(home), "stage")] == [2, 3]


def test_a_path_outside_the_workspace_is_refused_never_written_onto_a_workspace_file(home, workspace):
    (workspace / "etc" / "myapp").mkdir(parents=True)
    (workspace / "etc" / "myapp" / "app.conf").write_text("template = true\n")
    stray = f"/tmp/ga-test-out-{uuid.uuid4().hex}.txt"  # the workspace is under /tmp too
    steps = [{"tool_calls": [tool_call("file_write", path="/etc/ga-test-myapp/app.conf", content="live\n")]},
             {"tool_calls": [tool_call("file_write", path="/etc/myapp/app.conf", content="live\n")]},
             {"tool_calls": [tool_call("file_write", path=stray, content="out\n")]},
             {"content": "I could not write outside the workspace."}]
    with ScriptedServer(steps) as server:
        proc = ga(["deploy the config"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "etc" / "myapp" / "app.conf").read_text() == "template = true\n"
    assert not (workspace / "etc" / "ga-test-myapp").exists() and not (workspace / "out.txt").exists()
    assert "The workspace has etc/myapp/app.conf: if you meant it" in last_user(server.requests[2])
    refusals = [last_user(r) for r in server.requests[1:]]
    assert all("workspace-confinement" in r for r in refusals) and "was used" not in "".join(refusals)
    assert not __import__("os").path.exists(stray)


def test_a_capable_models_ordinary_replies_are_answers(home, workspace):
    closing = "I couldn't find notes.txt in the workspace. Let me know if you meant another file."
    question = "Which region should the report cover: EU or US?"
    steps = [{"tool_calls": [tool_call("file_read", path="notes.txt")]}, {"content": closing}]
    with ScriptedServer(steps) as server:
        proc = ga(["summarise notes.txt"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0 and proc.stdout.strip() == closing, proc.stderr
    with ScriptedServer([{"content": question}]) as server:
        proc = ga(["write the sales report"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0 and proc.stdout.strip() == question
    # the small-model settings doubt the first one once (a 1.5B model's "Let me know" often hides a give-up)
    with ScriptedServer([*steps, {"content": closing}]) as server:
        proc = ga(["summarise notes.txt", "--json"], server, home, workspace, GA_MODEL_SETTINGS="small")
        server.assert_complete()
    assert json.loads(proc.stdout)["model_settings"] == "small" and len(server.requests) == 3


def test_data_that_repeats_with_its_numbers_is_written_not_stopped(home, workspace):
    records = "".join(f'{{"id": {i}, "name": "user{i}", "score": {i * 7 % 100}}}\n' for i in range(60))
    appends = [tool_call("file_write", path="log.txt", content=f"entry {i}\n", mode="append") for i in range(20)]
    steps = [{"tool_calls": [tool_call("file_write", path="users.jsonl", content=records)]},
             {"tool_calls": appends}, {"content": "Wrote users.jsonl and log.txt."}]
    with ScriptedServer(steps) as server:
        proc = ga(["make the fixtures", "--json"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "users.jsonl").read_text() == records
    assert (workspace / "log.txt").read_text() == "".join(f"entry {i}\n" for i in range(20))
    assert json.loads(proc.stdout)["tool_calls"] == 21 and json.loads(proc.stdout)["model_settings"] == "default"


def test_a_final_answer_right_after_a_failed_step_is_not_verified(home, workspace):
    failing = bash("python3 -c 'raise SystemExit(\"2 tests failed\")'")
    with ScriptedServer([failing, {"content": "All tests pass."}]) as server:
        quiet = ga(["run the tests"], server, home, workspace)
        server.assert_complete()
    assert quiet.returncode == 0 and quiet.stdout.strip() == "All tests pass."
    assert "not verified: the last step failed (code_run: [exit code 1" in quiet.stderr
    with ScriptedServer([failing, {"content": "All tests pass."}]) as server:
        proc = ga(["run the tests", "--json"], server, home, workspace)
    state = json.loads((home / "runs" / json.loads(proc.stdout)["run_id"] / "state.json").read_text())
    assert json.loads(proc.stdout)["verified"] is False and state["verified"] is False
    with ScriptedServer([failing, bash("echo fixed"), {"content": "Fixed."}]) as server:
        proc = ga(["run the tests", "--json"], server, home, workspace)
    assert json.loads(proc.stdout)["verified"] is None  # something succeeded after the failure
    runs = ga(["runs", "--json"], None, home, workspace)
    assert [r["verified"] for r in json.loads(runs.stdout)] == [None, False, False]


def test_check_passes_and_the_run_is_verified(home, workspace):
    steps = [{"tool_calls": [tool_call("file_write", path="done.txt", content="ok\n")]}, {"content": "Done."}]
    with ScriptedServer(steps) as server:
        proc = ga(["make done.txt", "--json", "--check", "test -f done.txt"], server, home, workspace)
        server.assert_complete()
    result = json.loads(proc.stdout)
    assert proc.returncode == 0 and result["status"] == "done" and result["verified"] is True, proc.stderr
    (check,) = events(only_run(home), "check")
    assert check["passed"] and check["exit_code"] == 0 and check["command"] == "test -f done.txt"
    assert "check: test -f done.txt" in proc.stderr  # the run header says what done means


def test_a_pytest_py_the_run_wrote_cannot_verify_it_and_the_check_lists_the_run_s_files_it_imported(home, workspace):
    (workspace / "test_app.py").write_text("from app import add\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    steps = [{"tool_calls": [tool_call("file_write", path="pytest.py", content="print('1 passed')\n")]},
             {"content": "Done."}, {"tool_calls": [tool_call("file_read", path="app.py")]},
             {"tool_calls": [tool_call("file_write", path="app.py", content="def add(a, b):\n    return a + b\n")]},
             {"content": "Fixed."}]
    check = f"{sys.executable} -m pytest -q -p no:cacheprovider test_app.py"
    with ScriptedServer(steps) as server:
        proc = ga(["make the tests pass", "--json", "--check", check], server, home, workspace)
        server.assert_complete()
    result = json.loads(proc.stdout)
    assert result["verified"] is True and result["answer"] == "Fixed.", proc.stderr
    first, second = events(only_run(home), "check")
    assert not first["passed"] and "1 failed" in first["content"], first["content"]
    assert second["run_files"] == [str(workspace / "app.py")]  # test_app.py came before the run; pytest.py unused
    assert "made or changed during this run: app.py" in second["content"]


def test_a_failed_check_goes_back_to_the_model_and_the_run_goes_on(home, workspace):
    steps = [{"content": "Done, nothing to do."},
             {"tool_calls": [tool_call("file_write", path="done.txt", content="ok\n")]}, {"content": "Now done."}]
    with ScriptedServer(steps) as server:
        proc = ga(["make done.txt", "--json"], server, home, workspace,
                  GA_CHECK="test -f done.txt || { echo 'done.txt is missing'; exit 1; }")
        server.assert_complete()
    result = json.loads(proc.stdout)
    assert proc.returncode == 0 and result["verified"] is True and result["answer"] == "Now done.", proc.stderr
    told = last_user(server.requests[1])
    assert told.startswith("The check `test -f done.txt || { echo 'done.txt is missing'; exit 1; }` failed with exit 1")
    assert "done.txt is missing" in told
    assert [e["passed"] for e in events(only_run(home), "check")] == [False, True]


def test_a_check_that_keeps_failing_escalates_and_never_exits_0(home, workspace):
    with ScriptedServer([{"content": "Done."}] * 8) as server:  # one call repeated: stage 3 at stage3_after + 2
        proc = ga(["make done.txt", "--json", "--check", "test -f done.txt"], server, home, workspace)
        server.assert_complete()
    result = json.loads(proc.stdout)
    assert proc.returncode == 3 and result["status"] == "paused" and result["verified"] is False
    assert "The check `test -f done.txt` never passed." in result["answer"]
    assert [e["stage"] for e in events(only_run(home), "stage")] == [1, 2, 3]
    with ScriptedServer([{"content": "Done."}] * 2) as server:
        proc = ga(["make done.txt", "--json", "--check", "test -f done.txt", "--max-turns", "2"], server, home,
                  workspace)
    result = json.loads(proc.stdout)
    assert proc.returncode == 4 and result["verified"] is False and "never passed" in result["answer"]


def test_check_with_plan_mode_or_empty_is_a_usage_error(home, workspace):
    for args in (["x", "--check", "true", "--plan"], ["x", "--check", " "]):
        proc = ga(args, None, home, workspace)
        assert proc.returncode == 2 and "--check" in proc.stderr


def test_a_reasoning_models_thinking_stays_in_the_trajectory_only(home, workspace):
    call = json.dumps({"name": "file_write", "arguments": {"path": "hello.txt", "content": "Hello"}})
    thinking = "<think>\nThe user wants a file. I'll write it.\n</think>\n\n"
    steps = [{"content": f"{thinking}<tool_call>\n{call}\n</tool_call>"},
             {"content": "Wrote it.", "reasoning": "Check: the file is written, so I can say so."}]
    with ScriptedServer(steps) as server:  # a call written as text runs under a small model's settings only
        proc = ga(["write hello.txt"], server, home, workspace, GA_MODEL_SETTINGS="small")
        server.assert_complete()
    assert proc.returncode == 0 and proc.stdout.strip() == "Wrote it.", proc.stderr
    assert (workspace / "hello.txt").read_text() == "Hello"
    sent = json.dumps(server.requests[1]["messages"])
    assert "I'll write it" not in sent and "<think>" not in sent
    thoughts = [e["reasoning"] for e in events(only_run(home), "message") if e.get("reasoning")]
    assert thoughts == ["The user wants a file. I'll write it.", "Check: the file is written, so I can say so."]


def test_arguments_nested_too_deep_are_refused_and_the_run_goes_on(home, workspace):
    deep = '{"path": ' + "[" * 5_000 + "]" * 5_000 + "}"  # json.loads alone: RecursionError
    steps = [{"tool_calls": [{"name": "file_read", "arguments": deep}]}, {"content": "Gave up on that."}]
    with ScriptedServer(steps) as server:
        proc = ga(["read it"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0 and proc.stdout.strip() == "Gave up on that.", proc.stderr
    assert "nested more than 32 levels" in last_user(server.requests[1])


def test_an_answer_claiming_a_change_the_workspace_does_not_show_is_doubted_once_then_fails(home, workspace):
    (workspace / "payments.csv").write_text("amount\n1\n2\n")
    read = {"tool_calls": [tool_call("file_read", path="payments.csv")]}
    claim = {"content": "I have saved the sum 3 into total.txt."}
    with ScriptedServer([read, claim, claim]) as server:
        proc = ga(["Write the sum into total.txt", "--json"], server, home, workspace)
        server.assert_complete()
    out = json.loads(proc.stdout)
    assert (proc.returncode, out["status"]) == (1, "failed"), proc.stderr
    assert "changed no file" in last_user(server.requests[2]) and "twice" in out["answer"]


def test_an_answer_whose_change_a_script_made_is_done_at_once(home, workspace):
    steps = [bash("echo 3 > total.txt"), {"content": "I have saved the sum 3 into total.txt."}]
    with ScriptedServer(steps) as server:
        proc = ga(["Write the sum into total.txt", "--json"], server, home, workspace)
        server.assert_complete()
    assert (proc.returncode, json.loads(proc.stdout)["status"]) == (0, "done"), proc.stderr
    assert len(server.requests) == 2  # the doubt adds no turn to a run that changed what it said


def test_an_answer_while_a_file_the_task_names_is_missing_or_empty_is_doubted_once_then_stands(home, workspace):
    (workspace / "config.ini").write_text("[server]\nport = 8080\n")
    prose = {"content": "The port is 8080."}
    with ScriptedServer([prose, bash(": > port.txt"), prose]) as server:
        proc = ga(["Write the port of config.ini into `port.txt`; see https://example.com/x.txt", "--json"],
                  server, home, workspace)
        server.assert_complete()
    out = json.loads(proc.stdout)
    assert (proc.returncode, out["status"], out["verified"]) == (0, "done", False), proc.stderr  # port.txt is empty
    assert "`port.txt` does not exist" in last_user(server.requests[1])
    assert len(server.requests) == 3  # once: the answer over an empty port.txt then stands
    assert [e["files"] for e in events(only_run(home), "nudge")] == [["`port.txt` does not exist"]]


def test_an_answer_over_a_named_json_file_that_does_not_parse_is_doubted_with_the_parse_error(home, workspace):
    done = {"content": "Converted: people.json is written."}
    steps = [bash("""printf '{"name": "Ann"}\\n{"name": "Ben"}\\n' > people.json"""), done,
             bash("""printf '[{"name": "Ann"}, {"name": "Ben"}]\\n' > people.json"""), done]
    with ScriptedServer(steps) as server:
        proc = ga(["Convert names.csv into `people.json`, a JSON list", "--json"], server, home, workspace)
        server.assert_complete()
    out = json.loads(proc.stdout)
    assert (proc.returncode, out["status"]) == (0, "done"), proc.stderr
    assert "`people.json` is not valid JSON: Extra data: line 2 column 1" in last_user(server.requests[2])
    assert json.loads((workspace / "people.json").read_text()) == [{"name": "Ann"}, {"name": "Ben"}]


def test_an_answer_that_only_asks_back_pauses_and_an_answer_continues_it(home, workspace):
    steps = [{"content": "I need more information. Could you please provide the file name?"}]
    with ScriptedServer(steps) as server:
        proc = ga(["Count the lines", "--json"], server, home, workspace)
        server.assert_complete()
    out = json.loads(proc.stdout)
    assert (proc.returncode, out["status"]) == (3, "paused"), proc.stderr
    with ScriptedServer([{"content": "app.py has 11 lines."}]) as server:
        proc = ga(["--resume", out["run_id"], "--answer", "app.py", "--json"], server, home, workspace)
        server.assert_complete()
    assert json.loads(proc.stdout)["status"] == "done", proc.stderr
    assert "app.py" in last_user(server.requests[0])


def test_a_test_tool_the_run_wrote_cannot_verify_it_where_the_real_one_is_missing(home, workspace):
    """nose2 is not installed here: `python -m nose2` finds the nose2.py the run wrote (the workspace is last on the
    check's sys.path, and nothing else answers). It ran, exit 0, but the run is not verified, and says why."""
    steps = [{"tool_calls": [tool_call("file_write", path="nose2.py", content="print('Ran 3 tests\\nOK')\n")]},
             {"content": "Done."}, {"content": "Still done."}, {"content": "Done again."}]
    with ScriptedServer(steps) as server:
        proc = ga(["make the tests pass", "--json", "--max-turns", "4", "--check", f"{sys.executable} -m nose2"],
                  server, home, workspace)
    result = json.loads(proc.stdout)
    assert result["verified"] is not True, proc.stderr
    checks = events(only_run(home), "check")
    assert checks and not checks[0]["passed"]
    assert "nose2.py, a test tool's module this run wrote" in checks[0]["content"]

