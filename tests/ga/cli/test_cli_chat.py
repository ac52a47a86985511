"""`ga` alone on a terminal: a chat over one run, through a real pseudo-terminal (readline, Ctrl-D, questions)."""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import threading
import time

import psutil
import pytest

from tests.ga.cli.test_cli import RUN_PY, events, ga, ga_env, only_run
from tests.scripted import ScriptedServer, tool_call
from tests.tty import run_on_tty

PROMPT = "› "
CTRL_C, CTRL_D = "\x03", "\x04"
APPROVE = "[a]pprove / [r]eject / [e]dit > "
UP = "\x1b[A"
ALIVE = "grep -q '^State:.*[RS]' /proc/$(cat pid.txt)/status && echo alive"
"""A killed process that is not reaped yet still answers `kill -0`: its state says whether it runs."""


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def chat(args, server, home, cwd, lines, **extra):
    """Type each of `lines` at the chat's prompt (an answer to a question is a (prompt, text) pair), then Ctrl-D."""
    answers = [line if isinstance(line, tuple) else (PROMPT, line) for line in [*lines, CTRL_D]]
    return run_on_tty([sys.executable, RUN_PY, *args], cwd=cwd, env=ga_env(server, home, **extra), answers=answers,
                      timeout=90, controlling=True)


def test_ga_alone_on_a_terminal_is_a_chat_over_one_run(home, workspace):
    steps = [{"tool_calls": [tool_call("file_write", path="a.txt", content="A\n")]}, {"content": "Wrote a.txt."},
             {"tool_calls": [tool_call("ask_user", question="Which colour?", candidates=["red", "blue"])]},
             {"content": "Blue it is."}]
    with ScriptedServer(steps) as server:
        run = chat([], server, home, workspace, ["write a file", "pick a colour", ("[number or your answer] > ", "2")])
        server.assert_complete()
        third = server.requests[2]["messages"]
    assert run.returncode == 0, run.text
    screen = run.screen
    assert screen[0] == "ga chat: type a task; each next line goes on with the same run. Ctrl-C stops a reply, " \
        "Ctrl-D ends the chat, /help lists the rest"
    assert screen[1] == f"{PROMPT}write a file" and screen[2].startswith("run ")
    assert screen.index("Wrote a.txt.") < screen.index(f"{PROMPT}pick a colour") < screen.index("? Which colour?")
    assert screen.index("Blue it is.") < len(screen) - 2 and screen[-2] == PROMPT.rstrip()
    per_message = [line for line in screen if line.startswith("2 turns · ")]
    assert len(per_message) == 2  # one line of what each message took
    folder = only_run(home)
    state = json.loads((folder / "state.json").read_text())
    assert state["status"] == "done" and state["task"] == "write a file" and state["turns"] == 4
    assert screen[-1].startswith(f"run {folder.name} is done; open it again with: ")  # then ga as it was started
    assert screen[-1].endswith(f"run.py --continue  (or --resume {folder.name})")
    assert third[-1] == {"role": "user", "content": "The user adds: pick a colour"}
    assert "Wrote a.txt." in [m.get("content") for m in third]  # the same run: the first exchange is in it
    assert [e["details"].get("answer") for e in events(folder, "result")] == [None, "blue"]
    assert (workspace / "a.txt").read_text() == "A\n"


def test_ctrl_d_at_once_makes_no_run_and_a_pipe_still_needs_a_task(home, workspace):
    with ScriptedServer([]) as server:
        run = chat([], server, home, workspace, [])
        piped = ga([], server, home, workspace)
    assert run.returncode == 0 and not (home / "runs").exists(), run.text
    assert piped.returncode == 2 and "give a task" in piped.stderr


