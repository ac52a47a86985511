"""code_run with real processes: time, trees, output, hints, environment, sandbox, permission modes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import psutil
import pytest

from ga.dispatch import Dispatcher
from ga.protocols import ToolCall
from tools.code_run import SPEC, tail_lines


def run(ctx, script: str, **args):
    return SPEC.run({"script": script, **args}, ctx)


def dispatch(ctx, **args):
    return Dispatcher([SPEC]).dispatch([ToolCall(id="call_1", name="code_run", arguments=json.dumps(args))], ctx)[0]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


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


def test_credentials_do_not_reach_the_child(make_ctx, monkeypatch):
    secrets = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
               "AWS_SESSION_TOKEN", "MY_SERVICE_SECRET", "HF_TOKEN", "DB_PASSWORD", "STRIPE_API_KEY"]
    for name in secrets:
        monkeypatch.setenv(name, "s3cr3t")
    monkeypatch.setenv("KEEP_ME", "visible")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    content = run(make_ctx(), "import os; print(sorted(os.environ))").content
    assert "s3cr3t" not in content
    assert not [name for name in secrets if f"'{name}'" in content]
    assert "'KEEP_ME'" in content and "'TOKENIZERS_PARALLELISM'" in content


# --- time and process trees --------------------------------------------------------------------

TREE = """
sleep 301 &
echo $! > pids
(setsid sleep 302 & echo $! >> pids)
python3 -c 'import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open("pids", "a").write(f"{os.getpid()}\\n"); time.sleep(303)
    os._exit(0)
