"""The sandbox through the CLI: on by default (the terminal too) and named in the run's header; ga's own checkout
as the workspace; a detached run's escaped grandchildren. Real run.py, the scripted server, real processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import site
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ga.cli.test_cli import RUN_PY, events, ga_env, only_run, wait_for
from tests.scripted import ScriptedServer, tool_call
from tests.tty import run_on_tty
from tools.guard import sandbox_probe
from tools.process.cgroup import _pids_hierarchy
from tools.process.watchdog import kill_group

needs_bwrap = pytest.mark.skipif(bool(sandbox_probe.problem()), reason="bubblewrap missing or not permitted here")
CHECKOUT = Path(RUN_PY).parent


@pytest.fixture
def home(tmp_path):
    return tmp_path / "ga-home"


def code_run(script: str, kind: str = "bash", **more) -> dict:
    return {"tool_calls": [tool_call("code_run", script=script, type=kind, **more)]}


def hidden(shell: str) -> str:
    """Python that runs `shell` without the policy seeing it: what is tested here is the sandbox alone."""
    return f"import subprocess\nsubprocess.run(bytes.fromhex({shell.encode().hex()!r}).decode(), shell=True)"


@needs_bwrap
def test_every_new_run_is_sandboxed_the_terminal_too_and_the_header_says_so(home, workspace):
    with ScriptedServer([code_run("echo hi"), {"content": "done"}]) as server:
        run = run_on_tty([sys.executable, RUN_PY, "probe"], cwd=workspace, env=ga_env(server, home))
    assert run.returncode == 0, run.text
    assert "default mode · sandbox" in run.text
    assert events(only_run(home), "result")[0]["details"]["sandbox"] is True
    with ScriptedServer([{"content": "done"}]) as server:
        proc = subprocess.run([sys.executable, RUN_PY, "probe", "--jsonl", "--no-sandbox"], cwd=workspace,
                              env=ga_env(server, home / "2"), capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, check=False)
    start = json.loads(proc.stdout.splitlines()[0])
    assert start["type"] == "start" and start["sandbox"] is False, start


def _copy_of_ga(folder: Path) -> Path:
    """ga's checkout as users have it, with a virtualenv inside: run from there, it is the workspace."""
    for name in ("ga", "tools", "memory", "sop", "bench/harness"):
        shutil.copytree(CHECKOUT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("run.py", "pyproject.toml", "requirements.txt"):
        shutil.copy2(CHECKOUT / name, folder / name)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / ".venv")], check=True, timeout=120)
    # this environment's packages, also when it is a virtualenv itself (--system-site-packages sees the base's)
    (inner,) = (folder / ".venv/lib").glob("python*/site-packages")
    (inner / "borrowed.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return folder / ".venv/bin/python"


@needs_bwrap
def test_a_run_in_ga_s_own_checkout_cannot_change_ga_or_its_virtualenv(tmp_path, home):
    checkout = tmp_path / "ga"
    python = _copy_of_ga(checkout)
    site_packages = next((checkout / ".venv/lib").glob("python3*/site-packages"))
    marker = tmp_path / "PWNED"
    payload = f'open("{marker}", "w")'
    shell = (f"echo '{payload}' >> ga/__init__.py && echo CODE; "
             f"echo 'import os; {payload}' > {site_packages}/evil.pth && echo PTH; "
             f"echo '{payload}' > json.py && echo SHADOW")
    steps = [code_run(hidden(shell), "python"),
             {"tool_calls": [tool_call("file_write", path="ga/__init__.py", content="import os\n", mode="append")]},
             {"content": "done"}, {"content": "done"}]
    with ScriptedServer(steps) as server:
        proc = subprocess.run([str(python), str(checkout / "run.py"), "probe"], cwd=checkout,
                              env=ga_env(server, home), capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, proc.stderr
    first, second = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"][:2]
    assert "CODE" not in first and "PTH" not in first and "SHADOW" in first, first
    assert "rule: protected-path" in second and "ga's own code" in second
    assert not (site_packages / "evil.pth").exists()
    version = subprocess.run([str(python), str(checkout / "run.py"), "--version"], cwd=checkout, capture_output=True,
                             text=True, timeout=60, check=False)
    assert version.stdout.startswith("ga ") and not marker.exists(), version  # json.py at the top is not imported


@pytest.mark.skipif(_pids_hierarchy() is None, reason="no pids cgroup ga may create here")
def test_a_detached_run_killed_with_9_takes_its_escaped_grandchildren_along(home, workspace):
    escape = "env -i setsid sh -c 'while :; do echo x >> tick.txt; sleep 0.1; done' > /dev/null 2>&1 &"
    steps = [code_run(f"{escape}\nsleep 1\necho started"), {"delay": 60, "content": "never"}]
    with ScriptedServer(steps) as server:
        proc = subprocess.run([sys.executable, RUN_PY, "escape", "--no-sandbox", "--detach"], cwd=workspace,
                              env=ga_env(server, home), capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, check=False)
        assert proc.returncode == 0, proc.stderr
        run_dir = only_run(home)
        wait_for(lambda: len(server.requests) == 2, timeout=60)
        pid = json.loads((run_dir / "state.json").read_text())["pid"]
        group = next(_pids_hierarchy().glob(f"ga-{run_dir.name}"))
        try:
            os.kill(pid, signal.SIGKILL)
            time.sleep(2)
            size = (workspace / "tick.txt").stat().st_size
            time.sleep(1)
            assert (workspace / "tick.txt").stat().st_size == size, "a grandchild outlived the run"
            assert not group.exists()
        finally:
            kill_group(str(group))
