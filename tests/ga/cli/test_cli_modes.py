"""Permission modes through the real CLI: plan mode looks with code and ends with how to carry the plan out;
--confirm approves a tool or every change for the rest of the run, and after an edit shows what ran."""

from __future__ import annotations

import re
import shlex
import sys

import pytest

from tests.ga.cli.test_cli import RUN_PY, ga, ga_env
from tests.scripted import ScriptedServer, tool_call
from tests.tty import run_on_tty
from tools.guard import sandbox_probe
from tools.process.execute import PLAN_NOTE

PROMPT = "[a]pprove / [r]eject / [e]dit > "


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def tty(args, server, home, cwd, answers=(), **extra):
    return run_on_tty([sys.executable, RUN_PY, *args], cwd=cwd, env=ga_env(server, home, **extra), answers=answers)


@pytest.mark.skipif(bool(sandbox_probe.problem()), reason="bubblewrap missing or not permitted here")
def test_plan_mode_looks_with_code_says_so_and_ends_with_how_to_carry_it_out(home, workspace):
    (workspace / "notes.txt").write_text("TODO: rename\n")
    steps = [{"tool_calls": [tool_call("code_run", script="ls && grep -n TODO notes.txt", type="bash")]},
             {"tool_calls": [tool_call("code_run", script="echo done > notes.txt", type="bash")]},
             {"content": "Plan: rename the thing in notes.txt."}]
    with ScriptedServer(steps) as server:
        planned = ga(["plan the rename", "--plan", "--no-sandbox"], server, home, workspace)
        results = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert planned.returncode == 0, planned.stderr
    header = "plan mode: code_run runs in the sandbox with the workspace read-only and no network; nothing is changed"
    assert header in planned.stderr.splitlines()[1]
    assert PLAN_NOTE in results[0] and "1:TODO: rename" in results[0]
    assert "Read-only file system" in results[1] and "hint: this is plan mode" in results[1]
    assert (workspace / "notes.txt").read_text() == "TODO: rename\n"
    hint = next(line for line in planned.stderr.splitlines() if line.startswith("carry it out with: "))
    assert hint.startswith("carry it out with: ") and 'run.py --continue --mode default "go ahead"' in hint
    command = shlex.split(hint.split("run.py ", 1)[1].split("  (")[0])
    with ScriptedServer([{"tool_calls": [tool_call("file_read", path="notes.txt")]},
                         {"tool_calls": [tool_call("file_write", path="notes.txt", content="renamed\n")]},
                         {"content": "Renamed."}]) as server:
        carried = ga(command, server, home, workspace)
        told = server.requests[0]["messages"][-1]["content"]
    assert carried.returncode == 0, carried.stderr
    assert (workspace / "notes.txt").read_text() == "renamed\n" and told == "The user adds: go ahead"
    assert "plan mode" not in carried.stderr


def test_plan_mode_where_the_sandbox_cannot_hold_says_code_run_is_refused(home, workspace, tmp_path):
    bin_dir = tmp_path / "bin"  # python and git, but no bwrap
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    steps = [{"tool_calls": [tool_call("code_run", script="ls", type="bash")]}, {"content": "Plan: nothing."}]
    with ScriptedServer(steps) as server:
        proc = ga(["plan", "--plan"], server, home, workspace, PATH=str(bin_dir))
        result = next(m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool")
    assert proc.returncode == 0, proc.stderr
    assert "plan mode: code_run is refused, since its sandbox cannot hold here (bubblewrap (bwrap) is not installed" \
        in proc.stderr
    assert result.startswith("Refused: the run is in plan mode") and "bubblewrap (bwrap) is not installed" in result


def test_confirm_approves_a_tool_or_every_change_for_the_rest_of_the_run(home, workspace):
    steps = [{"tool_calls": [tool_call("file_write", path="a.txt", content="a\n")]},
             {"tool_calls": [tool_call("file_write", path="b.txt", content="b\n")]},
             {"tool_calls": [tool_call("code_run", script="echo c > c.txt", type="bash")]},
             {"tool_calls": [tool_call("file_patch", path="a.txt", old_content="a", new_content="A")]},
             {"tool_calls": [tool_call("code_run", script="echo d > d.txt", type="bash")]},
             {"content": "all written"}]
    with ScriptedServer(steps) as server:
        run = tty(["write", "--confirm"], server, home, workspace, answers=[(PROMPT, "t"), (PROMPT, "l")])
    assert run.returncode == 0, run.text
    assert [line for line in run.screen if line.startswith("Approve ")] == ["Approve file_write (write)?",
                                                                            "Approve code_run (system_change)?"]
    assert "  or: [t] approve every file_write call of this run · [l] approve every change of this run" in run.screen
    assert "Approved, and every file_write call of this run from now on." in run.screen
    assert "Approved, and every change of this run from now on." in run.screen
    assert [p.read_text() for p in sorted(workspace.iterdir())] == ["A\n", "b\n", "c\n", "d\n"]


def test_after_an_edit_the_tool_line_shows_what_ran(home, workspace, tmp_path):
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\np = sys.argv[1]\ntext = open(p).read()\n"
                      "open(p, 'w').write(text.replace('one', 'two'))\n")
    steps = [{"tool_calls": [tool_call("code_run", script="echo one > out.txt", type="bash")]}, {"content": "ok"}]
    with ScriptedServer(steps) as server:
        run = tty(["write", "--confirm"], server, home, workspace, answers=[(PROMPT, "e"), (PROMPT, "a")],
                  EDITOR=f"{sys.executable} {editor}")
    assert run.returncode == 0, run.text
    assert (workspace / "out.txt").read_text() == "two\n"
    done = [line for line in run.screen if line.startswith("✓ code_run")]
    assert len(done) == 1 and re.fullmatch(r"✓ code_run script=echo two > out\.txt type=bash \(your edit\) "
                                           r"\d+\.\d\ds", done[0]), done
