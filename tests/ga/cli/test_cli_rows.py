"""The smaller rows of daily use through the real run.py: a paused run's question in `runs` and in --json, a done run
resumed, `memory import --skip-existing`, --raw, shell completion, hints that are
no warnings, `python3 run.py` without ga's dependencies, a server error that answered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from ga.invocation import invocation
from ga.local import cli as local_cli
from tests.ga.cli.test_cli import RUN_PY, ga, ga_env, only_run
from tests.scripted import ScriptedServer, tool_call
from tests.tty import run_on_tty


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


ASK = {"tool_calls": [tool_call("ask_user", question="Which region?", candidates=["eu-west", "us-east"])]}


def test_a_paused_run_shows_its_question_in_runs_and_in_its_json(home, workspace):
    with ScriptedServer([ASK]) as server:
        paused = ga(["deploy it", "--json"], server, home, workspace)
    out = json.loads(paused.stdout)
    assert paused.returncode == 3 and out["status"] == "paused"
    assert (out["question"], out["candidates"]) == ("Which region?", ["eu-west", "us-east"])
    assert out["model"] == "scripted" and 0 < out["duration_s"] < 60
    listed = ga(["runs"], None, home, workspace)
    row = next(i for i, line in enumerate(listed.stdout.splitlines()) if line.startswith(out["run_id"]))
    assert listed.stdout.splitlines()[row + 1].strip() == "? Which region? (1. eu-west · 2. us-east)"
    assert 'answer ID "..."' in listed.stderr
    (as_json,) = json.loads(ga(["runs", "--json"], None, home, workspace).stdout)
    assert as_json["question"] == "Which region? (1. eu-west · 2. us-east)"


def test_resuming_a_done_run_says_it_is_done_and_how_to_go_on(home, workspace):
    with ScriptedServer([{"content": "all done"}]) as server:
        first = ga(["do it"], server, home, workspace)
        again = ga(["--resume", only_run(home).name], server, home, workspace)
        server.assert_complete()  # nothing was sent again
    assert first.returncode == 0 and again.returncode == 0 and again.stdout.strip() == "all done"
    assert f"run {only_run(home).name} is already done" in again.stderr and "--answer" in again.stderr


def test_memory_import_skip_existing_imports_the_new_and_keeps_the_rest(home, workspace, tmp_path):
    exported = tmp_path / "skills"
    assert ga(["memory", "export", str(exported)], None, home, workspace, GA_LEARN="1").returncode == 0
    new = exported / "rotate-logs"
    new.mkdir()
    (new / "SKILL.md").write_text("---\nname: rotate-logs\ndescription: Rotate the logs of a service when they grow "
                                  "too big.\n---\n# Rotate logs\n1. gzip the old ones.\n")
    clash = ga(["memory", "import", str(exported)], None, home, workspace, GA_LEARN="1")
    assert clash.returncode == 1 and "--skip-existing keeps it" in clash.stderr
    kept = (home / "sop" / "install-missing-package" / "SKILL.md").read_text()
    skipped = ga(["memory", "import", str(exported), "--skip-existing"], None, home, workspace, GA_LEARN="1")
    assert skipped.returncode == 0, skipped.stderr
    assert "imported 1 SOP(s): rotate-logs" in skipped.stdout and "skipped 4 already here" in skipped.stdout
    assert (home / "sop" / "rotate-logs" / "SKILL.md").is_file()
    assert (home / "sop" / "install-missing-package" / "SKILL.md").read_text() == kept


FENCED = "Run this:\n\n```python\nprint('hi')\n```\n"


def test_raw_prints_the_answer_as_written_on_a_terminal_too(home, workspace):
    with ScriptedServer([{"content": FENCED}, {"content": FENCED}]) as server:
        env = ga_env(server, home)
        rendered = run_on_tty([sys.executable, RUN_PY, "show code"], cwd=workspace, env=env)
        raw = run_on_tty([sys.executable, RUN_PY, "show code", "--raw"], cwd=workspace, env=env)
    assert "```python" not in rendered.text and " print('hi')" in rendered.text  # Markdown rendered
    assert "```python" in raw.text and "\nprint('hi')\n```" in raw.text  # as the model wrote it, no indent


def test_completion_offers_commands_flags_run_ids_and_sops(home, workspace):
    with ScriptedServer([{"content": "ok"}]) as server:
        ga(["do it"], server, home, workspace)
    run_id = only_run(home).name
    ga(["memory", "list"], None, home, workspace, GA_LEARN="1")  # the seed SOPs
    script = ga(["completion", "bash"], None, home, workspace)
    assert script.returncode == 0 and "complete -o default -F _ga_complete ga" in script.stdout

    def complete(*words: str) -> list[str]:
        line = " ".join(["ga", *words])
        program = (f"{script.stdout}\nCOMP_WORDS=({line}); COMP_CWORD={len(words)}; _ga_complete; "
                   'printf "%s\\n" "${COMPREPLY[@]}"')
        done = subprocess.run(["bash", "-c", program], env={**os.environ, "GA_HOME": str(home)}, capture_output=True,
                              text=True, timeout=30, check=False)
        return done.stdout.split()

    assert {"runs", "tail"} <= set(complete("")) and complete("ru") == ["runs", "run"]
    assert complete("--res") == ["--resume"] and complete("tail", run_id[:8]) == [run_id]
    assert complete("runs", "sh") == ["show"] and complete("runs", "show", "") == [run_id]
    assert "install-missing-package" in complete("memory", "show", "")
    assert complete("--mode", "p") == ["plan"] and "--skip-existing" not in complete("memory", "")


def test_hints_after_an_outcome_are_not_styled_as_warnings(home, workspace):
    with ScriptedServer([{"fault": "500"}] * 3) as server:
        failed = run_on_tty([sys.executable, RUN_PY, "Hello"], cwd=workspace, env=ga_env(server, home))
    assert failed.returncode == 1, failed.text
    assert any(line.startswith("! failed: Model request failed") for line in failed.screen), failed.text
    assert "resume with: " in failed.text
    assert not any(line.startswith("! resume with") for line in failed.screen)  # what to type next: no warning


def test_models_names_the_command_as_the_user_typed_it():
    shown = local_cli.show({"name": "m", "ready": True, "cache": "/c", "bytes": 0, "remove": None,
                            "weights": {"path": "/c/w", "present": False, "bytes": 0, "sha256": ""},
                            "server": {"path": "/c/s", "present": False, "bytes": 0, "version": ""},
                            "running": {"server": 1, "port": 2, "threads": 2, "window": 4096, "in_use": False,
                                        "started": time.time()}})
    assert f"stop with: {invocation()} models stop" in shown and "python run.py" not in shown


def test_run_py_with_a_python_lacking_ga_s_modules_says_how_to_run_it(workspace):
    # -S: no site-packages, as a Python outside the venv
    done = subprocess.run([sys.executable, "-S", RUN_PY, "Hello"], cwd=workspace, capture_output=True, text=True,
                          timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "lacks a module ga needs" in done.stderr and ("venv" in done.stderr or "pip install" in done.stderr)


def test_a_server_that_answers_500_is_not_told_to_be_unreachable(home, workspace):
    with ScriptedServer([{"fault": "500"}] * 3) as server:
        proc = ga(["Hello"], server, home, workspace)
    assert proc.returncode == 1 and "answered 500" in proc.stderr, proc.stderr
    assert "reachable but could not serve this request" in proc.stderr and "is up and reachable" not in proc.stderr


def test_no_library_chatter_on_the_terminal_even_with_sops_to_look_up(home, workspace):
    with ScriptedServer([{"content": "ok"}] * 2) as server:
        plain = ga(["install the missing package requests"], server, home, workspace, GA_LEARN="1")
        verbose = ga(["install the missing package requests", "-v"], server, home, workspace, GA_LEARN="1")
    assert plain.returncode == 0 and verbose.returncode == 0
    assert "bm25s" not in plain.stderr and "Building index" not in verbose.stderr
    assert "· memory.index: SOPs listed for this task: install-missing-package" in verbose.stderr  # ga's own: kept


@pytest.mark.skipif(bool(__import__("tools").sandbox_problem()), reason="bubblewrap missing or not permitted here")
def test_the_run_s_header_says_the_sandbox_has_its_own_network(home, workspace):
    with ScriptedServer([{"content": "ok"}] * 2) as server:
        own = ga(["Hello"], server, home, workspace)
        ports = ga(["Hello"], server, home, workspace, GA_SANDBOX_PORTS="5432")
    assert "sandbox on (the default; own network: GA_SANDBOX_PORTS or GA_SANDBOX_NET=1 reach the host's)" in \
        own.stderr.splitlines()[0]
    assert "own network, host ports 5432" in ports.stderr.splitlines()[0]
