"""Input piped to ga, through the real run.py: context for the task (capped, the rest saved in the run folder), the
task itself (`ga -`, or a pipe with no task), and a header that says how the pipe changed the run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.ga.cli.test_cli import RUN_PY, ga_env, only_run
from tests.scripted import ScriptedServer, tool_call
from tests.tty import run_on_tty


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def piped(args: list[str], text: str, server, home, cwd, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, RUN_PY, *args], cwd=cwd, env=ga_env(server, home, **extra), input=text,
                          capture_output=True, text=True, timeout=60, check=False)


def task_sent(server: ScriptedServer) -> str:
    users = [m for m in server.requests[0]["messages"] if m["role"] == "user"]
    text = users[0]["content"] if isinstance(users[0]["content"], str) else users[0]["content"][0]["text"]
    assert text.startswith("Workspace ")
    return text.split("\n\n", 1)[1]  # after the line that names the workspace


LOG = "".join(f"12:00:{i:02d} INFO request {i} ok\n" for i in range(20)) + "12:00:20 ERROR disk full on /var\n"


def test_piped_text_goes_to_the_model_with_the_task(home, workspace):
    with ScriptedServer([{"content": "The disk is full."}]) as server:
        proc = piped(["explain this error"], LOG, server, home, workspace)
        sent = task_sent(server)
    assert proc.returncode == 0, proc.stderr
    assert sent.startswith("explain this error\n\n[Input piped to ga (21 lines):]\n```\n12:00:00 INFO")
    assert "ERROR disk full on /var\n```" in sent
    assert "The disk is full." in proc.stdout
    assert "autonomous (stdin is a pipe)" in proc.stderr  # a pipe no longer changes the mode silently
    assert "sandbox on" in proc.stderr or "sandbox off" in proc.stderr


def test_a_long_input_is_capped_and_the_whole_saved_in_the_run_folder(home, workspace):
    text = "".join(f"line {i} of the log\n" for i in range(1, 3001)) + "FATAL: the end\n"
    with ScriptedServer([{"content": "seen"}]) as server:
        proc = piped(["what failed?"], text, server, home, workspace, GA_CONTEXT_TOKENS="4000")
        sent = task_sent(server)
    assert proc.returncode == 0, proc.stderr
    saved = only_run(home) / "stdin.txt"
    assert saved.read_text() == text  # all of it, for file_read
    assert f"all of it is in {saved}" in sent and "3,001 lines" in sent
    assert "line 1 of the log\n" in sent and "FATAL: the end" in sent  # the start, and the end where errors are
    assert "line 1500 of the log" not in sent and "left out" in sent
    assert len(sent) < 4000 + 600  # the cap (a quarter of the budget) plus the note


def test_dash_reads_the_task_itself_from_stdin(home, workspace):
    with ScriptedServer([{"content": "hi"}]) as server:
        proc = piped(["-"], "say hi\n", server, home, workspace)
        sent = task_sent(server)
    assert proc.returncode == 0, proc.stderr
    assert sent == "say hi"
    assert json.loads((only_run(home) / "state.json").read_text())["task"] == "say hi"


def test_a_pipe_without_a_task_is_the_task(home, workspace):
    with ScriptedServer([{"content": "hi"}]) as server:
        proc = piped([], "say hi", server, home, workspace)
        sent = task_sent(server)
    assert proc.returncode == 0, proc.stderr
    assert sent == "say hi"


def test_an_empty_task_on_stdin_is_refused(home, workspace):
    proc = piped(["-"], "  \n", None, home, workspace)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "ga: The task read from stdin is empty."


def test_dash_on_a_terminal_reads_what_is_typed(home, workspace):
    with ScriptedServer([{"content": "typed and read"}]) as server:
        run = run_on_tty([sys.executable, RUN_PY, "-"], cwd=workspace, env=ga_env(server, home),
                         answers=[("then Ctrl-D", "say hi\n\x04")])
        sent = task_sent(server)
    assert run.returncode == 0, run.text
    assert sent == "say hi"
    assert "typed and read" in run.text
    assert "autonomous" not in run.text and "sandbox on (the default" in run.text  # typed: not autonomous


def test_a_detached_run_gets_the_piped_text(home, workspace):
    with ScriptedServer([{"content": "read it"}]) as server:
        proc = piped(["explain", "--detach", "--no-sandbox"], LOG, server, home, workspace)
        run_id = proc.stdout.strip()
        waited = subprocess.run([sys.executable, RUN_PY, "tail", run_id], env=ga_env(server, home), cwd=workspace,
                                capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False)
        sent = task_sent(server)
    assert proc.returncode == 0 and waited.returncode == 0, proc.stderr + waited.stderr
    assert "ERROR disk full on /var" in sent


def test_an_answer_can_come_on_stdin(home, workspace):
    ask = {"tool_calls": [tool_call("ask_user", question="Which file?", candidates=["a.txt", "b.txt"])]}
    with ScriptedServer([ask, {"content": "ok"}]) as server:
        paused = piped(["pick a file"], "", server, home, workspace)
        run_id = only_run(home).name
        resumed = piped(["--resume", run_id, "--answer", "-"], "b.txt, the newer one\n", server, home, workspace)
        answered = server.requests[1]["messages"][-1]["content"]
    assert paused.returncode == 3 and resumed.returncode == 0, paused.stderr + resumed.stderr
    assert "b.txt, the newer one" in json.dumps(answered)


def test_an_endless_pipe_is_read_up_to_a_cap_in_bounded_memory(home, workspace):
    """`yes | ga "..."` read 4.8 GiB into memory in 15 s: now LIMIT bytes at most, and the model and the user are
    told the input was cut. (The address-space limit keeps a regression from taking the machine down: it fails with
    a MemoryError instead.)"""
    import resource

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    with ScriptedServer([{"content": "it says y"}]) as server:
        yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
        try:
            proc = subprocess.run([sys.executable, RUN_PY, "what is this?"], cwd=workspace, stdin=yes.stdout,
                                  env=ga_env(server, home), capture_output=True, text=True, timeout=120,
                                  preexec_fn=limited, check=False)
        finally:
            yes.kill()
            yes.wait()
        sent = task_sent(server) if server.requests else ""
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "cut at 16 MiB" in sent and "y\ny\n" in sent
    assert "longer than 16 MiB: only its first 16 MiB are read" in proc.stderr  # said on the user's screen too
    saved = only_run(home) / "stdin.txt"
    assert saved.stat().st_size == 16 << 20 and f"all of what was read is in {saved}" in sent


def test_a_detached_run_gets_a_long_input_whole(home, workspace):
    text = "".join(f"line {i:07d} of a long log\n" for i in range(400_000)) + "FATAL: at the very end\n"  # ~10 MiB
    with ScriptedServer([{"content": "read it"}]) as server:
        proc = piped(["explain", "--detach", "--no-sandbox"], text, server, home, workspace)
        waited = subprocess.run([sys.executable, RUN_PY, "tail", proc.stdout.strip()], env=ga_env(server, home),
                                cwd=workspace, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                                check=False)
        sent = task_sent(server)
    assert proc.returncode == 0 and waited.returncode == 0, proc.stderr + waited.stderr
    assert "FATAL: at the very end" in sent and "400,001 lines" in sent and "cut" not in sent
    assert (only_run(home) / "stdin.txt").read_text() == text


def test_runs_and_runs_show_name_the_user_s_task_and_the_piped_input_s_size(home, workspace):
    text = "".join(f"line {i} of a log\n" for i in range(3000))
    with ScriptedServer([{"content": "read it"}]) as server:
        assert piped(["explain this log"], text, server, home, workspace).returncode == 0
    shown = subprocess.run([sys.executable, RUN_PY, "runs", "show", only_run(home).name], env=ga_env(None, home),
                           cwd=workspace, capture_output=True, text=True, timeout=60, check=False).stdout
    task_line = next(line for line in shown.splitlines() if line.startswith("task"))
    assert task_line == f"task      explain this log [with {len(text.encode()):,} bytes piped]"
    wide = {**ga_env(None, home), "COLUMNS": "120"}  # the list cuts the task to the terminal's width
    listed = subprocess.run([sys.executable, RUN_PY, "runs"], env=wide, cwd=workspace, capture_output=True, text=True,
                            timeout=60, check=False).stdout
    assert "explain this log [with" in listed and "line 1 of a log" not in listed
