"""Hints read from a failed program's output, as code_run returns them."""

from __future__ import annotations

from tests.tools.code_runs import run
from tools.process.hints import hints

# --- hints --------------------------------------------------------------------------------------

def test_hint_module_not_found(make_ctx):
    content = run(make_ctx(), "import cv2").content
    assert "pip install opencv-python" in content and content.splitlines()[-1].startswith("hint:")
    assert "pip install scikit-learn" in run(make_ctx(), "from sklearn.linear_model import X").content


def test_hint_command_not_found(make_ctx):
    content = run(make_ctx(), "no_such_tool_xyz --version", type="bash").content
    assert "[exit code 127" in content and "hint: `no_such_tool_xyz` is not installed" in content


def test_a_script_of_text_lines_is_told_it_is_text_not_commands(make_ctx):
    # a small model sends a file's new lines as the script (the list it meant to write)
    content = run(make_ctx(), "# Lists\n- eggs\n- milk\n", type="bash").content
    assert "hint: `-` is not a command: this script holds text" in content and "cat > FILE <<'EOF'" in content
    assert "is not installed" not in content


def test_a_tool_written_as_a_command_is_named_even_when_the_script_exits_0(make_ctx):
    # the text format has only the shell; a small model writes ga's tools as commands, then a line that succeeds
    content = run(make_ctx(), "web_scan http://127.0.0.1/p.html > p.txt\necho saved", type="bash").content
    assert "[exit code 0" in content and "hint: `web_scan` is a tool, not a shell command" in content
    assert "Read a page with web_scan URL alone" in content
    # any other command missing before a line that succeeds is no hint at exit 0 (`nano` before `sed -i` did the work)
    assert "hint" not in run(make_ctx(), "no_such_editor_xyz notes.txt\necho ok", type="bash").content
    assert "hint" not in run(make_ctx(), "print('web_scan: command not found')", type="python").content


def test_hint_permission_denied(make_ctx):
    content = run(make_ctx(), "echo 'echo hi' > t.sh; ./t.sh", type="bash").content
    assert "Permission denied" in content and "hint: permission denied" in content


def test_hint_syntax_error_names_the_line(make_ctx):
    content = run(make_ctx(), "a = 1\nprint('ok'\nb = 2\n").content
    assert "hint: SyntaxError at line 2 of the script: `print('ok'`" in content
    bash = run(make_ctx(), "echo a\nif then fi\n", type="bash").content
    assert "hint: bash syntax error at line 2" in bash
    awk = run(make_ctx(), "echo 1 | awk 'BEGIN {r = function(x) {return x}}'\n", type="bash")  # awk's line 1
    assert awk.is_error and "hint: bash syntax error" not in awk.content, awk.content


def test_hint_port_in_use(make_ctx):
    holder = __import__("socket").socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        script = f"import socket\nPORT = {port}\ns = socket.socket()\ns.bind(('127.0.0.1', PORT))"
        content = run(make_ctx(), script).content
    finally:
        holder.close()
    assert "Address already in use" in content and f"hint: port {port} is already in use" in content


def test_hints_stay_outside_the_truncated_part(make_ctx):
    ctx = make_ctx()
    ctx.output_budget = 4_000
    content = run(ctx, "for i in range(20000): print(i)\nimport cv2").content
    assert "[output truncated" in content and content.rstrip().endswith("then run again.")




def test_sandbox_hints_name_the_read_only_git_and_the_missing_network():
    git = "fatal: Unable to create '/w/.git/index.lock': Read-only file system"
    (hint,) = hints(git, 128, script="git commit -m x", kind="bash", sandbox=True)
    assert ".git is read-only" in hint and "--no-sandbox" in hint
    offline = "curl: (6) Could not resolve host: pypi.org"
    assert any("GA_SANDBOX_NET=1" in h for h in hints(offline, 6, script="curl x", kind="bash", sandbox=True,
                                                       network=False))
    assert not hints(offline, 6, script="curl x", kind="bash", sandbox=False)


def test_a_missing_file_in_the_workspace_is_named_with_what_the_workspace_holds(make_ctx):
    # a small model runs the script the task asks for before writing it, over and over the same error
    ctx = make_ctx()
    (ctx.workspace / "list.txt").write_text("first\nsecond\n")
    content = run(ctx, "python3 reverse.py list.txt", type="bash").content
    assert ("hint: `reverse.py` does not exist in the workspace (it holds: list.txt). If it is a program to write, "
            "write it first: cat > reverse.py <<'EOF'") in content
    python = run(ctx, "open('lst.txt').read()").content  # Python's; an input, not a program: nothing to make up
    assert "`lst.txt` does not exist in the workspace (it holds: list.txt)." in python and "write it" not in python
    assert "`my notes.txt` does not exist" in run(ctx, "cat 'my notes.txt'", type="bash").content  # a quoted name whole
    # a page the task names by its URL, read as a file: the hint never invites making its content up
    assert "write it" not in run(ctx, "cat team.html | grep Lead > lead.txt", type="bash").content
    # a glob that matched nothing (the files were moved already) is no file to write
    assert "hint" not in run(ctx, "mkdir -p logs; mv *.log logs/; echo moved", type="bash").content
    assert "If it is one to make, create it: mkdir -p out" in run(ctx, "echo 1 > out/n.txt", type="bash").content
    assert "the folder `urgent` does not exist" in run(ctx, "ls urgent/", type="bash").content
    # a loop's failures hidden by a last command that succeeded (exit 0): `cp f urgent/` into no folder
    hidden = run(ctx, "for f in list.txt; do cp $f urgent/; done\necho copied", type="bash").content
    assert "[exit code 0" in hidden and "If it is one to make, create it: mkdir -p urgent" in hidden
    # outside the workspace, or a file that exists by the end of the script: no hint
    assert "hint" not in run(ctx, "cat /nonexistent-ga-file", type="bash").content
    assert "hint" not in run(ctx, "cat list.txt/x", type="bash").content  # "Not a directory", no listing of a file
    assert "hint" not in run(ctx, "cat late.txt; echo x > late.txt; exit 1", type="bash").content
    # grep's FILE:LINE passed on as a name (`grep -r WORD dir | xargs cp`): what it is, not a file to write
    (ctx.workspace / "inbox").mkdir()
    (ctx.workspace / "inbox" / "m1.txt").write_text("URGENT: server down\n")
    grep = run(ctx, "mkdir -p urgent; grep -r URGENT inbox/ | xargs -I {} cp {} urgent/", type="bash").content
    assert "hint: `inbox/m1.txt:URGENT: server down` is no file name: it is `inbox/m1.txt`, a colon" in grep
    assert "`grep -l` prints only the names" in grep and "does not exist" not in grep


def test_a_bash_syntax_error_on_a_line_of_output_copied_into_the_script_says_to_leave_it_out(make_ctx):
    # a small model's script as a terminal transcript: the command, then the line it expects it to print
    script = "echo 'shipyard 4.12.0 (build 9031)'\nshipyard 4.12.0 (build 9031)\n"
    content = run(make_ctx(), script, type="bash").content
    assert "`shipyard` is no command" in content and "leave it out" in content, content
    for script in ("echo a\nif then fi\n", "greet() { echo hi; }\ngreet (x)\n"):  # a keyword, the script's function
        said = run(make_ctx(), script, type="bash").content
        assert "bash syntax error at line 2" in said and "Fix that line and run again" in said, said
