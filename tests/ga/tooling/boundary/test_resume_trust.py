"""A resume goes on with what the run started with (the sandbox, the mode, the paths, the check, the endpoint), and
the model cannot rewrite that record: state.json lies in GA_HOME, which the file tools refuse and the sandbox does not
show. Through the real run.py and the scripted server."""

from __future__ import annotations

import json

import pytest

from tests.ga.cli.test_cli import ga, only_run
from tests.scripted import ScriptedServer, tool_call
from tools.guard import sandbox_probe

ASK = {"tool_calls": [tool_call("ask_user", question="Go on?")]}


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def test_a_resume_keeps_the_run_s_own_settings(home, workspace, tmp_path):
    """--no-sandbox given at the start holds on a plain resume; plan mode too."""
    outside = tmp_path / "outside"
    outside.mkdir()
    write = f"open({str(outside / 'made')!r}, 'w').write('x')"
    steps = [ASK, {"tool_calls": [tool_call("code_run", script=write)]}, {"content": "made"}]
    with ScriptedServer(steps) as server:
        paused = ga(["do it", "--no-sandbox"], server, home, workspace)
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes"], server, home, workspace)
    assert paused.returncode == 3 and resumed.returncode == 0, paused.stderr + resumed.stderr
    assert (outside / "made").read_text() == "x"
    plan = home.parent / "plan-home"
    steps = [ASK, {"tool_calls": [tool_call("file_write", path="planned.txt", content="x")]}, {"content": "done"}]
    with ScriptedServer(steps) as server:
        assert ga(["plan it", "--plan"], server, plan, workspace).returncode == 3
        resumed = ga(["--resume", only_run(plan).name, "--answer", "yes"], server, plan, workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert not (workspace / "planned.txt").exists()
    assert json.loads((only_run(plan) / "state.json").read_text())["mode"] == "plan"


def test_the_model_cannot_rewrite_its_run_s_record(home, workspace):
    with ScriptedServer([ASK]) as server:
        assert ga(["do it"], server, home, workspace).returncode == 3
    record = only_run(home) / "state.json"
    before = record.read_text()
    attempts = [{"tool_calls": [tool_call("file_patch", path=str(record), old_content='"sandbox": true',
                                          new_content='"sandbox": false')]},
                {"tool_calls": [tool_call("file_write", path=str(record), content="{}")]},
                {"content": "tried"}]
    if not sandbox_probe.problem():  # sandboxed code does not see GA_HOME at all
        attempts.insert(2, {"tool_calls": [tool_call("code_run", type="bash",
                                                     script=f"ls {record} || echo HIDDEN; echo '{{}}' > {record}")]})
    with ScriptedServer(attempts) as server:
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes", "--mode", "default"], server, home,
                     workspace)
        results = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(record.read_text())["sandbox"] == json.loads(before)["sandbox"]
    assert all("Refused" in r or "refused" in r or "HIDDEN" in r for r in results[-len(attempts) + 1:]), results


def test_a_flag_given_on_the_resume_wins(home, workspace, tmp_path):
    steps = [ASK, {"tool_calls": [tool_call("file_write", path="here.txt", content="x")]}, {"content": "ok"}]
    with ScriptedServer(steps) as server:
        assert ga(["plan it", "--plan"], server, home, workspace).returncode == 3
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes", "--mode", "default"], server, home,
                     workspace)
    assert resumed.returncode == 0 and (workspace / "here.txt").read_text() == "x", resumed.stderr
    assert json.loads((only_run(home) / "state.json").read_text())["mode"] == "default"
