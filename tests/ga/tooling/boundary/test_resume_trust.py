"""A resume never relaxes what a run started with: the settings in state.json count only under their seal, so an
edit of state.json (the model's file tools, any program running as the user) cannot turn the sandbox off, leave plan
mode, widen the allowed paths, swap the check or move the endpoint. Through the real run.py and the scripted server.
"""

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


def tamper(home, deep: bool = False, **changes) -> None:
    """What one file_patch of state.json did in the finding: a setting rewritten in place. `deep`: the sealed copy
    too, as a model that read the file would (its seal then no longer holds)."""
    path = only_run(home) / "state.json"
    state = json.loads(path.read_text())
    state.update(changes)
    if deep and "sealed" in state:  # (a ga without seals has none)
        state["sealed"]["settings"].update(changes)
    path.write_text(json.dumps(state))


def events(home, kind: str) -> list[dict]:
    lines = (only_run(home) / "trajectory.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("type") == kind]


DEEP = pytest.mark.parametrize("deep", [False, True], ids=["state-edited", "seal-broken"])


@DEEP
@pytest.mark.skipif(bool(sandbox_probe.problem()), reason="bubblewrap missing or not permitted here")
def test_sandbox_false_written_into_state_does_not_unsandbox_the_resume(home, workspace, tmp_path, deep):
    outside = tmp_path / "outside"
    outside.mkdir()
    escape = f"open({str(outside / 'pwned')!r}, 'w').write('x')"
    steps = [ASK, {"tool_calls": [tool_call("code_run", script=escape)]}, {"content": "tried"}]
    with ScriptedServer(steps) as server:
        paused = ga(["do it"], server, home, workspace)
        assert paused.returncode == 3, paused.stderr
        assert json.loads((only_run(home) / "state.json").read_text())["sandbox"] is True
        tamper(home, deep, sandbox=False)
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes", "--mode", "default"], server, home,
                     workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert not (outside / "pwned").exists()  # the code ran in the sandbox, where that folder is read-only
    assert "state.json was changed after the run started" in resumed.stderr
    assert ("sandbox on" in resumed.stderr) if deep else ("changes are ignored" in resumed.stderr)
    assert json.loads((only_run(home) / "state.json").read_text())["sandbox"] is True  # the record holds the truth
    assert any("state.json was changed" in e.get("text", "") for e in events(home, "notice"))


def test_a_sealed_run_keeps_its_own_settings_and_says_nothing(home, workspace, tmp_path):
    """The seal does not get in the way of honest use: --no-sandbox given at the start holds on a plain resume."""
    outside = tmp_path / "outside"
    outside.mkdir()
    write = f"open({str(outside / 'made')!r}, 'w').write('x')"
    steps = [ASK, {"tool_calls": [tool_call("code_run", script=write)]}, {"content": "made"}]
    with ScriptedServer(steps) as server:
        paused = ga(["do it", "--no-sandbox"], server, home, workspace)
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes"], server, home, workspace)
    assert paused.returncode == 3 and resumed.returncode == 0, paused.stderr + resumed.stderr
    assert (outside / "made").read_text() == "x"
    assert "state.json" not in resumed.stderr and not events(home, "notice")


@DEEP
def test_plan_mode_rewritten_to_default_stays_plan(home, workspace, deep):
    steps = [ASK, {"tool_calls": [tool_call("file_write", path="planned.txt", content="x")]}, {"content": "done"}]
    with ScriptedServer(steps) as server:
        assert ga(["plan it", "--plan"], server, home, workspace).returncode == 3
        tamper(home, deep, mode="default")
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes"], server, home, workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert not (workspace / "planned.txt").exists()
    assert json.loads((only_run(home) / "state.json").read_text())["mode"] == "plan"


@DEEP
def test_an_allowed_path_added_to_state_is_not_allowed(home, workspace, tmp_path, deep):
    outside = tmp_path / "outside"
    outside.mkdir()
    steps = [ASK, {"tool_calls": [tool_call("file_write", path=str(outside / "planted.txt"), content="x")]},
             {"content": "done"}]
    with ScriptedServer(steps) as server:
        assert ga(["do it", "--no-sandbox"], server, home, workspace).returncode == 3
        tamper(home, deep, allow_paths=[str(outside)])
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes", "--no-sandbox", "--mode", "default"],
                     server, home, workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert not (outside / "planted.txt").exists()


def test_a_check_rewritten_in_state_is_not_the_check_that_runs(home, workspace):
    steps = [ASK, {"content": "done, trust me"}, {"content": "still not"}]
    with ScriptedServer(steps) as server:
        assert ga(["make done.txt", "--check", "test -f done.txt", "--no-sandbox"], server, home,
                  workspace).returncode == 3
        tamper(home, check="true")
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes", "--json", "--max-turns", "3"], server,
                     home, workspace)
    assert json.loads(resumed.stdout)["verified"] is not True, resumed.stderr  # `true` would have passed
    assert json.loads((only_run(home) / "state.json").read_text())["check"] == "test -f done.txt"


