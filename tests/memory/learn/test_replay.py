"""The replayer learning extracts with: code_run through the real dispatcher in the sandbox, offline whatever
GA_SANDBOX_NET says, without changing the process's environment (other threads read it while a replay runs)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from ga.config import load_settings
from ga.runs.folder import Run
from memory.learn.replay import SandboxReplayer
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
