"""The replayer learning extracts with: code_run through the real dispatcher in the sandbox, offline whatever
GA_SANDBOX_NET says, without changing the process's environment (other threads read it while a replay runs)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from ga.config import load_settings
from ga.runs.folder import Run
from memory.learn.extract import _Trial
from memory.learn.replay import SandboxReplayer
from memory.learn.script import build
from memory.learn.steps import Step
from tools import code_run, sandbox_problem

needs_bwrap = pytest.mark.skipif(bool(sandbox_problem()), reason="bubblewrap missing or not permitted here")


@needs_bwrap
def test_a_replay_is_offline_and_leaves_the_process_environment_alone(tmp_path, workspace, monkeypatch):
    monkeypatch.setenv("GA_SANDBOX_NET", "1")  # the user shares the host's network with code_run
    settings = load_settings(env={}, home=tmp_path / "home", workdir=workspace)
    replayer = SandboxReplayer(settings, Run.create(settings.runs_dir, "a task", {}), code_run.SPEC, sandbox_problem)
    seen: list[str | None] = []

    def watch() -> None:  # what the rest of the process reads while the replay runs
        deadline = time.monotonic() + 30
        while not (workspace / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        seen.append(os.environ.get("GA_SANDBOX_NET"))

    watcher = threading.Thread(target=watch)
    watcher.start()
    interfaces = "import socket; print(sorted(n for _, n in socket.if_nameindex()))"
    ok, output = replayer.run(f'python3 -c "{interfaces}"; touch started; sleep 1', workspace, ".", 30)
    watcher.join()
    assert ok and "['lo']" in output, output  # only the sandbox's own loopback: no network
    assert seen == ["1"] and os.environ["GA_SANDBOX_NET"] == "1"
    assert replayer.problem() == ""


@needs_bwrap
def test_a_replay_that_reproduces_the_run_passes_and_one_past_the_budget_says_the_time_ran_out(tmp_path, workspace):
    settings = load_settings(env={}, home=tmp_path / "home", workdir=workspace)
    replayer = SandboxReplayer(settings, Run.create(settings.runs_dir, "a task", {}), code_run.SPEC, sandbox_problem)
    before = tmp_path / "before"
    before.mkdir()
    (before / "a.txt").write_text("1\n")
    (workspace / "a.txt").write_text("1\n")
    (workspace / "b.txt").write_text("1\n")  # what the run made: a copy
    trial = _Trial(replayer, before, workspace, outputs={"b.txt": "created"}, answer=[],
                   staging=tmp_path / "home" / "sop" / ".staging")
    copy, other = build([Step(kind="bash", code="cp a.txt b.txt")]), build([Step(kind="bash", code="echo 2 > b.txt")])
    assert trial.reproduces(copy) is True and trial.said() == ""
    assert trial.reproduces(other) is False and trial.said() == " (b.txt came out different)"
    trial.deadline = time.monotonic()
    assert trial.reproduces(copy) is False and trial.said() == " (the replays' 120 s ran out)"
    assert sorted(p.name for p in workspace.iterdir()) == ["a.txt", "b.txt"]  # replays ran on copies
