"""The terminal as a person sees it, through the real CLI: on a pseudo-terminal (read back with a terminal
emulator) and on pipes."""

from __future__ import annotations

import json
import re
import signal
import sys
from pathlib import Path

import pytest

from ga.cli.board import FRAMES
from ga.tooling.screen import ESCAPES
from tests.ga.cli.test_cli import RUN_PY, ga, ga_background, ga_env, only_run, wait_for
from tests.scripted import ScriptedServer, tool_call
from tests.tty import run_on_tty

SPINNER = re.compile(f"[{FRAMES}]")


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def tty(args, server, home, cwd, answers=(), **extra):
    return run_on_tty([sys.executable, RUN_PY, *args], cwd=cwd, env=ga_env(server, home, **extra), answers=answers)


def test_a_tool_line_comes_when_it_starts_with_a_spinner_and_its_output_below_it(home, workspace):
    script = "echo first; sleep 1.5; echo second"
    steps = [{"delay": 1.0, "tool_calls": [tool_call("code_run", script=script, type="bash")]}, {"content": "ok"}]
    with ScriptedServer(steps) as server:
        run = tty(["print two lines"], server, home, workspace)
    assert run.returncode == 0, run.text
    raw = ESCAPES.sub("", run.raw)  # the stream as written, colours and cursor moves left out
    assert "waiting for the model" in raw and SPINNER.search(raw)  # while the model thinks
    assert raw.index("code_run") < raw.index("first")  # the tool's line before its output, while it runs
    started = raw.index("code_run")
    assert re.search(f"[{FRAMES}] .*code_run.* · 1s", raw[started:])  # a spinner with the elapsed time
    lines = run.screen
    header = next(i for i, line in enumerate(lines) if line.startswith("▸ code_run script=echo first"))
    assert lines[header + 1: header + 3] == ["first", "second"]
    assert re.fullmatch(r"✓ code_run \d+\.\d\ds", lines[header + 3])
    assert not any(SPINNER.search(line) for line in lines)  # spinners are erased once done


def test_the_final_answer_is_shown_once(home, workspace):
    answer = "The answer is 42, as streamed."
    steps = [{"content": "Looking.", "tool_calls": [tool_call("file_read", path=".")]}, {"content": answer}]
    with ScriptedServer(steps) as server:
        run = tty(["what is it"], server, home, workspace)
    assert run.returncode == 0
    assert run.text.count("The answer is 42") == 1 and run.text.count("Looking.") == 1
    with ScriptedServer(steps) as server:
        piped = ga(["what is it"], server, home, workspace)
    assert piped.stdout == answer + "\n" and "The answer is 42" not in piped.stderr
    assert "Looking." in piped.stderr


def test_a_plain_answer_is_written_as_it_is_and_a_markdown_one_rendered(home, workspace):
    steps = [{"content": "First line\nsecond line, kept apart"}, {"content": "It is **bold** and `code`:\n\n- one"}]
    with ScriptedServer(steps) as server:
        plain = tty(["say it plainly"], server, home, workspace)
        rendered = tty(["say it in Markdown"], server, home, workspace)
    assert plain.returncode == rendered.returncode == 0
    assert "First line\nsecond line, kept apart" in plain.text  # Markdown would have joined the two lines
    assert "It is bold and code:" in rendered.text and "**" not in rendered.text and "• one" in rendered.text


def test_what_the_model_and_tools_say_cannot_drive_the_terminal(home, workspace):
    hostile = ("Title\x1b]0;PWNED\x07 clip\x1b]52;c;cm0gLXJmIH4=\x07 clear\x1b[2J\x1b[H hidden\x1b[8m secret\x1b[0m "
               "[bold red]markup[/] :smile: bidi\u202eevil")
    steps = [{"content": hostile, "tool_calls": [{"name": "oops[/]", "arguments": {"a": "[red]x\x1b[2J"}},
                                                 tool_call("file_write", path="[b]x.txt", content="\x1b]0;T\x07")]},
             {"content": f"Final {hostile}"}]
    with ScriptedServer(steps) as server:
        run = tty(["be hostile"], server, home, workspace)
    assert run.returncode == 0, run.text
    assert run.title == "" and "\x1b]0;" not in run.raw and "\x1b]52" not in run.raw
    assert "\x1b[2J" not in run.raw and "\x1b[8m" not in run.raw and "\u202e" not in run.raw
    text = run.text
    assert "✗ oops[/] a=[red]x" in text and "[bold red]markup[/] :smile:" in text and "secret" in text
    assert "✓ file_write path=[b]x.txt" in text and "Traceback" not in text
    with ScriptedServer(steps) as server:
        piped = ga(["be hostile"], server, home, workspace)
    assert piped.returncode == 0 and "\x1b" not in piped.stderr and "oops[/]" in piped.stderr