'
echo $$ >> pids
echo started
sleep 300
"""


def test_timeout_kills_the_whole_tree_including_background_grandchildren(make_ctx, workspace):
    started = time.monotonic()
    result = run(make_ctx(), TREE, type="bash", timeout=2)
    assert time.monotonic() - started < 10
    pids = [int(p) for p in (workspace / "pids").read_text().split()]
    assert len(pids) == 4
    assert not [p for p in pids if alive(p)]
    assert result.is_error and result.details["killed"] == "timeout" and result.details["survivors"] == []
    assert "killed after" in result.content and "2 s timeout" in result.content and "started" in result.content


def test_ctrl_c_kills_the_tree_and_says_so(make_ctx, workspace):
    main = threading.main_thread().ident
    timer = threading.Timer(1.0, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    try:
        result = run(make_ctx(), TREE, type="bash", timeout=30)
    finally:
        timer.cancel()
    pids = [int(p) for p in (workspace / "pids").read_text().split()]
    assert not [p for p in pids if alive(p)]
    assert result.details["killed"] == "interrupted" and "interrupted by the user" in result.content


def test_background_process_with_redirected_output_returns_at_once(make_ctx, workspace):
    started = time.monotonic()
    result = run(make_ctx(), "sleep 30 > /dev/null 2>&1 &\necho $! > bg.pid\necho ok", type="bash")
    assert time.monotonic() - started < 1.5 and "ok" in result.content
    pid = int((workspace / "bg.pid").read_text())
    assert alive(pid)  # started on purpose: left running
    psutil.Process(pid).kill()


# --- big output: bounded memory, tail, full file ----------------------------------------------------

def test_100_mb_of_output_keeps_memory_bounded(make_ctx):
    ctx = make_ctx()
    me = psutil.Process()
    before, peak, done = me.memory_info().rss, [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], me.memory_info().rss)
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    script = ("import sys\nline = 'x' * 99 + '\\n'\nblock = line * 10_000\n"
              "for i in range(100):\n    sys.stdout.write(block)\nprint('THE END')")
    try:
        result = run(ctx, script, timeout=120)
    finally:
        done.set()
        sampler.join()
    growth = (peak[0] - before) / 1e6
    assert growth < 60, f"agent grew by {growth:.1f} MB"
    full = result.details["full_output"]
    assert "full output: " + full in result.content and "1,000,001 lines" in result.content
    with open(full, "rb") as f:
        f.seek(0, 2)
        assert f.tell() == 100_000_000 + len("THE END\n")
    assert result.content.rstrip().endswith("THE END")
    assert len(result.content) <= ctx.output_budget


def test_tail_keeps_whole_lines_within_the_budget(make_ctx):
    ctx = make_ctx()
    ctx.output_budget = 5_000
    result = run(ctx, "for i in range(5000): print(f'line {i:05d} ' + 'y' * (i % 37))")
    assert len(result.content) <= 5_000
    body = [ln for ln in result.content.splitlines() if ln.startswith("line ")]
    assert body[-1].startswith("line 04999")
    assert all(len(ln) == 11 + int(ln[5:10]) % 37 for ln in body)  # no line cut
    assert "[output truncated: showing the last" in result.content


def test_tail_lines_caps_line_count_and_cuts_only_an_overlong_last_line():
    text = "".join(f"{i}\n" for i in range(3000))
    tail, count = tail_lines(text, whole=True, max_chars=100_000, max_lines=2000)
    assert count == 2000 and tail.startswith("1000\n")
    tail, count = tail_lines("a" * 10_000, whole=True, max_chars=100, max_lines=2000)
    assert tail == "a" * 100 and count == 1


def test_short_output_is_not_saved(make_ctx):
    ctx = make_ctx()
    result = run(ctx, "print('small')")
    assert "full_output" not in result.details and not list((ctx.run_dir / "outputs").glob("*"))


# --- hints --------------------------------------------------------------------------------------

def test_hint_module_not_found(make_ctx):
    content = run(make_ctx(), "import cv2").content
    assert "pip install opencv-python" in content and content.splitlines()[-1].startswith("hint:")
    assert "pip install scikit-learn" in run(make_ctx(), "from sklearn.linear_model import X").content


def test_hint_command_not_found(make_ctx):
    content = run(make_ctx(), "no_such_tool_xyz --version", type="bash").content
    assert "[exit code 127" in content and "hint: `no_such_tool_xyz` is not installed" in content


def test_hint_permission_denied(make_ctx):
    content = run(make_ctx(), "echo 'echo hi' > t.sh; ./t.sh", type="bash").content
    assert "Permission denied" in content and "hint: permission denied" in content


def test_hint_syntax_error_names_the_line(make_ctx):
    content = run(make_ctx(), "a = 1\nprint('ok'\nb = 2\n").content
    assert "hint: SyntaxError at line 2 of the script: `print('ok'`" in content
    bash = run(make_ctx(), "echo a\nif then fi\n", type="bash").content
    assert "hint: bash syntax error at line 2" in bash


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


# --- sandbox ------------------------------------------------------------------------------------

def _bwrap_works() -> bool:
    return bool(shutil.which("bwrap")) and subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--unshare-pid", "true"], capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap missing or not permitted here")
def test_sandbox_blocks_writes_outside_the_workspace(make_ctx, workspace, tmp_path):
    outside = tmp_path / "outside.txt"  # under /tmp: lands in the private /tmp and vanishes
    in_home = Path.home() / f"ga-sandbox-test-{os.getpid()}.txt"  # read-only
    script = f"echo in > inside.txt; echo out > {outside}; echo x > /tmp/private.txt; ls /tmp; echo y > {in_home}"
    try:
        result = run(make_ctx(sandbox=True), script, type="bash")
        assert not in_home.exists()
    finally:
        in_home.unlink(missing_ok=True)
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert not outside.exists() and "Read-only file system" in result.content
    assert "hint: permission denied" in result.content and "read-only" in result.content
    assert "private.txt" in result.content and not (tmp_path.parent / "private.txt").exists()
    assert result.details["sandbox"] is True and result.details["network"] is False


@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap missing or not permitted here")
def test_sandbox_has_no_network_by_default(make_ctx):
    result = run(make_ctx(sandbox=True), "import socket; print([n for _, n in socket.if_nameindex()])")
    assert "['lo']" in result.content


def test_sandbox_without_bwrap_is_a_clear_error(make_ctx, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on this PATH
    result = dispatch(make_ctx(sandbox=True), script="print(1)")
    assert result.is_error and "bubblewrap" in result.content and "Nothing was run" in result.content


# --- permission modes and the command policy ----------------------------------------------------------

def test_plan_mode_refuses_code_run(make_ctx, workspace):
    result = dispatch(make_ctx(mode="plan"), script="open('ran', 'w')")
    assert result.is_error and "plan mode" in result.content and "plan-mode-read-only" in result.content
    assert not (workspace / "ran").exists()


def test_confirm_mode_asks_and_honours_reject_and_edit(make_ctx, workspace):
    ctx = make_ctx(mode="confirm", interactive=True, answers=[("reject", "")])
    result = dispatch(ctx, script="open('ran', 'w')")
    assert result.is_error and "rejected" in result.content and not (workspace / "ran").exists()
    edited = json.dumps({"script": "open('edited', 'w')"})
    ctx = make_ctx(mode="confirm", interactive=True, answers=[("edit", edited)])
    result = dispatch(ctx, script="open('ran', 'w')")
    assert not result.is_error and (workspace / "edited").exists() and not (workspace / "ran").exists()
    ctx = make_ctx(mode="confirm", interactive=True, answers=[("edit", json.dumps({"script": "rm -rf ~",
                                                                                     "type": "bash"}))])
    assert "rule: rm-home" in dispatch(ctx, script="print(1)").content


def test_catastrophic_commands_are_never_executed(make_ctx, workspace):
    for script in ["touch ran; dd if=/dev/zero of=/dev/sdz9 count=1", "touch ran; echo x > /dev/nvme9n9",
                   "touch ran; eval \"$(echo bWtmcy5leHQ0IC9kZXYvc2R6OQ== | base64 -d)\""]:
        for ctx in (make_ctx(interactive=True, answers=[]), make_ctx(autonomous=True)):
            result = dispatch(ctx, script=script, type="bash")
            assert result.is_error and "catastrophic" in result.content and "rule: " in result.content
    assert not (workspace / "ran").exists()


def test_dangerous_command_on_a_terminal_approve_reject_edit(make_ctx, workspace):
    script = "touch ran; git reset --hard"
    ctx = make_ctx(interactive=True, answers=[("reject", "")])
    result = dispatch(ctx, script=script, type="bash")
    assert "rejected" in result.content and "git-reset-hard" in result.content and not (workspace / "ran").exists()
    assert "git-reset-hard" in ctx.ui.asked[0][1]
    ctx = make_ctx(interactive=True, answers=[("edit", "touch edited")])
    assert not dispatch(ctx, script=script, type="bash").is_error and (workspace / "edited").exists()
    ctx = make_ctx(interactive=True, answers=[("edit", "rm -rf ~")])  # an edit is checked again
    assert "rule: rm-home" in dispatch(ctx, script=script, type="bash").content
    ctx = make_ctx(interactive=True, answers=[("approve", "")])
    dispatch(ctx, script=script, type="bash")
    assert (workspace / "ran").exists()


def test_autonomous_denies_dangerous_unless_the_policy_file_allows(make_ctx, workspace):
    ctx = make_ctx(autonomous=True)
    script = "touch ran; git reset --hard"
    result = dispatch(ctx, script=script, type="bash")
    assert result.is_error and "rule: git-reset-hard" in result.content and "policy.json" in result.content
    assert not (workspace / "ran").exists()
    policy = ctx.settings.home / "policy.json"
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text(json.dumps({"allow_rules": ["git-reset-hard"]}))
    dispatch(ctx, script=script, type="bash")
    assert (workspace / "ran").exists()
    policy.write_text(json.dumps({"allow_commands": ["touch other; git push --force origin feature/*"]}))
    dispatch(ctx, script="touch other; git push --force origin feature/x", type="bash")
    assert (workspace / "other").exists()
    assert dispatch(ctx, script="touch third; git push --force origin main", type="bash").is_error
    policy.write_text("{not json")
    assert "cannot be read" in dispatch(ctx, script=script, type="bash").content


def test_schema_states_the_timeout_maximum():
    timeout = SPEC.parameters["properties"]["timeout"]
    assert timeout["maximum"] == 600 and timeout["default"] == 60
    assert SPEC.schema()["function"]["parameters"]["properties"]["timeout"]["maximum"] == 600
    assert "full output" in SPEC.description
