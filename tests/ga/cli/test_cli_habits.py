"""Peers' habits through the real run.py: -c, -r and -p; `ga help` and `ga version`; a one-word task that names a
command; the chat's /help; Ctrl-D at an approval, at `config set api_key` and at `answer ID -`; a cut pipe."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.ga.cli.test_cli import RUN_PY, ga, ga_env, only_run
from tests.scripted import ScriptedServer, tool_call
from tests.tty import run_on_tty


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def tty(args, server, home, cwd, answers=(), **extra):
    return run_on_tty([sys.executable, RUN_PY, *args], cwd=cwd, env=ga_env(server, home, **extra), answers=answers)


ASK = {"tool_calls": [tool_call("ask_user", question="Which file?", candidates=["a.txt", "b.txt"])]}


def test_p_runs_a_task_once_unattended_c_continues_and_r_resumes(home, workspace):
    steps = [ASK, {"tool_calls": [tool_call("file_write", path="b.txt", content="chosen")]}, {"content": "wrote b"},
             {"content": "still here"}]
    with ScriptedServer(steps) as server:
        asked = tty(["-p", "pick a file"], server, home, workspace)  # on a terminal, yet nobody is waited for
        run_id = only_run(home).name
        resumed = ga(["-r", run_id[:12], "--answer", "2"], server, home, workspace)
        continued = ga(["-c", "are you there?"], server, home, workspace)
        server.assert_complete()
    assert asked.returncode == 3 and "[number or your answer] >" not in asked.text, asked.text
    assert "autonomous (--autonomous)" in asked.text
    assert resumed.returncode == 0 and (workspace / "b.txt").read_text() == "chosen"
    assert continued.returncode == 0 and continued.stdout.strip() == "still here"
    assert server.requests[-1]["messages"][-1]["content"] == "The user adds: are you there?"
    both = ga(["-p", "one", "two"], None, home, workspace)
    assert both.returncode == 2 and "give the task once" in both.stderr


def test_help_and_version_are_words_as_well_as_flags(home, workspace):
    helped = ga(["help"], None, home, workspace)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: ") and "--continue" in helped.stdout
    runs_help = ga(["help", "runs"], None, home, workspace)
    assert runs_help.returncode == 0 and "runs" in runs_help.stdout and "--status" in runs_help.stdout
    version = ga(["version"], None, home, workspace)
    assert version.returncode == 0 and version.stdout.startswith("ga ") and version.stdout == \
        ga(["--version"], None, home, workspace).stdout
    unknown = ga(["help", "frobnicate"], None, home, workspace)
    assert unknown.returncode == 2 and "no command 'frobnicate'" in unknown.stderr
    assert not (home / "runs").exists()  # none of them is a task


def test_the_chat_knows_help_and_refuses_unknown_commands_without_sending_them(home, workspace):
    with ScriptedServer([{"content": "It holds the hosts."}]) as server:
        run = tty([], server, home, workspace, answers=[("› ", "/help"), ("› ", "/frobnicate now"),
                                                        ("› ", " /etc/hosts: what is it?"), ("› ", "/exit")])
        server.assert_complete()
    assert run.returncode == 0, run.text
    assert "/exit, /quit" in run.text and "commands of the chat:" in run.text
    assert "unknown command /frobnicate (not sent)" in run.text
    sent = [m["content"] for m in server.requests[0]["messages"] if m["role"] == "user"]
    assert sent[-1].endswith("/etc/hosts: what is it?")  # a line starting with a space is a message


def test_ctrl_d_at_an_approval_pauses_the_run_and_a_resume_asks_again(home, workspace):
    (workspace / "notes.txt").write_text("draft\n")
    steps = [{"tool_calls": [tool_call("file_read", path="notes.txt")]},
             {"tool_calls": [tool_call("file_write", path="notes.txt", content="final\n")]}, {"content": "rewrote it"}]
    with ScriptedServer(steps) as server:
        paused = tty(["rewrite notes", "--confirm"], server, home, workspace, answers=[("[e]dit > ", "\x04")])
        run_id = only_run(home).name
        state = json.loads((only_run(home) / "state.json").read_text())
        resumed = tty(["--resume", run_id], server, home, workspace,  # on a terminal: the chat over the run
                      answers=[("[e]dit > ", "a"), ("› ", "\x04")])
        server.assert_complete()
    assert paused.returncode == 3 and "Traceback" not in paused.text, paused.text
    assert state["status"] == "paused" and "Paused at the approval of a file_write call" in state["message"]
    assert "resume on a terminal to be asked again: " in paused.text and "answer with" not in paused.text
    assert resumed.returncode == 0 and (workspace / "notes.txt").read_text() == "final\n", resumed.text
    assert "may or may not have taken effect" not in resumed.text


def test_ctrl_d_at_config_set_api_key_ends_quietly(home, workspace):
    run = run_on_tty([sys.executable, RUN_PY, "config", "set", "api_key"], cwd=workspace, env=ga_env(None, home),
                     answers=[("(not shown): ", "\x04")], controlling=True)
    assert run.returncode == 1 and "Traceback" not in run.text and "nothing changed" in run.text
    assert not (home / "config.toml").exists()


def test_answer_dash_on_a_terminal_shows_the_question_and_reads_one_line(home, workspace):
    steps = [ASK, {"tool_calls": [tool_call("file_write", path="b.txt", content="chosen")]}, {"content": "wrote b"}]
    with ScriptedServer(steps) as server:
        assert ga(["pick a file"], server, home, workspace).returncode == 3
        run_id = only_run(home).name
        answered = tty(["answer", run_id, "-"], server, home, workspace, answers=[("answer] > ", "2")])
        ga(["tail", run_id], server, home, workspace)
        server.assert_complete()
    assert answered.returncode == 0, answered.text
    assert "? Which file?" in answered.text and "2. b.txt" in answered.text and "continues" in answered.text
    assert (workspace / "b.txt").read_text() == "chosen"


def test_a_cut_pipe_says_so_on_the_terminal(home, workspace):
    with ScriptedServer([{"content": "line one\nline two\n" * 3}]) as server:
        env = ga_env(server, home)
        shell = f"{sys.executable} {RUN_PY} 'say a lot' | true; {sys.executable} {RUN_PY} runs | true"
        run = run_on_tty(["bash", "-c", shell], cwd=workspace, env=env)
    assert "Traceback" not in run.text and "BrokenPipe" not in run.text, run.text
    assert run.text.count("ga: output cut short: its reader closed the pipe") == 2, run.text
    quiet = subprocess.run(f"{sys.executable} {RUN_PY} runs | true", shell=True, cwd=workspace, env=env,
                           capture_output=True, text=True, timeout=60, check=False)
    assert "cut short" not in quiet.stderr  # stderr is no terminal: nobody to tell
