"""code_run under --sandbox: bubblewrap with the workspace writable, the rest read-only, no network."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tools.code_runs import dispatch, run

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


