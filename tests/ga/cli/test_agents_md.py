"""AGENTS.md through the real CLI: the user's own and the project's are read into the first message (not the system
prompt, which stays the same in every folder), capped, and the header says which were read."""

from __future__ import annotations

import subprocess

import pytest

from tests.ga.cli.test_cli import ga
from tests.scripted import ScriptedServer


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def test_the_users_and_the_projects_agents_md_are_read_nearest_last(home, workspace):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "AGENTS.md").write_text("Run the tests with `make check`.\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "AGENTS.md").write_text("In sub/, use tabs.\n")
    (workspace.parent / "AGENTS.md").write_text("OUTSIDE THE REPOSITORY\n")
    home.mkdir(parents=True, exist_ok=True)
    (home / "AGENTS.md").write_text("Answer briefly.\n")
    with ScriptedServer([{"content": "ok"}, {"content": "ok"}]) as server:
        proc = ga(["--workdir", str(workspace / "sub"), "do it"], server, home, workspace)
        plain = ga(["--workdir", str(workspace.parent), "do it"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    first = next(m["content"] for m in server.requests[0]["messages"] if m["role"] == "user")
    order = [first.index(t) for t in ("do it", "Answer briefly.", "make check", "use tabs")]
    assert order == sorted(order) and "OUTSIDE THE REPOSITORY" not in first  # up to the repository's root
    assert "AGENTS.md" not in server.requests[0]["messages"][0]["content"]  # the system prompt is the same anywhere
    assert server.requests[0]["messages"][0] == server.requests[1]["messages"][0]
    assert f"instructions read: {home / 'AGENTS.md'}, {workspace / 'AGENTS.md'}" in proc.stderr
    assert plain.returncode == 0


def test_a_long_agents_md_is_cut_and_says_so(home, workspace):
    (workspace / "AGENTS.md").write_text("rule\n" * 5000)
    with ScriptedServer([{"content": "ok"}]) as server:
        proc = ga(["do it"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    first = next(m["content"] for m in server.requests[0]["messages"] if m["role"] == "user")
    assert "[… cut: AGENTS.md text is kept to 8,192 bytes]" in first and len(first) < 9_000
