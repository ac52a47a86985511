"""The command policy's edges: the folder a script runs in, `~user`, and text it must survive (any text gets a
decision; a character tree-sitter-bash trips on does not crash the process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.tools.code_runs import dispatch
from tools.guard.policy import ALLOW, ASK, REFUSE, check_script

HOME = Path("/home/alice")
WORKSPACE = HOME / "project"


def decide(script: str, kind: str = "bash", cwd: Path | None = None):
    return check_script(script, kind, workspace=WORKSPACE, home=HOME, cwd=cwd)


def test_cwd_is_taken_into_account():
    sub = WORKSPACE / "sub"
    assert decide("rm -rf ..", cwd=sub).verdict == REFUSE
    assert decide("rm -rf old", cwd=sub).verdict == ALLOW


def test_tilde_user_is_that_users_home():
    assert decide("rm -rf ~root").rule == ("rm-home" if os.path.expanduser("~root") == str(HOME) else "rm-root")
    assert decide("rm -rf ~no-such-user-ga/x").verdict == ALLOW  # an unknown user: a literal folder


@pytest.mark.skipif(os.path.expanduser("~daemon") in ("~daemon", "/"), reason="no daemon user")
def test_tilde_user_is_placed_in_that_users_home():
    decision = decide("rm -rf ~daemon/x")
    assert (decision.verdict, decision.rule) == (ASK, "delete-outside-workspace"), decision
    assert os.path.expanduser("~daemon/x") in decision.reason


_PIECES = ["rm", "-rf", "~", "/", "$HOME", "${X:-y}", "$(", ")", "`", "'", '"', "{", "}", "(", ";", "&&", "|", "&",
           "<<EOF\n", "\nEOF\n", "<<<", ">", "2>&1", "<(", ">(", "$((", "))", "[[", "]]", "case", "in", "esac", ";;",
           "for", "do", "done", "f()", "{a,b}", "{1..3}", "\\", "\n", "eval", "bash", "-c", "git", "sudo", "env",
           "command", "\"$@\"", "set", "--", "$'\\x72'", "cd", "..", "find", "-exec", "-delete", "curl", "sh", "dd",
           "of=/dev/sda", "mv", "cp", "sed", "-i", "crontab", "kill", "-1", "#", "*"]
"""Pieces of bash, glued or apart, for scripts a parser and a policy must survive."""


@settings(max_examples=300, deadline=None)
@example("rm ~\x00")
@example("cd")
@given(st.builds(str.join, st.sampled_from(["", " "]), st.lists(st.sampled_from(_PIECES), max_size=30)) |
       st.text(max_size=80))
def test_any_text_gets_a_decision_never_an_error(script):
    assert decide(script).verdict in (ALLOW, ASK, REFUSE)
    assert decide(f"import os\nos.remove({script!r})", "python").verdict in (ALLOW, ASK, REFUSE)
    assert decide(script, "python").verdict in (ALLOW, ASK, REFUSE)


def test_a_character_tree_sitter_bash_trips_on_does_not_crash_the_run():
    """tree-sitter-bash 0.25.1 reads past a table on `{` followed by a character above U+00FF and can kill the
    process (its issue 337; seen here about 2 runs in 3): the policy must parse such scripts safely."""
    code = ("from tools.guard.policy import parse\n"
            "for s in ['{\\U000d34c5', 'x{1..\\U000f0000}', 'echo {\\U00031860}']:\n"
            "    for _ in range(10000):\n"
            "        parse(s)\n")
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[3], capture_output=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-800:]
    assert decide("rm -rf {\U000d34c5,~} ~").rule == "rm-home"


def test_a_command_that_would_empty_the_file_it_reads_is_asked_and_unattended_the_file_kept(make_ctx):
    # `cat todo.txt | sed ... > todo.txt`: the shell empties todo.txt before cat reads it (a 1.5B model's append)
    ctx = make_ctx()
    (ctx.workspace / "todo.txt").write_text("buy milk\ncall the bank\n")
    for script, way in (("cat todo.txt | sed -i '$a DONE' > todo.txt", "sed -i edits a file in place, so run it "
                         "alone: sed -i '$a DONE' todo.txt"), ("sed -i.bak 's/a/b/' todo.txt > todo.txt", "alone: sed "
                         "-i.bak 's/a/b/' todo.txt (rule"), ("awk '{print}' ./todo.txt > todo.txt", "then mv it over"),
                        ("sort -u todo.txt > todo.txt && echo sorted", "then mv it over todo.txt")):
        result = dispatch(ctx, script=script, type="bash")
        assert result.is_error and "would empty todo.txt before reading it" in result.content, result.content
        assert "rule: clobber; needs approval" in result.content
        assert way in result.content and "sorted" not in result.content, result.content  # the way: computed for sed -i
        assert (ctx.workspace / "todo.txt").read_text() == "buy milk\ncall the bank\n"
    # a file an earlier line of the script makes is emptied the same way (`... > a.txt`, then `awk ... a.txt > a.txt`)
    script = "awk '{s+=$1} END {print s}' todo.txt > a.txt\nawk '{print}' a.txt > a.txt"
    made = dispatch(ctx, script=script, type="bash")
    assert "would empty a.txt before reading it" in made.content and not (ctx.workspace / "a.txt").exists()
    for fine in ("sort todo.txt > sorted.txt", "sed 's/milk/tea/' todo.txt >> todo.txt", "echo todo.txt > todo.txt",
                 "sort todo.txt > t.new && mv t.new todo.txt"):
        assert "would empty" not in dispatch(ctx, script=fine, type="bash").content, fine