def test_stderr_that_is_not_a_terminal_gets_plain_lines_only(home, workspace):
    steps = [{"delay": 0.5, "content": "Running it.",
              "tool_calls": [tool_call("code_run", script="echo out; sleep 0.5", type="bash")]},
             {"content": "done"}]
    with ScriptedServer(steps) as server:
        proc = ga(["run it", "--json"], server, home, workspace)
    assert proc.returncode == 0 and json.loads(proc.stdout)["answer"] == "done"
    err = proc.stderr
    assert not SPINNER.search(err) and "\x1b" not in err and "\r" not in err
    lines = err.splitlines()
    start = lines.index("→ code_run script=echo out; sleep 0.5 type=bash")
    assert lines[start - 2:start] == ["Running it.", lines[start - 1]] and lines[start - 1].startswith("· turn 1")
    assert lines[start + 1] == "out" and re.fullmatch(r"✓ code_run script=echo out; sleep 0.5 type=bash \S+s",
                                                      lines[start + 2])


def test_an_ordinary_failure_and_the_users_ctrl_c_are_not_escalations(home, workspace):
    steps = [{"tool_calls": [tool_call("code_run", script="ls missing", type="bash")]},
             {"tool_calls": [tool_call("code_run", script="sleep 30", type="bash")]}, {"content": "never"}]
    with ScriptedServer(steps) as server:
        proc = ga_background(["list"], server, home, workspace)
        wait_for(lambda: len(server.requests) == 2)
        wait_for(lambda: "call_2_0" in (only_run(home) / "trajectory.jsonl").read_text())
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "✗ code_run script=ls missing" in err and "escalation" not in err and "stage 1" not in err
    state = json.loads((only_run(home) / "state.json").read_text())["escalation"]
    # ls's exit 2 is information (a failure only if the same command says the same again); the user's Ctrl-C of
    # the sleep is no failure of the approach at all
    assert state["failures"] == 0 and len(state["exits"]) == 1


def test_version_and_help(home, workspace):
    version = ga(["--version"], None, home, workspace)
    project = re.search(r'^version = "(.+)"$', (Path(RUN_PY).parent / "pyproject.toml").read_text(), re.M)[1]
    assert version.returncode == 0 and version.stdout == f"ga {project}\n"
    help_text = ga(["--help"], None, home, workspace).stdout
    assert re.search(r"^  130 +interrupted", help_text, re.M) and re.search(r"^  3 +paused", help_text, re.M)


PROMPT = "[a]pprove / [r]eject / [e]dit > "


def test_confirm_shows_a_diff_and_a_rejection_reason_reaches_the_model(home, workspace):
    (workspace / "notes.md").write_text("old header\nbody\n")
    steps = [{"tool_calls": [tool_call("file_read", path="notes.md")]},
             {"tool_calls": [tool_call("file_write", path="notes.md", content="new header\nbody\n")]},
             {"content": "left it"}]
    with ScriptedServer(steps) as server:
        run = tty(["retitle", "--confirm"], server, home, workspace,
                  answers=[(PROMPT, "r"), ("reason, for the model (Enter: none) > ", "keep the old header")])
        rejected = [m for m in server.requests[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert run.returncode == 0, run.text
    lines = run.screen
    at = lines.index("Approve file_write (write)?")
    assert lines[at + 1: at + 6] == ["--- a/notes.md", "+++ b/notes.md", "@@ -1,2 +1,2 @@", "-old header",
                                     "+new header"]
    assert "\\n" not in run.text and '"content"' not in run.text  # a diff, not JSON
    assert "rejected" in rejected and "Their reason: keep the old header" in rejected
    assert (workspace / "notes.md").read_text() == "old header\nbody\n"


def test_confirm_edit_opens_the_editor_and_the_edited_version_is_approved_again(home, workspace, tmp_path):
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\np = sys.argv[1]\ntext = open(p).read()\n"
                      "open(p, 'w').write(text.replace('print(1)', 'print(2)'))\n")
    script = "import os\nprint(1)\n"
    steps = [{"tool_calls": [tool_call("code_run", script=script)]}, {"content": "ran"}]
    with ScriptedServer(steps) as server:
        run = tty(["run it", "--confirm"], server, home, workspace, answers=[(PROMPT, "e"), (PROMPT, "a")],
                  EDITOR=f"{sys.executable} {editor}")
        result = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert run.returncode == 0, run.text
    first = run.screen.index("Approve code_run (system_change)?")
    assert run.screen[first + 1: first + 3] == ["import os", "print(1)"]  # the command as written
    second = run.screen.index("Approve code_run (system_change)?", first + 1)
    assert run.screen[second + 1: second + 3] == ["import os", "print(2)"]
    assert result.startswith("[The user edited this call before approving it (script changed)")
    assert "\n2\n" in result + "\n"


def test_confirm_edit_without_an_editor_takes_the_typed_text(home, workspace):
    steps = [{"tool_calls": [tool_call("file_write", path="hello.txt", content="helo wrld\n")]}, {"content": "ok"}]
    with ScriptedServer(steps) as server:
        run = tty(["greet", "--confirm"], server, home, workspace,
                  answers=[(PROMPT, "e"), ("(or Ctrl-D)", "hello world"), ("", "."), (PROMPT, "a")],
                  EDITOR="", VISUAL="")
    assert run.returncode == 0, run.text
    assert (workspace / "hello.txt").read_text() == "hello world\n"
    assert "+helo wrld" in run.text and "+hello world" in run.text  # first the model's version, then the edit
