"""`runs rm` on a run folder that is a symbolic link removes the link, never what it points to, and says so; no
traceback. Through the real run.py."""

from __future__ import annotations

import pytest

from tests.ga.cli.test_cli import ga, only_run
from tests.scripted import ScriptedServer


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def test_runs_rm_of_a_linked_run_folder_removes_the_link_only(home, workspace, tmp_path):
    with ScriptedServer([{"content": "done"}]) as server:
        assert ga(["a task", "--no-sandbox"], server, home, workspace).returncode == 0
    folder = only_run(home)
    elsewhere = tmp_path / "kept-elsewhere"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    proc = ga(["runs", "rm", folder.name], None, home, workspace)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "the link only" in proc.stdout
    assert not folder.is_symlink() and not folder.exists()
    assert (elsewhere / "state.json").is_file() and (elsewhere / "trajectory.jsonl").is_file()