def test_a_check_whose_seal_is_broken_is_not_run_and_the_resume_asks_for_it(home, workspace):
    steps = [ASK, {"content": "checked"}]
    with ScriptedServer(steps) as server:
        assert ga(["make done.txt", "--check", "test -f done.txt", "--no-sandbox"], server, home,
                  workspace).returncode == 3
        tamper(home, deep=True, check="true")
        refused = ga(["--resume", only_run(home).name, "--answer", "yes"], server, home, workspace)
        assert refused.returncode == 2 and "--check CMD" in refused.stderr, refused.stderr
        assert len(server.requests) == 1  # nothing ran on the rewritten check
        (workspace / "done.txt").write_text("")
        again = ga(["--resume", only_run(home).name, "--answer", "yes", "--check", "test -f done.txt", "--mode",
                    "default", "--json"], server, home, workspace)
    assert again.returncode == 0 and json.loads(again.stdout)["verified"] is True, again.stderr
    assert json.loads((only_run(home) / "state.json").read_text())["check"] == "test -f done.txt"


@DEEP
def test_an_endpoint_rewritten_in_state_gets_nothing(home, workspace, deep):
    """The run started on A; state.json now names B. From a new shell that has the key but no base URL, the resume
    goes where the run was sealed with (A) or, with no seal that holds, where this shell's configuration says (here
    config.toml: A again), never to B."""
    with ScriptedServer([ASK, {"content": "from A"}]) as good, ScriptedServer([{"content": "from B"}]) as bad:
        assert ga(["do it", "--no-sandbox"], good, home, workspace).returncode == 3
        tamper(home, deep, endpoint={"base_url": bad.url, "profile": ""})
        (home / "config.toml").write_text(f'base_url = "{good.url}"\n')
        (home / "config.toml").chmod(0o600)
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes", "--mode", "default"], None, home,
                     workspace, OPENAI_API_KEY="test", GA_MODEL="scripted")  # a new shell: the key, no base URL
        to_bad = list(bad.requests)
    assert to_bad == []
    assert resumed.returncode == 0 and "from A" in resumed.stdout, resumed.stderr


@DEEP
def test_a_workspace_rewritten_in_state_is_not_where_the_resume_works(home, workspace, tmp_path, deep):
    steps = [ASK, {"tool_calls": [tool_call("file_write", path="here.txt", content="x")]}, {"content": "ok"}]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with ScriptedServer(steps) as server:
        assert ga(["do it", "--no-sandbox"], server, home, workspace).returncode == 3
        tamper(home, deep, workdir=str(elsewhere))
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes"], server, home, tmp_path)
    if deep:
        assert resumed.returncode == 2 and "--workdir" in resumed.stderr, resumed.stderr
        assert len(server.requests) == 1
    else:
        assert resumed.returncode == 0, resumed.stderr
        assert (workspace / "here.txt").exists() and not (elsewhere / "here.txt").exists()
