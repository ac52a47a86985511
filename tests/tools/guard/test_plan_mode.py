"""Plan mode: code_run looks (ls, grep, git log) in the sandbox with the workspace read-only and no network; where
the sandbox cannot hold, it is refused and the refusal says why."""

from __future__ import annotations

import subprocess

import pytest

from tests.tools.code_runs import dispatch
from tools.guard import sandbox, sandbox_probe
from tools.process.execute import PLAN_NOTE

needs_bwrap = pytest.mark.skipif(bool(sandbox_probe.problem()), reason="bubblewrap missing or not permitted here")


@needs_bwrap
def test_code_looks_in_plan_mode_with_the_workspace_read_only(make_ctx, workspace):
    (workspace / "app.py").write_text("def main():\n    return 42  # TODO: 43\n")
    subprocess.run("git init -q && git add . && git -c user.name=u -c user.email=u@x commit -qm 'first commit'",
                   shell=True, cwd=workspace, check=True)
    ctx = make_ctx(mode="plan")  # no --sandbox: plan mode brings its own
    looked = dispatch(ctx, script="ls && grep -n TODO app.py && git log --oneline", type="bash")
    assert not looked.is_error, looked.content
    assert "app.py" in looked.content and "2:    return 42  # TODO: 43" in looked.content
    assert "first commit" in looked.content and PLAN_NOTE in looked.content
    assert looked.details["read_only"] is True and looked.details["sandbox"] is True
    changed = dispatch(ctx, script="echo x > new.txt; sed -i s/42/43/ app.py", type="bash")
    assert changed.is_error and "Read-only file system" in changed.content
    assert "hint: this is plan mode" in changed.content and "Put that step in your plan" in changed.content
    assert not (workspace / "new.txt").exists() and "return 42" in (workspace / "app.py").read_text()
    scratch = dispatch(ctx, script="echo x > /tmp/scratch.txt && cat /tmp/scratch.txt", type="bash")
    assert not scratch.is_error  # a private /tmp to work in


@needs_bwrap
def test_plan_mode_has_no_network_even_when_the_sandbox_would(make_ctx, monkeypatch):
    monkeypatch.setenv(sandbox.NETWORK_ENV, "1")
    script = "import socket; print(sorted(n for _, n in socket.if_nameindex()))"
    result = dispatch(make_ctx(mode="plan"), script=script)
    assert "['lo']" in result.content and result.details["network"] is False
    assert "['lo']" not in dispatch(make_ctx(sandbox=True), script=script).content  # the same host, outside plan mode


def test_plan_mode_refuses_code_run_where_the_sandbox_cannot_hold(make_ctx, monkeypatch, tmp_path, workspace):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on this PATH
    result = dispatch(make_ctx(mode="plan"), script="open('ran', 'w')")
    assert result.is_error and "plan mode" in result.content and "rule: plan-mode-read-only" in result.content
    assert "the sandbox that makes the workspace read-only cannot hold on this host" in result.content
    assert "bubblewrap (bwrap) is not installed" in result.content and not (workspace / "ran").exists()
