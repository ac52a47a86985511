"""The run's box: in the sandbox, what one code_run call starts in the background lives until the run ends, seen by
the next call (its pid, its loopback server, its log), and dies with the run; a timeout still kills the call's tree."""

from __future__ import annotations

import subprocess
import uuid

import pytest

from tests.tools.code_runs import run
from tools.guard import sandbox_probe

needs_bwrap = pytest.mark.skipif(bool(sandbox_probe.problem()), reason="bubblewrap missing or not permitted here")


def _host_has(token: str) -> bool:
    return subprocess.run(["pgrep", "-f", token], capture_output=True, check=False).returncode == 0


@needs_bwrap
def test_a_background_job_lives_on_to_the_next_call_and_dies_with_the_run(make_ctx, workspace):
    token = f"{uuid.uuid4().int % 10**6 + 10**6}"
    ctx = make_ctx(sandbox=True)
    started = run(ctx, f"nohup sleep {token} > job.log 2>&1 & echo $! > job.pid; echo started", type="bash")
    assert "started" in started.content and not started.is_error
    later = run(ctx, "kill -0 $(cat job.pid) && echo ALIVE || echo GONE", type="bash")
    assert "ALIVE" in later.content, later.content
    assert _host_has(f"sleep {token}")
    ctx.close()  # the run's end
    assert not _host_has(f"sleep {token}")


@needs_bwrap
def test_a_server_started_in_one_call_answers_the_next(make_ctx, workspace):
    (workspace / "index.html").write_text("hello from the box\n")
    ctx = make_ctx(sandbox=True)
    try:
        run(ctx, "nohup python3 -m http.server 8765 --bind 127.0.0.1 > server.log 2>&1 &\nsleep 1", type="bash")
        script = ("import time, urllib.request\nfor _ in range(50):\n    try:\n"
                  "        print(urllib.request.urlopen('http://127.0.0.1:8765/index.html').read().decode()); break\n"
                  "    except OSError:\n        time.sleep(0.1)\n")
        result = run(ctx, script, type="python")
        assert "hello from the box" in result.content, result.content
    finally:
        ctx.close()


@needs_bwrap
def test_python_scripts_keep_their_traceback_and_exit_code_and_a_timeout_kills_the_calls_tree(make_ctx, workspace):
    token = f"{uuid.uuid4().int % 10**6 + 10**6}"
    ctx = make_ctx(sandbox=True)
    try:
        failed = run(ctx, "import sys\nprint('before')\nsys.exit(3)", type="python")
        assert "before" in failed.content and "exit code 3" in failed.content, failed.content
        crashed = run(ctx, "x = 1\nraise ValueError('boom')", type="python")
        assert "<script>" in crashed.content and "line 2" in crashed.content and "ValueError: boom" in crashed.content
        timed = run(ctx, f"sleep {token} & sleep 30", type="bash", timeout=2)
        assert "timed out" in timed.content.lower() or "timeout" in timed.content.lower(), timed.content
        assert not _host_has(f"sleep {token}")
        after = run(ctx, "echo still-here", type="bash")
        assert "still-here" in after.content
    finally:
        ctx.close()


@needs_bwrap
def test_a_long_tmpdir_does_not_stop_the_box(make_ctx, workspace, tmp_path, monkeypatch):
    import tempfile

    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "tmp"
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))  # a bench trial's TMPDIR: past a socket path's 107 bytes
    ctx = make_ctx(sandbox=True)
    try:
        result = run(ctx, "echo boxed", type="bash")
    finally:
        ctx.close()
    assert "boxed" in result.content and not result.is_error, result.content
