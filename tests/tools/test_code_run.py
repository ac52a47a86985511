"""code_run with real processes: execution, exit codes, output, workspace, environment, permission modes.

Its machinery is tested beside it: tools/process (time, trees, big output, hints), tools/guard (sandbox, policy).
"""

from __future__ import annotations

from tests.tools.code_runs import dispatch, run
from tools.code_run import SPEC

# --- execution, exit codes, output ---------------------------------------------------------------

def test_python_and_bash_run_in_the_workspace(make_ctx, workspace):
    ctx = make_ctx()
    result = run(ctx, "import os; print(os.getcwd())")
    assert str(workspace) in result.content and "[exit code 0" in result.content and not result.is_error
    assert str(workspace) in run(ctx, "pwd", type="bash").content


def test_exit_codes_are_reported(make_ctx):
    ctx = make_ctx()
    assert "[exit code 3" in run(ctx, "import sys; sys.exit(3)").content
    result = run(ctx, "echo before; exit 7", type="bash")
    assert "[exit code 7" in result.content and "before" in result.content and result.is_error
    assert result.details["exit_code"] == 7


def test_a_shell_command_sent_as_python_fails_with_a_hint_and_runs_as_bash_for_a_small_model(make_ctx):
    ctx = make_ctx()
    sent = dispatch(ctx, script="python3 -m unittest --help | head -1", type="python")  # a 1.5B model's call
    assert sent.is_error and 'the script is a shell command, not Python: send it again with type="bash"' in sent.content
    sent = dispatch(ctx, repairs=True, script="python3 -m unittest --help | head -1", type="python")
    assert "[exit code 0" in sent.content and "usage: python3 -m unittest" in sent.content
    assert sent.content.startswith("[Ran with type='bash' (was 'python'): the script is a shell command")
    assert "[exit code 0" in dispatch(ctx, repairs=True, script="cd . && echo here").content  # type left out
    for slip in ("print(1", "import os\nprint(os.getcwd("):  # Python with a slip stays Python (not ImageMagick)
        broken = dispatch(ctx, repairs=True, script=slip, type="python")
        assert "SyntaxError" in broken.content and broken.is_error and "shell command" not in broken.content


def test_no_output_is_said(make_ctx):
    assert "(no output)" in run(make_ctx(), "x = 1").content


def test_stdin_is_closed(make_ctx):
    result = run(make_ctx(), "import sys; print(repr(sys.stdin.read()))", timeout=5)
    assert "''" in result.content and not result.details["killed"]


def test_stdout_and_stderr_are_merged_in_order(make_ctx):
    script = "import sys\nfor i in range(3):\n    print('out', i)\n    print('err', i, file=sys.stderr)"
    body = run(make_ctx(), script).content.splitlines()[1:]
    assert body == ["out 0", "err 0", "out 1", "err 1", "out 2", "err 2"]


def test_output_is_streamed_live(make_ctx):
    ctx = make_ctx()
    run(ctx, "print('live line')")
    assert "live line" in "".join(ctx.ui.live_output)


def test_invalid_utf8_and_terminal_noise_are_neutralised(make_ctx):
    script = r"import sys; sys.stdout.buffer.write(b'ok \xff\xfe bad\n\x1b[31mred\x1b[0m\a\x00 bell\r\nend\n')"
    content = run(make_ctx(), script).content
    assert "ok \ufffd\ufffd bad" in content and "red\ufffd\ufffd bell\nend" in content
    assert "\x1b" not in content and "\x00" not in content


def test_python_tracebacks_carry_line_numbers(make_ctx):
    content = run(make_ctx(), "x = 1\ny = 2\nraise ValueError('boom')").content
    assert "line 3" in content and "ValueError: boom" in content


def test_workspace_modules_are_importable(make_ctx, workspace):
    (workspace / "helper.py").write_text("VALUE = 42\n")
    assert "42" in run(make_ctx(), "import helper; print(helper.VALUE)").content


def test_cwd_is_confined_to_the_workspace(make_ctx, workspace):
    (workspace / "sub").mkdir()
    ctx = make_ctx()
    assert str(workspace / "sub") in dispatch(ctx, script="pwd", type="bash", cwd="sub").content
    result = dispatch(ctx, script="pwd", type="bash", cwd="..")
    assert result.is_error and "workspace-confinement" in result.content
    assert result.content.startswith(f"cwd '..' is not in the workspace: leave cwd out to run in the workspace "
                                     f"{workspace}")
    # the workspace's absolute path with its last folder dropped: refused, naming the folder inside
    result = dispatch(ctx, script="pwd", type="bash", cwd=str(workspace.parent / "sub"))
    assert result.is_error and "The workspace has sub: if you meant it, pass path='sub'" in result.content


