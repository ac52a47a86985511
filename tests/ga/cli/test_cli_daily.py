"""Daily use through the real run.py: a URL that is no API, piped input, ordinary moments without tracebacks, words
for the user, -q and -v."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.ga.cli.test_cli import RUN_PY, ga, ga_env, only_run, wait_for
from tests.scripted import ScriptedServer, tool_call
from tests.tty import run_on_tty


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_web_server_url_fails_in_one_try_naming_what_answered(home, workspace, tmp_path):
    port = _free_port()
    web = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while socket.socket().connect_ex(("127.0.0.1", port)) and time.monotonic() < deadline:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/v1"
        proc = ga(["Hello"], None, home, workspace, OPENAI_BASE_URL=url, OPENAI_API_KEY="k", GA_MODEL="m",
                  GA_RETRY_BASE="1")
    finally:
        web.terminate()
        log = web.communicate(timeout=10)[1]
    assert proc.returncode == 1, proc.stderr
    assert f"ga: {url} is not an OpenAI-compatible API (it answered 501 text/html" in proc.stderr
    assert "<" not in proc.stderr and "retrying" not in proc.stderr and "Traceback" not in proc.stderr
    assert log.count('"POST /v1/chat/completions') == 1  # one try
    assert not (home / "runs").exists() or not list((home / "runs").iterdir())  # nothing started: no run kept


def tty(args, server, home, cwd, answers=(), **extra):
    return run_on_tty([sys.executable, RUN_PY, *args], cwd=cwd, env=ga_env(server, home, **extra), answers=answers)


ASK = {"tool_calls": [tool_call("ask_user", question="Which file?", candidates=["a.txt", "b.txt"])]}


def test_ctrl_d_at_a_question_pauses_the_run_and_it_resumes(home, workspace):
    steps = [ASK, {"tool_calls": [tool_call("file_write", path="b.txt", content="chosen")]}, {"content": "wrote it"}]
    with ScriptedServer(steps) as server:
        run = tty(["pick a file"], server, home, workspace, answers=[("answer] > ", "\x04")])
        run_id = only_run(home).name
        resumed = ga(["--resume", run_id, "--answer", "2"], server, home, workspace)
        server.assert_complete()
    assert run.returncode == 3, run.text
    assert "Traceback" not in run.text and "EOFError" not in run.text
    assert f'run.py answer {run_id} "..."' in run.text and "answer with: " in run.text
    assert json.loads((only_run(home) / "state.json").read_text())["status"] == "done"
    assert resumed.returncode == 0 and (workspace / "b.txt").read_text() == "chosen"


def test_ctrl_c_on_tail_stops_following_not_the_run(home, workspace):
    steps = [{"tool_calls": [tool_call("code_run", script="sleep 60", type="bash")]}, {"content": "done"}]
    with ScriptedServer(steps) as server:
        started = ga(["wait", "--detach", "--no-sandbox"], server, home, workspace)
        run_id = started.stdout.strip()
        follower = subprocess.Popen([sys.executable, RUN_PY, "tail", run_id], env=ga_env(server, home),
                                    cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
        wait_for(lambda: "sleep 60" in (only_run(home) / "output.log").read_text())
        time.sleep(0.5)  # tail has printed it too
        os.killpg(follower.pid, signal.SIGINT)  # what Ctrl-C on its terminal sends
        _, err = follower.communicate(timeout=30)
        state = json.loads((only_run(home) / "state.json").read_text())
        ga(["stop", run_id, "--now", "--wait"], server, home, workspace)
    assert follower.returncode == 130 and "Traceback" not in err and "KeyboardInterrupt" not in err
    assert f"stopped following run {run_id}; it goes on" in err
    assert state["status"] == "running"


def test_headed_without_a_display_is_refused_before_anything_starts(home, workspace):
    with ScriptedServer([]) as server:
        proc = ga(["look at example.com", "--headed"], server, home, workspace, DISPLAY="", WAYLAND_DISPLAY="")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--headed shows the browser in a window, and there is no display here" in proc.stderr
    assert not (home / "runs").exists()


def _closed_pipe() -> int:
    """A pipe whose reader is already gone, as `| head -1` leaves it once head has its line."""
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("both", [False, True])
def test_a_closed_stdout_ends_quietly_and_the_run_is_whole(home, workspace, both):
    answer = "\n".join(f"line {i}" for i in range(5000))
    with ScriptedServer([{"content": answer}]) as server:
        write = _closed_pipe()
        proc = subprocess.run([sys.executable, RUN_PY, "list lines"], check=False, env=ga_env(server, home),
                              cwd=workspace, stdin=subprocess.DEVNULL, stdout=write,
                              stderr=write if both else subprocess.PIPE, timeout=60)
        os.close(write)
    assert proc.returncode == 0 and b"Traceback" not in (proc.stderr or b"") and b"Error" not in (proc.stderr or b"")
    folder = only_run(home)
    assert json.loads((folder / "state.json").read_text())["status"] == "done"
    assert json.loads((folder / "outbox" / "result.json").read_text())["status"] == "done"


def test_a_closed_stdout_on_a_listing_ends_quietly(home, workspace):
    with ScriptedServer([{"content": "a"}, {"content": "b"}]) as server:
        for _ in range(2):
            ga(["say"], server, home, workspace)
        write = _closed_pipe()
        proc = subprocess.run([sys.executable, RUN_PY, "runs"], check=False, env=ga_env(server, home), cwd=workspace,
                              stdout=write, stderr=subprocess.PIPE, timeout=60)
        os.close(write)
    assert proc.returncode == 141 and proc.stderr == b""


# words for the user, not for the model


def test_hello_says_nothing_about_memory(home, workspace):
    with ScriptedServer([{"content": "Hi! How can I help?"}]) as server:
        proc = ga(["Hello"], server, home, workspace, GA_LEARN="")  # learning on, as users get it
    assert proc.returncode == 0 and proc.stdout == "Hi! How can I help?\n"
    assert "memory" not in proc.stderr and "distil" not in proc.stderr, proc.stderr


def test_a_rejection_shows_the_users_reason_not_the_models_instructions(home, workspace):
    steps = [{"tool_calls": [tool_call("file_write", path="a.txt", content="x")]}, {"content": "left it"}]
    with ScriptedServer(steps) as server:
        run = tty(["write a", "--confirm"], server, home, workspace,
                  answers=[("[a]pprove / [r]eject / [e]dit > ", "r use the staging file")])
        told = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert run.returncode == 0, run.text
    assert "  rejected: use the staging file" in run.screen
    assert "Take that into account" not in run.text and "Take that into account" in told


def test_unusable_replies_are_told_in_words_for_the_user(home, workspace):
    with ScriptedServer([{"content": ""}] * 3) as server:
        proc = ga(["x"], server, home, workspace)
    assert proc.returncode == 1
    assert "3 unusable replies in a row (the last: an empty reply)" in proc.stderr
    assert "your reply" not in proc.stderr.lower()


def test_a_limit_gives_one_resume_hint(home, workspace):
    with ScriptedServer([{"tool_calls": [tool_call("file_read", path=".")]}]) as server:
        proc = ga(["look", "--max-turns", "1"], server, home, workspace)
    run_id = only_run(home).name
    assert proc.returncode == 4 and proc.stderr.count(f"--resume {run_id}") == 1, proc.stderr


def test_ctrl_c_is_said_once_with_one_resume_hint(home, workspace):
    with ScriptedServer([{"delay": 30, "content": "lost"}]) as server:
        proc = subprocess.Popen([sys.executable, RUN_PY, "slow"], env=ga_env(server, home), cwd=workspace,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: len(server.requests) == 1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    run_id = only_run(home).name
    assert proc.returncode == 130
    assert "! Interrupted (Ctrl-C or SIGTERM); the run is saved." in err and "interrupted: Interrupted" not in err
    assert err.count(f"--resume {run_id}") == 1


# -q and -v

FAILING_THEN_DONE = [{"fault": "500"}, {"content": "Reading.", "tool_calls": [tool_call("code_run", script="echo hi",
                                                                                         type="bash")]},
                     {"content": "All done."}]


def test_quiet_prints_the_answer_only(home, workspace):
    with ScriptedServer(FAILING_THEN_DONE) as server:
        proc = ga(["say hi", "-q", "--no-sandbox"], server, home, workspace)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "All done.\n", "")
    with ScriptedServer(FAILING_THEN_DONE) as server:
        run = tty(["say hi", "-q", "--no-sandbox"], server, home, workspace)
    assert run.returncode == 0 and run.screen == ["All done."]


def test_quiet_still_tells_how_a_run_failed(home, workspace):
    with ScriptedServer([{"tool_calls": [tool_call("file_read", path=".")]}]) as server:
        proc = ga(["look", "-q", "--max-turns", "1"], server, home, workspace)
    assert proc.returncode == 4 and proc.stdout == ""
    assert proc.stderr.startswith("! limit: Reached the turn limit (1).") and proc.stderr.count("\n") == 1


def test_verbose_shows_gas_decisions_not_the_http_library(home, workspace):
    steps = [{"tool_calls": [tool_call("file_read", path="missing.txt")]},
             {"tool_calls": [tool_call("file_write", path="/etc/ga-test", content="x")]},
             {"content": "gave up"}]
    with ScriptedServer(steps) as server:
        proc = ga(["read the notes", "-v"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "· memory.index: no SOP listed for this task" in err
    assert "· cli.terminal: escalation stage 0 → 1: " in err  # a first failure: said with -v only
    assert "· tooling.dispatch: file_write refused: " in err
    for noise in ("httpx", "httpcore", "openai._base_client", "HTTP Request", "DEBUG"):
        assert noise not in err, noise
    with ScriptedServer(steps) as server:
        plain = ga(["read the notes"], server, home, workspace)
    assert not any(line.startswith("· ") and not line.startswith("· turn") for line in plain.stderr.splitlines())
