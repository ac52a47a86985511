"""Daily use, round 5: what a user meets running ga every day (background runs, their reasons, the wording)."""

from __future__ import annotations

import json
import re

from tests.ga.cli.test_cli import ga, wait_for
from tests.scripted import ScriptedServer, tool_call

DEAD = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "k", "GA_MODEL": "m"}
"""The discard port: nothing answers there."""


def test_a_background_run_that_cannot_reach_its_server_keeps_its_reason(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    started = ga(["say hi", "--detach"], None, home, workspace, **DEAD)
    run_id = started.stdout.strip()
    assert started.returncode == 0 and run_id, started.stderr
    state = home / "runs" / run_id / "state.json"
    wait_for(lambda: state.exists() and json.loads(state.read_text()).get("status") == "failed")

    listed = ga(["runs"], None, home, workspace)
    assert run_id in listed.stdout and "failed" in listed.stdout
    shown = ga(["runs", "show", run_id], None, home, workspace)
    assert "Cannot reach the model server at http://127.0.0.1:9/v1" in shown.stdout
    tail = ga(["tail", run_id], None, home, workspace)
    assert "failed: Cannot reach the model server" in tail.stdout
    assert "retry 1 of 2" in tail.stdout and "of 6" not in tail.stdout  # it gives up after 3 tries: says so


def test_a_foreground_run_that_cannot_reach_its_server_leaves_no_run(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    proc = ga(["say hi"], None, home, workspace, **DEAD)
    assert proc.returncode == 1 and "Cannot reach the model server" in proc.stderr
    assert not list((home / "runs").glob("2*"))


def test_claude_md_is_read_where_a_folder_has_no_agents_md(tmp_path):
    from ga.context import agents_md

    repo, home = tmp_path / "repo", tmp_path / "ga-home"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    (repo / "CLAUDE.md").write_text("use tabs\n")
    (repo / "sub" / "AGENTS.md").write_text("run make test\n")
    (repo / "sub" / "CLAUDE.md").write_text("never read: AGENTS.md is here\n")
    text, used = agents_md.notes(repo / "sub", home)
    assert used == [repo / "CLAUDE.md", repo / "sub" / "AGENTS.md"]
    assert "use tabs" in text and "run make test" in text and "never read" not in text


def test_a_folder_above_that_cannot_be_read_is_passed_over(tmp_path, monkeypatch):
    from pathlib import Path

    from ga.context import agents_md

    work = tmp_path / "a" / "work"
    work.mkdir(parents=True)
    (work / "AGENTS.md").write_text("be brief\n")
    real = Path.exists

    def exists(self, *args, **kwargs):  # what a non-root user meets in a folder above without the x bit
        if self == tmp_path / "a" / ".git":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "exists", exists)
    text, used = agents_md.notes(work, tmp_path / "ga-home")
    assert used == [work / "AGENTS.md"] and "be brief" in text


def test_an_unreadable_workspace_and_a_bad_ports_list_are_one_line_errors_and_leave_no_run(tmp_path, monkeypatch):
    import os

    import pytest

    from ga.config import load_settings
    from ga.errors import ConfigError

    work = tmp_path / "work"
    work.mkdir()
    proc = ga(["say hi"], None, tmp_path / "home", work, GA_SANDBOX_PORTS="abc", **DEAD)
    assert proc.returncode == 2 and "GA_SANDBOX_PORTS='abc': 'abc' is not a port" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "home" / "runs").exists()
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False)  # root reads everything: as a user would meet it
    with pytest.raises(ConfigError, match="cannot be read"):
        load_settings(env={}, home=tmp_path / "home", workdir=work)


def test_the_wording_a_daily_user_meets(tmp_path, make_ctx, workspace, monkeypatch):
    import io
    import time

    from ga.cli.questions import approve_prompt
    from ga.cli.terminal import Terminal
    from ga.protocols import ToolCall
    from ga.tooling.dispatch import Dispatcher
    from tools.file_write import SPEC

    home = tmp_path / "home"
    runs = home / "runs"
    for run_id in ("20261201-000000-aaaaaa", "20261202-000000-bbbbbb"):
        (runs / run_id).mkdir(parents=True)
        (runs / run_id / "state.json").write_text(json.dumps({"status": "done", "task": "t"}))
    missing = ga(["runs", "show", "nope"], None, home, workspace)
    assert "recent runs: 20261202-000000-bbbbbb, 20261201-000000-aaaaaa" in missing.stderr  # newest first
    done = ga(["answer", "20261202-000000-bbbbbb", "-"], None, home, workspace)
    assert done.returncode == 1 and "is done, not waiting for an answer" in done.stderr  # said before any prompt

    from rich.console import Console

    shown = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("a\n"))
    approve_prompt(Console(file=shown), "run this one command outside it?", "ls", "ls")
    assert "outside it?" in shown.getvalue() and "??" not in shown.getvalue()

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a.txt").write_text("one\n")
    ctx = make_ctx(allow_paths=[outside], mode="confirm", interactive=True)
    terminal = Terminal(err=io.StringIO(), out=io.StringIO())
    ctx.ui = terminal
    call = ToolCall(id="c1", name="file_write", arguments=json.dumps({"path": str(outside / "a.txt"),
                                                                     "content": "two\n"}))
    real = terminal.approve  # the human's time is counted apart from the call's

    asked = []

    def slow_approve(title, text, *args, **kwargs):
        asked.append(text)
        with terminal._paused():
            time.sleep(0.6)
        return "approve", ""

    terminal.approve = slow_approve
    Dispatcher([SPEC]).dispatch([call], ctx)  # an unread file: refused, and shown (read) by the refusal
    (result,) = Dispatcher([SPEC]).dispatch([call], ctx)
    terminal.approve = real
    assert asked and f"--- {outside / 'a.txt'}" in asked[-1] and "a//" not in asked[-1]  # the diff shown
    assert (outside / "a.txt").read_text() == "two\n" and result.details["elapsed"] < 0.5


