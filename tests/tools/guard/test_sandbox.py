"""code_run under the sandbox: root holds no capability, .git stays read-only, HOME and GA_HOME are hidden,
no network by default. Destructive attempts happen inside the sandbox only and are detected with markers."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from tests.tools.code_runs import dispatch, run
from tools.guard import sandbox, sandbox_probe


def _bwrap_works() -> bool:
    return not sandbox_probe.problem()


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
def test_private_scratch_read_only_system_and_nothing_else_of_the_host(make_ctx, workspace, tmp_path, outside_tmp):
    outside = tmp_path / "outside.txt"  # under /tmp: lands in the private /tmp and vanishes
    # a folder of the host that is no system folder (a virtualenv inside it may be shown: its interpreter runs)
    checkout = Path(sandbox.__file__).resolve().parents[2]
    script = (f"echo in > inside.txt; echo out > {outside}; echo x > /tmp/private.txt; ls /tmp; "
              f"echo y > {outside_tmp}/y.txt; echo z > /etc/ga-probe; "
              f"test -e {checkout}/README.md || echo CHECKOUT-ABSENT; "
              "ls -A /var /srv /mnt 2>&1 | head -5")
    result = run(make_ctx(sandbox=True), script, type="bash")
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert not outside.exists() and not (outside_tmp / "y.txt").exists() and not Path("/etc/ga-probe").exists()
    assert "Read-only file system" in result.content and "CHECKOUT-ABSENT" in result.content
    assert "README.md" not in result.content and "lib" not in result.content  # /var: only its private tmp
    assert "private.txt" in result.content and not (tmp_path.parent / "private.txt").exists()
    assert result.details["sandbox"] is True and result.details["network"] is False


@needs_bwrap
def test_root_inside_reads_no_root_only_file(make_ctx, workspace):
    secret = Path("/etc") / f"ga-test-secret-{uuid.uuid4().hex}"
    secret.write_text("ROOT-ONLY-CANARY\n")
    secret.chmod(0o600)
    sandbox._system.cache_clear()  # /etc is read once per process: this file came after
    try:
        result = run(make_ctx(sandbox=True), f"id -u; cat /etc/shadow {secret}; grep -c '^root:' /etc/passwd",
                     type="bash")
    finally:
        secret.unlink()
        sandbox._system.cache_clear()
    assert result.content.splitlines()[1] == "0" and result.content.rstrip().endswith("\n1"), result.content
    assert "CANARY" not in result.content and "root:" not in result.content  # root inside, yet shadow is masked


@needs_bwrap
def test_limits_hold_and_say_how_to_raise_them(make_ctx, workspace, monkeypatch):
    monkeypatch.setenv("GA_SANDBOX_MEMORY", "256M")
    monkeypatch.setenv("GA_SANDBOX_FILE_SIZE", "1M")
    monkeypatch.setenv("GA_SANDBOX_TMP", "2M")
    ctx = make_ctx(sandbox=True)
    result = run(ctx, "x = bytearray(512 * 1024 * 1024)\nprint('ALLOCATED')")
    assert "MemoryError" in result.content and "ALLOCATED" not in result.content
    assert "GA_SANDBOX_MEMORY" in result.content
    assert "ok" in run(ctx, "x = bytearray(64 * 1024 * 1024)\nprint('ok')").content
    result = run(ctx, "head -c 3000000 /dev/zero > big.bin", type="bash")
    assert result.is_error and (workspace / "big.bin").stat().st_size <= 1024 * 1024
    assert "GA_SANDBOX_FILE_SIZE" in result.content
    monkeypatch.setenv("GA_SANDBOX_FILE_SIZE", "0")  # no limit: the tmpfs's own size is what stops the next one
    result = run(ctx, "head -c 1500000 /dev/zero > /tmp/a && head -c 1500000 /dev/zero > ~/b && "
                 "head -c 1500000 /dev/zero > /tmp/c && echo FITS", type="bash")
    assert "No space left on device" in result.content and "FITS" not in result.content
    assert "GA_SANDBOX_TMP" in result.content


@needs_bwrap
def test_processes_are_limited_even_for_root(make_ctx, workspace, monkeypatch):
    from tools.process.cgroup import _pids_hierarchy

    if os.geteuid() == 0 and _pids_hierarchy() is None:
        pytest.skip("root, and no pids cgroup ga may create here: no process limit can hold")
    monkeypatch.setenv("GA_SANDBOX_PROCS", "40")
    script = ("import os, time\nn = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n"
              "            time.sleep(5)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n"
              "    print('STOPPED', n, e.strerror)\nelse:\n    print('FORKED', n)")
    result = run(make_ctx(sandbox=True), script, timeout=30)
    assert "STOPPED" in result.content and "FORKED" not in result.content, result.content


@needs_bwrap
def test_git_stays_read_only_inside(make_ctx, workspace):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    script = ("echo 'touch PWNED' > .git/hooks/pre-commit && echo HOOK; git config core.fsmonitor 'touch PWNED' "
              "&& echo CONFIG; echo ok > tracked.txt && echo FILE")
    result = run(make_ctx(sandbox=True), script, type="bash")
    assert "HOOK" not in result.content and "CONFIG" not in result.content and "FILE" in result.content
    assert not (workspace / ".git/hooks/pre-commit").exists()
    assert "fsmonitor" not in (workspace / ".git/config").read_text()


def _host_git(workspace: Path) -> None:
    """What the user does next, on the host: status, a commit, an alias, in every repository of the workspace."""
    who = ["-c", "user.name=u", "-c", "user.email=u@example.com"]
    for folder in ("vendor/lib", "fresh", "sub", "crafted"):
        subprocess.run(["git", "-C", str(workspace / folder), "status"], capture_output=True, check=False, timeout=30)
    subprocess.run(["git", "-C", str(workspace / "fresh"), *who, "commit", "-q", "--allow-empty", "-m", "x"],
                   capture_output=True, check=False, timeout=30)
    subprocess.run(["git", "-C", str(workspace / "fresh"), "st"], capture_output=True, check=False, timeout=30)


@needs_bwrap
def test_no_git_metadata_in_the_workspace_carries_code_to_the_host(make_ctx, workspace):
    subprocess.run(["git", "init", "-q", str(workspace / "vendor/lib")], check=True)  # a nested repo that exists
    script = (
        "git -C vendor/lib config core.fsmonitor 'touch PWNED-nested' && echo NESTED-CONFIG\n"
        "git init -q fresh && git -C fresh config core.fsmonitor 'touch PWNED-fresh'\n"
        "git -C fresh config alias.st '!touch PWNED-alias'\n"
        "printf '#!/bin/sh\\ntouch PWNED-hook\\n' > fresh/.git/hooks/pre-commit\nchmod +x fresh/.git/hooks/pre-commit\n"
        "mkdir -p crafted/objects crafted/refs sub && echo 'ref: refs/heads/main' > crafted/HEAD\n"
        "printf '[core]\\n\\tfsmonitor = touch PWNED-crafted\\n' > crafted/config\n"
        "echo 'gitdir: ../crafted' > sub/.git && echo MADE")
    ctx = make_ctx(sandbox=True)
    result = run(ctx, script, type="bash")
    assert "NESTED-CONFIG" not in result.content and "MADE" in result.content, result.content
    assert "fsmonitor" not in (workspace / "vendor/lib/.git/config").read_text()
    assert "git metadata this command wrote" in result.content and "core.fsmonitor" in result.content
    assert (workspace / "fresh/.git/config.disabled-by-ga").exists()  # the original is kept for the user
    _host_git(workspace)
    assert not list(workspace.rglob("PWNED*")), list(workspace.rglob("PWNED*"))
    # the repository the run made stays usable by the run: a later command commits in it
    done = run(ctx, "git -C fresh -c user.name=a -c user.email=a@b commit -q --allow-empty -m one && echo COMMITTED",
               type="bash")
    assert "COMMITTED" in done.content, done.content


@needs_bwrap
def test_git_config_in_home_stays_as_it_was_when_the_workspace_is_home(make_ctx, outside_tmp, monkeypatch):
    home = outside_tmp / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = me\n")
    monkeypatch.setenv("HOME", str(home))
    script = ("git config --global core.pager 'touch PWNED' && echo GLOBAL; mkdir -p .config/git && "
              "printf '[alias]\\n\\tl = !touch PWNED\\n' > .config/git/config && echo XDG")
    result = run(make_ctx(sandbox=True, workdir=home), script, type="bash")
    assert "GLOBAL" not in result.content and "XDG" in result.content
    assert (home / ".gitconfig").read_text() == "[user]\n\tname = me\n"
    assert not (home / ".config").exists() and (home / ".config.disabled-by-ga").exists()  # a new dot-folder: aside


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
def test_a_command_the_sandbox_stopped_runs_outside_only_when_a_human_agrees(make_ctx, workspace, outside_tmp):
    data = outside_tmp / "data.txt"  # a file of the host the sandbox does not show
    data.write_text("HOST-DATA\n")
    script = f"cat {data}"
    approved = make_ctx(sandbox=True, interactive=True, answers=[("approve", "")])
    result = run(approved, script, type="bash")
    assert "HOST-DATA" in result.content and "the user let it run outside the sandbox" in result.content
    assert f"{data} is not visible inside it" in approved.ui.asked[0][1] and result.details["sandbox"] is False
    declined = make_ctx(sandbox=True, interactive=True, answers=[("reject", "")])
    result = run(declined, script, type="bash")
    assert "HOST-DATA" not in result.content and "chose not to run it outside" in result.content
    result = run(make_ctx(sandbox=True), script, type="bash")  # nobody to ask: said in the result
    assert "HOST-DATA" not in result.content and "no human is at a terminal" in result.content
    assert result.details["sandbox_blocked"] == f"{data} is not visible inside it"
    assert "--no-sandbox" in result.content
    ok = run(make_ctx(sandbox=True, interactive=True, answers=[]), "cat /nonexistent/x", type="bash")
    assert "sandbox_blocked" not in ok.details  # a path that exists nowhere: an ordinary failure


@needs_bwrap
def test_no_network_and_a_read_only_path_are_told_as_the_sandbox_s_doing(make_ctx, outside_tmp, monkeypatch):
    monkeypatch.delenv(sandbox.NETWORK_ENV, raising=False)  # the default: no network inside
    offline = run(make_ctx(sandbox=True), "import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)")
    assert offline.details["sandbox_blocked"] == "it has no network", offline.content
    assert "no human is at a terminal" in offline.content and "GA_SANDBOX_NET=1" in offline.content
    shown = outside_tmp / "shown"  # a host folder shown read-only inside
    shown.mkdir()
    monkeypatch.setenv("GA_SANDBOX_READ", str(shown))
    approved = make_ctx(sandbox=True, interactive=True, answers=[("approve", "")])
    result = run(approved, f"echo made > {shown}/made.txt", type="bash")
    assert f"{shown}/made.txt is read-only inside it" in approved.ui.asked[0][1], result.content
    assert (shown / "made.txt").read_text() == "made\n" and result.details["sandbox"] is False


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


@needs_bwrap
def test_determined_forms_the_policy_lets_through_reach_nothing_of_the_host(make_ctx, outside_tmp):
    """eval, base64, $IFS, a variable, another interpreter's one-liner, Python's getattr: the policy does not follow
    them (corpus.DETERMINED); in the sandbox they delete only what it shows, and a folder of the host is not there."""
    canary = outside_tmp / "keep"
    canary.mkdir()
    (canary / "file.txt").write_text("keep\n")
    encoded = base64.b64encode(f"rm -rf {canary}".encode()).decode()
    scripts = [("bash", f'eval "r""m -rf {canary}"'), ("bash", f"echo {encoded} | base64 -d | sh"),
               ("bash", f"rm${{IFS}}-rf${{IFS}}{canary}"), ("bash", f"R=rm; $R -rf {canary}"),
               ("bash", f"perl -e 'use File::Path; rmtree(\"{canary}\")'"),
               ("python", f"import shutil\ngetattr(shutil, 'rm' + 'tree')({str(canary)!r})")]
    for kind, script in scripts:
        result = dispatch(make_ctx(sandbox=True), script=script, type=kind)
        assert "rule: " not in result.content and result.details.get("sandbox") is True, (script, result.content)
        assert (canary / "file.txt").read_text() == "keep\n", script
