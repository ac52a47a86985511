"""code_run under the sandbox: root holds no capability, .git stays read-only, HOME and GA_HOME are hidden,
no network by default. Destructive attempts happen inside the sandbox only and are detected with markers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from tests.tools.code_runs import dispatch, run
from tools.guard import sandbox


def _bwrap_works() -> bool:
    return not sandbox.problem()


needs_bwrap = pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap missing or not permitted here")


@pytest.fixture
def outside_tmp():
    """A folder outside /tmp (the sandbox's /tmp is private, so markers there would prove nothing)."""
    folder = Path(tempfile.mkdtemp(prefix="ga-sandbox-test-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_bwrap
def test_root_inside_holds_no_capability_and_cannot_remount_or_write_the_host(make_ctx, workspace, outside_tmp):
    marker = outside_tmp / f"escaped-{uuid.uuid4().hex}"
    script = (f"grep -E '^Cap(Eff|Bnd)' /proc/self/status; id -u; mount -o remount,rw,bind / && echo REMOUNTED; "
              f"touch {marker} && echo WROTE; unshare -r true && echo NESTED; echo in > inside.txt")
    result = run(make_ctx(sandbox=True), script, type="bash")
    assert "CapEff:\t0000000000000000" in result.content and "CapBnd:\t0000000000000000" in result.content
    assert "REMOUNTED" not in result.content and "WROTE" not in result.content and "NESTED" not in result.content
    assert not marker.exists() and not list(outside_tmp.iterdir())
    assert (workspace / "inside.txt").read_text() == "in\n"


@needs_bwrap
def test_private_tmp_and_read_only_rest(make_ctx, workspace, tmp_path, outside_tmp):
    outside = tmp_path / "outside.txt"  # under /tmp: lands in the private /tmp and vanishes
    script = (f"echo in > inside.txt; echo out > {outside}; echo x > /tmp/private.txt; ls /tmp; "
              f"echo y > {outside_tmp}/y.txt")
    result = run(make_ctx(sandbox=True), script, type="bash")
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert not outside.exists() and not (outside_tmp / "y.txt").exists() and "Read-only file system" in result.content
    assert "hint: permission denied" in result.content and "read-only" in result.content
    assert "private.txt" in result.content and not (tmp_path.parent / "private.txt").exists()
    assert result.details["sandbox"] is True and result.details["network"] is False


@needs_bwrap
def test_git_stays_read_only_inside(make_ctx, workspace):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    script = ("echo 'touch PWNED' > .git/hooks/pre-commit && echo HOOK; git config core.fsmonitor 'touch PWNED' "
              "&& echo CONFIG; echo ok > tracked.txt && echo FILE")
    result = run(make_ctx(sandbox=True), script, type="bash")
    assert "HOOK" not in result.content and "CONFIG" not in result.content and "FILE" in result.content
    assert not (workspace / ".git/hooks/pre-commit").exists()
    assert "fsmonitor" not in (workspace / ".git/config").read_text()


@needs_bwrap
def test_home_credentials_and_ga_home_are_hidden(make_ctx, workspace, outside_tmp, monkeypatch):
    home = outside_tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_rsa").write_text("SSH-CANARY\n")
    (home / ".aws").mkdir()
    (home / ".aws/credentials").write_text("AWS-CANARY\n")
    (home / ".gitconfig").write_text("[user]\n  name = GITCONFIG-CANARY\n")
    monkeypatch.setenv("HOME", str(home))
    ctx = make_ctx(sandbox=True)
    ctx.settings.home = outside_tmp / "ga-home"  # outside HOME and /tmp: hidden on its own account
    ctx.settings.home.mkdir()
    (ctx.settings.home / "policy.json").write_text('{"allow_rules": ["POLICY-CANARY"]}')
    script = (f"cat ~/.ssh/id_rsa ~/.aws/credentials ~/.gitconfig {ctx.settings.home}/policy.json; ls -A ~; "
              "echo scratch > ~/note && cat ~/note")
    result = run(ctx, script, type="bash")
    assert "CANARY" not in result.content and "scratch" in result.content  # HOME is an empty private folder
    assert not (home / "note").exists()
    monkeypatch.setenv(sandbox.READ_ENV, str(home / ".gitconfig"))  # what the user names is shown, read-only
    result = run(ctx, "cat ~/.gitconfig ~/.ssh/id_rsa; echo x >> ~/.gitconfig", type="bash")
    assert "GITCONFIG-CANARY" in result.content and "SSH-CANARY" not in result.content
    assert "x" not in (home / ".gitconfig").read_text().splitlines()


@needs_bwrap
def test_credentials_stay_hidden_when_the_workspace_is_home(make_ctx, outside_tmp, monkeypatch):
    home = outside_tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_rsa").write_text("SSH-CANARY\n")
    (home / "project.txt").write_text("mine\n")
    monkeypatch.setenv("HOME", str(home))
    result = run(make_ctx(sandbox=True, workdir=home), "cat project.txt .ssh/id_rsa; echo new > made.txt", type="bash")
    assert "mine" in result.content and "SSH-CANARY" not in result.content
    assert (home / "made.txt").read_text() == "new\n" and (home / ".ssh/id_rsa").read_text() == "SSH-CANARY\n"


@needs_bwrap
def test_an_interpreter_inside_the_hidden_home_still_runs(make_ctx, monkeypatch):
    monkeypatch.setenv("HOME", str(Path(sys.base_prefix).parent))  # the interpreter lies inside the hidden HOME
    result = run(make_ctx(sandbox=True), "import sys; print('ran', sys.version_info[0])")
    assert "ran 3" in result.content, result.content


@needs_bwrap
def test_no_network_by_default_and_on_request(make_ctx, monkeypatch):
    script = "import socket; print(sorted(n for _, n in socket.if_nameindex()))"
    assert "['lo']" in run(make_ctx(sandbox=True), script).content
    monkeypatch.setenv(sandbox.NETWORK_ENV, "1")
    result = run(make_ctx(sandbox=True), script)
    assert "['lo']" not in result.content and result.details["network"] is True


def test_sandbox_without_bwrap_is_a_clear_error(make_ctx, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on this PATH
    result = dispatch(make_ctx(sandbox=True), script="print(1)")
    assert result.is_error and "bubblewrap" in result.content and "Nothing was run" in result.content


def test_a_bwrap_that_cannot_build_the_sandbox_refuses_to_run(make_ctx, monkeypatch, tmp_path, workspace):
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    result = dispatch(make_ctx(sandbox=True), script="open('ran', 'w')")
    assert result.is_error and "cannot hold" in result.content and "No permissions" in result.content
    assert not (workspace / "ran").exists()