def test_with_check_a_terminal_shows_the_answer_once(tmp_path):
    import sys

    from tests.ga.cli.test_cli import RUN_PY, ga_env
    from tests.scripted import ScriptedServer, tool_call
    from tests.tty import run_on_tty

    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    steps = [{"tool_calls": [tool_call("file_write", path="done.txt", content="ok\n")]},
             {"content": "All done: DONE-MARKER-7"}]
    with ScriptedServer(steps) as server:
        shown = run_on_tty([sys.executable, RUN_PY, "make done.txt", "--check", "test -f done.txt"], cwd=workspace,
                           env=ga_env(server, home))
    assert shown.returncode == 0, shown.text
    assert shown.text.count("DONE-MARKER-7") == 1, shown.text


def test_a_long_error_line_keeps_its_last_sentence():
    from ga.tooling.screen import one_line

    said = ("Refused to overwrite notes.txt (3 lines): this run has not read it, and overwriting would lose its "
            "content; its lines are shown below. To replace it anyway, send the same file_write again; to change a "
            "part, use file_patch; to add to it, mode=append. Nothing was written.")
    shown = one_line(said, 160, keep_last=True)
    assert len(shown) <= 160 and shown.endswith("… Nothing was written.") and shown.startswith("Refused to overwrite")
    assert one_line("short. enough.", 160, keep_last=True) == "short. enough."


def test_bench_list_names_the_suites_and_bench_agents_says_what_is_installed(tmp_path):
    from tests.ga.cli.test_cli import ga

    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    listed = ga(["bench", "list"], None, home, workspace)
    assert listed.returncode == 0 and "not a folder of tasks" not in listed.stderr, listed.stderr
    assert any(line.startswith("small ") and "tasks" in line for line in listed.stdout.splitlines())
    agents = ga(["bench", "agents"], None, home, workspace, GA_BENCH_AGENTS=str(tmp_path / "none"))
    rows = agents.stdout.splitlines()
    assert agents.returncode == 0 and any(r.startswith("pi ") and "not installed" in r for r in rows), agents.stdout
    columns = {re.search(r"  (un)?tested  ", r).start() for r in rows if re.search(r"  (un)?tested  ", r)}
    assert len(columns) == 1, rows  # one column for tested/untested: the rows line up


def test_unattended_the_user_is_told_in_one_line_when_the_sandbox_stopped_a_command(tmp_path):
    import pytest

    from tests.scripted import ScriptedServer, tool_call
    from tools.guard import sandbox_probe

    if sandbox_probe.problem():
        pytest.skip("bubblewrap missing or not permitted here")
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    script = "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:9/', timeout=5)"
    steps = [{"tool_calls": [tool_call("code_run", script=script)]}, {"content": "It is down."}]
    with ScriptedServer(steps) as server:
        proc = ga(["is my dev server up?"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    assert "the sandbox stopped it: its network is its own" in proc.stderr, proc.stderr


def test_models_says_partly_provisioned_when_a_download_was_interrupted(tmp_path):
    from ga.local.endpoint import local_cache

    xdg = tmp_path / "xdg"
    env = {"XDG_CACHE_HOME": str(xdg)}
    root = local_cache(env).root
    (root / "downloads").mkdir(parents=True)
    (root / "downloads" / "model.gguf.part").write_bytes(b"x" * 4096)  # what a Ctrl-C left
    proc = ga(["models"], None, tmp_path / "home", tmp_path, GA_MODEL="local", **env)
    assert "partly provisioned" in proc.stdout and "goes on from what is here" in proc.stdout, proc.stdout


def test_a_plan_run_does_not_end_with_not_verified_over_an_expected_refusal(tmp_path):
    from tests.scripted import ScriptedServer, tool_call

    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    steps = [{"tool_calls": [tool_call("file_write", path="plan.txt", content="x")]},
             {"content": "The plan: write plan.txt."}]
    with ScriptedServer(steps) as server:
        proc = ga(["plan the change", "--plan"], server, home, workspace)
    assert proc.returncode == 0 and "The plan" in proc.stdout, proc.stderr
    assert "not verified" not in proc.stderr


def test_tail_of_a_paused_run_ends_with_the_answer_command_and_its_own_id(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    with ScriptedServer([{"tool_calls": [tool_call("ask_user", question="Which file?")]}]) as server:
        paused = ga(["do a thing", "--autonomous"], server, home, workspace)
    assert paused.returncode == 3, paused.stderr
    (run_id,) = [p.name for p in (home / "runs").iterdir()]
    tail = ga(["tail", run_id], None, home, workspace)
    assert tail.returncode == 3 and "The agent asks: Which file?" in tail.stdout
    assert tail.stderr.strip().endswith(f'answer {run_id} "..."'), tail.stderr