def test_children_get_an_allow_list_not_a_filtered_copy(make_ctx, monkeypatch):
    secrets = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
               "DATABASE_URL", "SMTP_PASS", "GH_PAT", "MYAPIKEY", "SENTRY_DSN", "SLACK_WEBHOOK_URL", "KEEP_ME"]
    for name in secrets:
        monkeypatch.setenv(name, "s3cr3t")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    content = run(make_ctx(), "import os; print(sorted(os.environ))").content
    assert "s3cr3t" not in content
    assert not [name for name in secrets if f"'{name}'" in content]
    assert "'TOKENIZERS_PARALLELISM'" in content and "'LC_ALL'" in content and "'PATH'" in content


def test_ga_pass_env_names_what_children_get(make_ctx, monkeypatch):
    monkeypatch.setenv("KEEP_ME", "visible")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("SMTP_PASS", "s3cr3t")
    monkeypatch.setenv("GA_PASS_ENV", "KEEP_ME, AWS_*")
    content = run(make_ctx(), "import os; print(sorted(os.environ))").content
    assert "'KEEP_ME'" in content and "'AWS_REGION'" in content and "'SMTP_PASS'" not in content


# --- permission modes ----------------------------------------------------------

def test_plan_mode_never_lets_code_run_change_the_workspace(make_ctx, workspace):
    result = dispatch(make_ctx(mode="plan"), script="open('ran', 'w')")  # refused, or read-only in the sandbox
    assert result.is_error and "plan mode" in result.content  # (tests/tools/guard/test_plan_mode.py: both ways)
    assert not (workspace / "ran").exists()


def test_confirm_mode_asks_and_honours_reject_and_edit(make_ctx, workspace):
    ctx = make_ctx(mode="confirm", interactive=True, answers=[("reject", "")])
    result = dispatch(ctx, script="open('ran', 'w')")
    assert result.is_error and "rejected" in result.content and not (workspace / "ran").exists()
    ctx = make_ctx(mode="confirm", interactive=True, answers=[("edit", "open('edited', 'w')"), ("approve", "")])
    result = dispatch(ctx, script="open('ran', 'w')")
    assert not result.is_error and (workspace / "edited").exists() and not (workspace / "ran").exists()
    assert [a[2] for a in ctx.ui.asked] == ["open('ran', 'w')", "open('edited', 'w')"]  # the script as written
    ctx = make_ctx(mode="confirm", interactive=True, answers=[("edit", "rm -rf ~"), ("approve", "")])
    assert "rule: rm-home" in dispatch(ctx, script="echo hi", type="bash").content  # an edit is checked again


def test_schema_states_the_timeout_maximum():
    timeout = SPEC.parameters["properties"]["timeout"]
    assert timeout["maximum"] == 600 and timeout["default"] == 60
    assert SPEC.schema()["function"]["parameters"]["properties"]["timeout"]["maximum"] == 600
    assert "full output" in SPEC.description


def test_a_silent_command_says_what_it_wrote_and_a_talking_one_does_not(make_ctx, workspace):
    (workspace / "users.csv").write_text("name,email,role\nann,ann@ex.org,admin\nben,ben@ex.org,user\n")
    ctx = make_ctx()
    silent = run(ctx, "cut -d, -f3 users.csv > emails.txt", type="bash")
    assert "(no output)" in silent.content and "files it wrote" in silent.content
    assert "- emails.txt (3 lines): role | admin | user" in silent.content
    assert "users.csv" not in silent.content.split("files it wrote")[1]  # read, not written
    talking = run(ctx, "cut -d, -f2 users.csv | tee emails.txt", type="bash")
    assert "ann@ex.org" in talking.content and "files it wrote" not in talking.content
    assert "files it wrote" not in run(ctx, "x = 1").content


def test_a_script_that_worked_is_not_run_again_over_an_unchanged_workspace(make_ctx, workspace):
    """A small model repeating `echo DONE >> todo.txt` after it worked appended DONE fifteen times."""
    ctx = make_ctx()
    (workspace / "todo.txt").write_text("buy milk\n")
    script = "echo DONE >> todo.txt"
    first = run(ctx, script, type="bash")
    assert not first.is_error and "todo.txt" in first.content
    again = run(ctx, script, type="bash")
    assert "not run: this exact script already ran successfully" in again.content and "todo.txt" in again.content
    assert (workspace / "todo.txt").read_text() == "buy milk\nDONE\n"
    (workspace / "todo.txt").write_text("new list\n")  # the workspace changed: the same script runs again
    assert "not run" not in run(ctx, script, type="bash").content
    assert (workspace / "todo.txt").read_text() == "new list\nDONE\n"
    printing = "cat todo.txt"  # a script that writes nothing is never held back
    assert all("new list" in run(ctx, printing, type="bash").content for _ in range(2))
    failing = "for f in a b; do cat $f.json >> names.txt; done; echo listed"  # cat fails; the echo exits 0
    assert all("No such file or directory" in run(ctx, failing, type="bash").content for _ in range(2))
    assert "listed" in run(ctx, failing, type="bash").content  # it printed errors: no success to hold back
    typed = "printf '%d\\n' age > ages.txt; echo ok"  # bash: line 1: printf: age: invalid number (exit 0)
    assert all("invalid number" in run(ctx, typed, type="bash").content for _ in range(2))
