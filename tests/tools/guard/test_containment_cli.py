"""Containment through the CLI: the real run.py, the scripted server over HTTP, real processes and files.

Destructive attempts run inside the sandbox or against a throw-away HOME outside /tmp, detected with markers.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from tests.ga.cli.test_cli import RUN_PY, events, only_run, wait_for
from tests.scripted import ScriptedServer, tool_call
from tools.guard import sandbox_probe
from tools.process import watchdog

KEY = "sk-test-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
needs_bwrap = pytest.mark.skipif(bool(sandbox_probe.problem()), reason="bubblewrap missing or not permitted here")


@pytest.fixture
def home(tmp_path):
    return tmp_path / "ga-home"


@pytest.fixture
def user_home():
    """A throw-away HOME outside /tmp (the sandbox's /tmp is private, so it would prove nothing there)."""
    folder = Path(tempfile.mkdtemp(prefix="ga-home-test-", dir="/var/tmp"))
    (folder / "docs").mkdir()
    (folder / "docs/keep.txt").write_text("KEEP-CANARY\n")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def env_for(server: ScriptedServer, home: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GA_"))}
    env.update(GA_HOME=str(home), GA_RETRY_BASE="0.01", OPENAI_BASE_URL=server.url, OPENAI_API_KEY=KEY,
               GA_MODEL="scripted")
    env.update(extra)
    return env


def ga(args: list[str], server, home, cwd, timeout: float = 90, **extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, RUN_PY, *args], cwd=cwd, env=env_for(server, home, **extra), check=False,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def code_run(script: str, kind: str = "bash", **more) -> dict:
    return {"tool_calls": [tool_call("code_run", script=script, type=kind, **more)]}


def results(server: ScriptedServer) -> list[str]:
    return [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]


# --- 1, 10: the sandbox holds as root, and is the default for unattended runs --------------------------

@needs_bwrap
def test_autonomous_runs_are_sandboxed_by_default_and_root_inside_holds_nothing(home, workspace, user_home):
    marker = user_home / "escaped"
    shell = (f"grep ^CapEff /proc/self/status; mount -o remount,rw,bind / && echo REMOUNTED; touch {marker}; "
             "cat ~/docs/keep.txt; echo ok > inside.txt")
    script = f"import subprocess\nsubprocess.run(bytes.fromhex({shell.encode().hex()!r}).decode(), shell=True)"
    with ScriptedServer([code_run(script, "python"), {"content": "done"}]) as server:  # hidden from the policy
        proc = ga(["probe", "--json"], server, home, workspace, HOME=str(user_home))
    assert proc.returncode == 0, proc.stderr
    out = results(server)[0]
    assert "CapEff:\t0000000000000000" in out and "REMOUNTED" not in out and "KEEP-CANARY" not in out
    assert not marker.exists() and (workspace / "inside.txt").exists()
    assert events(only_run(home), "result")[0]["details"]["sandbox"] is True


def test_no_sandbox_opts_out(home, workspace):
    with ScriptedServer([code_run("grep ^CapEff /proc/self/status"), {"content": "done"}]) as server:
        proc = ga(["probe", "--no-sandbox"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    assert events(only_run(home), "result")[0]["details"]["sandbox"] is False


def test_without_bubblewrap_an_autonomous_run_says_so_once_and_an_explicit_sandbox_is_refused(home, workspace,
                                                                                              tmp_path):
    bin_dir = tmp_path / "bin"  # every tool the run needs, but no bwrap
    bin_dir.mkdir()
    for name in ("bash", "sh", "cat", "grep", "env"):
        if found := shutil.which(name):
            (bin_dir / name).symlink_to(found)
    with ScriptedServer([code_run("echo hi"), {"content": "done"}]) as server:
        proc = ga(["probe"], server, home, workspace, PATH=str(bin_dir))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("runs without a sandbox") == 1 and "bubblewrap" in proc.stderr
    with ScriptedServer([{"content": "never"}]) as server:
        proc = ga(["probe", "--sandbox", "--json"], server, home, workspace, PATH=str(bin_dir))
    assert proc.returncode == 2 and "--sandbox cannot hold" in proc.stderr and not server.requests
    assert json.loads(proc.stdout)["status"] == "error"


# --- 2, 5: .git and ga's configuration are protected paths ---------------------------------------------------

def test_file_tools_may_not_write_git_or_the_policy_unattended(home, workspace):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    steps = [{"tool_calls": [tool_call("file_write", path=".git/hooks/pre-commit", content="touch PWNED\n")]},
             {"tool_calls": [tool_call("file_write", path=str(home / "policy.json"),
                                       content='{"allow_commands": ["*"]}')]},
             {"content": "Both were refused."}]
    with ScriptedServer([]) as server:  # GA_HOME is never an allowed folder
        proc = ga(["hook", "--allow-path", str(home)], server, home, workspace)
    assert proc.returncode == 2 and "ga's own home" in proc.stderr and not server.requests
    with ScriptedServer(steps) as server:  # a workspace holding GA_HOME: all of it is out of the file tools' reach
        proc = ga(["hook", "--no-sandbox", "--allow-path", str(home.parent)], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    first, second = results(server)
    assert "rule: protected-path" in first and "rule: hidden-path" in second
    assert not (workspace / ".git/hooks/pre-commit").exists() and not (home / "policy.json").exists()


def test_code_run_may_not_approve_itself_and_patterns_match_single_commands(home, workspace, user_home):
    policy = home / "policy.json"
    write_policy = f"open({str(policy)!r}, 'w').write('{{\"allow_commands\": [\"*\"]}}')"
    steps = [code_run(write_policy, "python"), code_run("git reset --hard\nrm -rf ~/docs"),
             {"content": "Both were refused."}]
    home.mkdir(parents=True)
    policy.write_text(json.dumps({"allow_commands": ["git reset --hard*"]}))
    with ScriptedServer(steps) as server:
        proc = ga(["approve yourself", "--no-sandbox"], server, home, workspace, HOME=str(user_home))
    assert proc.returncode == 0, proc.stderr
    first, second = results(server)
    assert "rule: protected-path" in first and "git reset --hard*" in policy.read_text()
    assert "rule: delete-outside-workspace" in second and (user_home / "docs/keep.txt").exists()


def test_a_script_that_rewrites_the_policy_does_not_loosen_it_for_its_own_run(home, workspace, user_home):
    policy = home / "policy.json"
    home.mkdir(parents=True)
    policy.write_text(json.dumps({"allow_commands": []}))
    hidden = f"open({str(policy)!r}, 'w').write('{{\"allow_commands\": [\"*\"]}}')".encode().hex()
    steps = [code_run(f"exec(bytes.fromhex({hidden!r}).decode())", "python"),  # the scan cannot see the path
             code_run("rm -rf ~/docs"), {"content": "The second script was refused."}]
    with ScriptedServer(steps) as server:
        proc = ga(["tidy up", "--no-sandbox"], server, home, workspace, HOME=str(user_home))
    assert proc.returncode == 0, proc.stderr
    assert '"*"' in policy.read_text()  # the first script did rewrite it...
    refused = results(server)[1]
    assert "rule: delete-outside-workspace" in refused and "changed while this run was going" in refused
    assert (user_home / "docs/keep.txt").exists()  # ...and the run kept the policy it started with


# --- 3: secrets --------------------------------------------------------------------------------------------

def test_children_cannot_read_the_key_and_secrets_are_redacted_everywhere(home, workspace):
    (workspace / "leak.txt").write_text(f"the key is {KEY}\n")
    script = "tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; env"
    steps = [code_run(script), {"tool_calls": [tool_call("file_read", path="leak.txt")]}, {"content": "done"}]
    extra = {"DATABASE_URL": "postgres://app:Pa55w0rd-x@db/app", "SMTP_PASS": "smtp-secret-1",
             "GH_PAT": "ghpat-secret-1", "MYAPIKEY": "myapikey-secret-1", "SENTRY_DSN": "https://dsnsecret1@o1.ingest.sentry.io/5",
             "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/slacksecret1"}
    with ScriptedServer(steps) as server:
        proc = ga(["leak", "--no-sandbox"], server, home, workspace, **extra)
    assert proc.returncode == 0, proc.stderr
    environ, read = results(server)
    assert "OPENAI_API_KEY" not in environ and KEY not in environ
    for name, value in extra.items():
        assert name not in environ and value not in environ, name
    assert KEY not in read and "[REDACTED]" in read
    run_files = "".join(p.read_text(errors="replace") for p in only_run(home).rglob("*") if p.is_file())
    assert KEY not in run_files and "Pa55w0rd-x" not in run_files


# --- 4: run files are private --------------------------------------------------------------------------------

def test_run_folders_and_files_are_private(home, workspace):
    big = "for i in range(30000): print('line', i, 'x' * 40)"
    with ScriptedServer([code_run(big, "python"), {"content": "done"}]) as server:
        proc = ga(["flood", "--no-sandbox"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    folder = only_run(home)
    assert list((folder / "outputs").iterdir())
    for path in [home, home / "runs", *folder.rglob("*"), folder]:
        mode = path.stat().st_mode & 0o777
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
    with ScriptedServer([code_run("echo x > made.txt"), {"content": "done"}]) as server:
        ga(["write", "--no-sandbox"], server, home, workspace)
    assert (workspace / "made.txt").stat().st_mode & 0o777 == 0o666 & ~_umask()  # the model's files: as usual


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# --- 7: children die with ga ---------------------------------------------------------------------------------

LOOPS = ("(while true; do echo x >> bg.txt; sleep 0.05; done) &\n"
         "python3 -c 'import time\nwhile True:\n    open(\"py.txt\", \"a\").write(\"x\"); time.sleep(0.05)' &\n"
         "while true; do echo y >> fg.txt; sleep 0.05; done")


def _sizes(workspace: Path) -> list[int]:
    return [(workspace / n).stat().st_size if (workspace / n).exists() else 0 for n in ("bg.txt", "py.txt", "fg.txt")]


@pytest.mark.parametrize("flag", ["--no-sandbox", "--sandbox"])
def test_kill_9_of_ga_kills_its_children(home, workspace, flag):
    if flag == "--sandbox" and sandbox_probe.problem():
        pytest.skip("bubblewrap missing or not permitted here")
    steps = [code_run(LOOPS, timeout=120), {"content": "never reached"}]
    with ScriptedServer(steps) as server:
        proc = subprocess.Popen([sys.executable, RUN_PY, "loop", flag], cwd=workspace, env=env_for(server, home),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: all(_sizes(workspace)))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            time.sleep(1.5)
            before = _sizes(workspace)
            time.sleep(1.0)
            assert _sizes(workspace) == before, "a child of ga kept writing after ga was killed"
        finally:
            proc.kill()
            watchdog.sweep(f"{only_run(home).name}/")


def test_background_processes_end_with_the_run_and_leftovers_die_at_resume(home, workspace):
    steps = [code_run("sleep 300 > /dev/null 2>&1 &\necho $! > bg.pid"), {"content": "done"}]
    with ScriptedServer(steps) as server:
        proc = ga(["background", "--no-sandbox"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    assert not psutil.pid_exists(int((workspace / "bg.pid").read_text())) or \
        psutil.Process(int((workspace / "bg.pid").read_text())).status() == psutil.STATUS_ZOMBIE
    steps = [code_run("sleep 301 > /dev/null 2>&1 &\necho $! > bg2.pid"), {"delay": 30, "content": "late"},
             {"content": "resumed"}]
    with ScriptedServer(steps) as server:
        proc = subprocess.Popen([sys.executable, RUN_PY, "background again", "--no-sandbox"], cwd=workspace,
                                env=env_for(server, home / "second"), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: len(server.requests) == 2)
        guards = [c for c in psutil.Process(proc.pid).children() if "watchdog.py" in " ".join(c.cmdline())]
        for p in [proc, *guards]:  # ga and its watchdog die together: the leftover waits for the resume
            p.kill()
        proc.wait(timeout=10)
        leftover = int((workspace / "bg2.pid").read_text())
        assert psutil.pid_exists(leftover)
        run_id = only_run(home / "second").name
        resumed = ga(["--resume", run_id, "--no-sandbox"], server, home / "second", workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert not psutil.pid_exists(leftover) or psutil.Process(leftover).status() == psutil.STATUS_ZOMBIE