def test_a_chat_that_cannot_start_says_why_and_leaves_no_run(home, workspace):
    unconfigured = run_on_tty([sys.executable, RUN_PY], cwd=workspace, env=ga_env(None, home))
    assert unconfigured.returncode == 2 and "No model endpoint configured" in unconfigured.text
    assert PROMPT not in unconfigured.text  # said before the prompt, not after the first line
    env = ga_env(None, home, OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="k", GA_MODEL="m")
    unreachable = run_on_tty([sys.executable, RUN_PY], cwd=workspace, env=env, answers=[(PROMPT, "hello")])
    assert unreachable.returncode == 1 and "Cannot reach the model server" in unreachable.text
    assert "Traceback" not in unreachable.text and not list((home / "runs").iterdir())


def test_ctrl_c_stops_the_reply_and_its_program_not_the_chat(home, workspace):
    start = 'echo $$ > pid.txt; echo slee""ping; exec sleep 60'  # "sleeping" shows once it runs, not in the call
    steps = [{"tool_calls": [tool_call("code_run", script=start, type="bash")]},
             {"tool_calls": [tool_call("code_run", script=ALIVE.replace("alive", "alive || echo gone"), type="bash")]},
             {"content": "carried on"}]
    with ScriptedServer(steps) as server:
        run = chat(["--no-sandbox"], server, home, workspace,  # the test reads the program's pid on the host
                   ["sleep a minute", ("sleeping", CTRL_C), CTRL_C, "go on"])  # a second Ctrl-C at once
        server.assert_complete()
        checked = [m for m in server.requests[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert run.returncode == 0 and "Traceback" not in run.text, run.text
    assert "! stopped by you (Ctrl-C); what was done is kept and your next line goes on from here" in run.screen
    assert "gone" in checked  # the program was killed at Ctrl-C, before the next line
    assert f"{PROMPT}^C  (Ctrl-D ends the chat)" in run.screen  # heard at the prompt drawn right after the stop
    assert run.text.index("stopped by you") < run.text.index(f"{PROMPT}go on") < run.text.index("carried on")
    assert run.screen[-1].startswith("run ") and json.loads((only_run(home) / "state.json").read_text())[
        "status"] == "done"


def test_ctrl_c_at_the_prompt_drops_the_line_and_the_chat_stays(home, workspace):
    with ScriptedServer([{"content": "hi"}, {"content": "carried on"}]) as server:
        run = chat([], server, home, workspace, ["hello", "half a line" + CTRL_C, "go on"])
        server.assert_complete()
    assert run.returncode == 0 and "Traceback" not in run.text, run.text
    assert f"{PROMPT}^C  (Ctrl-D ends the chat)" in run.screen  # the line is dropped, the chat stays
    assert server.requests[1]["messages"][-1]["content"] == "The user adds: go on"


def test_a_call_stopped_by_ctrl_c_is_not_run_at_the_next_line(home, workspace):
    steps = [{"tool_calls": [tool_call("file_write", path="a.txt", content="A\n")]}, {"content": "Left it."}]
    with ScriptedServer(steps) as server:
        run = chat(["--confirm"], server, home, workspace, ["write a", (APPROVE, CTRL_C), "never mind"])
        server.assert_complete()
        results = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert run.returncode == 0 and run.text.count("Approve file_write") == 1, run.text  # not again at "never mind"
    assert results == ["The user stopped this file_write call (Ctrl-C) before it finished; it may or may not have "
                       "taken effect. Do not repeat it unless asked."]  # no hint to fix it: a stop is no failure
    assert not (workspace / "a.txt").exists() and "not verified" not in run.text


def test_sigterm_at_the_prompt_ends_the_chat_as_ctrl_d_does(home, workspace):
    def terminate() -> None:  # once the first answer is in and the prompt waits
        while not (runs := list((home / "runs").glob("*/state.json"))) or '"done"' not in runs[0].read_text():
            time.sleep(0.1)
        time.sleep(0.5)
        for proc in psutil.process_iter(["cmdline", "cwd"]):
            if proc.info["cwd"] == str(workspace) and RUN_PY in (proc.info["cmdline"] or []):
                proc.send_signal(signal.SIGTERM)

    with ScriptedServer([{"content": "hi there"}]) as server:
        threading.Thread(target=terminate, daemon=True).start()
        run = run_on_tty([sys.executable, RUN_PY], cwd=workspace, env=ga_env(server, home), timeout=60,
                         answers=[(PROMPT, "hello")], controlling=True)
    assert run.returncode == 0 and "Traceback" not in run.text, run.text
    assert run.screen[-1].startswith(f"run {only_run(home).name} is done; open it again with: ")


def test_line_editing_and_history_kept_in_ga_home(home, workspace):
    steps = [{"content": "one"}, {"content": "two"}]
    with ScriptedServer(steps) as server:
        chat([], server, home, workspace, ["wrld\x01hello "])  # Ctrl-A: to the start of the line
        again = chat([], server, home, workspace, [UP])  # the previous line, from the history
        tasks = [r["messages"][1]["content"] for r in server.requests]
    assert again.returncode == 0, again.text
    assert [t.splitlines()[-1] for t in tasks] == ["hello wrld", "hello wrld"]
    history = home / "chat_history"
    assert "hello wrld" in history.read_text() and stat.S_IMODE(history.stat().st_mode) == 0o600


def test_the_chat_history_keeps_no_pasted_secret(home, workspace):
    with ScriptedServer([{"content": "ok"}]) as server:
        pasted = "log in with password: hunter2hunter2, key sk-proj-ABCDEFGHIJKLMNOPQRST"
        run = chat([], server, home, workspace, [pasted])
    assert run.returncode == 0, run.text
    history = (home / "chat_history").read_text()
    assert "hunter2hunter2" not in history and "sk-proj" not in history
    assert "log in with password: [REDACTED], key [REDACTED]" in history


def test_programs_and_limits_last_per_message_and_the_chat_ends_them(home, workspace):
    start = "nohup sleep 300 > /dev/null 2>&1 & echo $! > pid.txt"
    steps = [{"tool_calls": [tool_call("code_run", script=start, type="bash")]}, {"content": "started"},
             {"tool_calls": [tool_call("code_run", script=ALIVE, type="bash")]},
             {"content": "still there"}]
    with ScriptedServer(steps) as server:
        run = chat(["--max-turns", "2", "--no-sandbox"], server, home, workspace, ["start a sleeper", "is it there?"])
        checked = [m for m in server.requests[3]["messages"] if m["role"] == "tool"][-1]["content"]
    assert run.returncode == 0, run.text
    assert "alive" in checked  # the background program outlived the first message
    assert "still there" in run.text and "turn limit" not in run.text  # two turns per message, four in the run
    pid = int((workspace / "pid.txt").read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # ended with the chat


def test_the_chat_learns_once_when_it_ends(home, workspace):
    writes = [tool_call("file_write", path=f"{n}.txt", content=n) for n in ("a", "b", "c")]
    steps = [{"tool_calls": writes}, {"content": "wrote three"}, {"content": "nothing more to do"}]
    with ScriptedServer(steps) as server:
        run = chat([], server, home, workspace, ["write three files", "anything else?"], GA_LEARN="")
        server.assert_complete()
    assert run.returncode == 0, run.text
    assert server.requests[2]["messages"][-1]["content"] == "The user adds: anything else?"
    assert len(server.requests) == 3  # learning asks the model nothing
    events = [json.loads(line) for line in next(home.glob("runs/*/trajectory.jsonl")).read_text().splitlines()]
    assert [e["type"] for e in events].count("memory") == 1  # once, when the chat ended


def test_continue_alone_opens_the_chat_over_the_last_run_again(home, workspace):
    with ScriptedServer([{"content": "First answer."}, {"content": "Second answer."}]) as server:
        chat([], server, home, workspace, ["first"])
        again = chat(["--continue"], server, home, workspace, ["and more"])
        last = server.requests[-1]["messages"]
    assert again.returncode == 0, again.text
    assert again.text.index("First answer.") < again.text.index(f"{PROMPT}and more") < again.text.index(
        "Second answer.")
    assert len(list((home / "runs").iterdir())) == 1 and last[-1]["content"] == "The user adds: and more"
    assert os.environ.get("GA_HOME") != str(home)  # the test's own home, never the user's
