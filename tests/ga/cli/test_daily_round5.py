"""Daily use, round 5: what a user meets running ga every day (background runs, their reasons, the wording)."""

from __future__ import annotations

import json

from tests.ga.cli.test_cli import ga, wait_for

DEAD = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "k", "GA_MODEL": "m"}
"""The discard port: nothing answers there."""


def test_a_background_run_that_cannot_reach_its_server_keeps_its_reason(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    started = ga(["say hi", "--detach"], None, home, workspace, **DEAD)
    run_id = started.stdout.strip()
    assert started.returncode == 0 and run_id, started.stderr
    state = home / "runs" / run_id / "state.json"
    wait_for(lambda: state.exists() and json.loads(state.read_text()).get("status") == "failed")

    listed = ga(["runs"], None, home, workspace)
    assert run_id in listed.stdout and "failed" in listed.stdout
    shown = ga(["runs", "show", run_id], None, home, workspace)
    assert "Cannot reach the model server at http://127.0.0.1:9/v1" in shown.stdout
    tail = ga(["tail", run_id], None, home, workspace)
    assert "failed: Cannot reach the model server" in tail.stdout
    assert "retry 1 of 2" in tail.stdout and "of 6" not in tail.stdout  # it gives up after 3 tries: says so


def test_a_foreground_run_that_cannot_reach_its_server_leaves_no_run(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    proc = ga(["say hi"], None, home, workspace, **DEAD)
    assert proc.returncode == 1 and "Cannot reach the model server" in proc.stderr
    assert not list((home / "runs").glob("2*"))
