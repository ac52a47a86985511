"""Command groups list by default (`memory`, `schedule`, like `runs`); `models` lists what the endpoint serves."""

from __future__ import annotations

import json

import pytest

from tests.ga.cli.test_cli import ga
from tests.scripted import ScriptedServer


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def test_memory_and_schedule_alone_list_like_runs(home, workspace, crontab):
    for group in ("memory", "schedule"):
        alone, listed = ga([group], None, home, workspace), ga([group, "list"], None, home, workspace)
        assert alone.returncode == 0, alone.stderr
        assert (alone.stdout, alone.stderr) == (listed.stdout, listed.stderr)
        as_json = ga([group, "--json"], None, home, workspace)
        assert as_json.returncode == 0 and isinstance(json.loads(as_json.stdout), list)
    assert "install-missing-package" in ga(["memory"], None, home, workspace, GA_LEARN="").stdout  # the seeds
    assert "No ga jobs in your crontab" in ga(["schedule"], None, home, workspace).stderr
    shown = ga(["memory", "--help"], None, home, workspace).stdout
    assert shown.startswith("usage: ") and "run.py memory" in shown and "{list,show,rm,search,export,import}" in shown


def test_models_lists_what_the_endpoint_serves(home, workspace, tmp_path):
    cache = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    with ScriptedServer([], window=12_000) as server:
        proc = ga(["models"], server, home, workspace, **cache)
        as_json = json.loads(ga(["models", "--json"], server, home, workspace, **cache).stdout)
        other = ga(["models"], None, home, workspace, OPENAI_BASE_URL=server.url, OPENAI_API_KEY="k",
                   GA_MODEL="gpt-4.1", **cache)
    assert proc.returncode == 0, proc.stderr
    assert f"endpoint {server.url} serves 1 model:\n  scripted  (the configured model, window 12,000 tokens)" \
        in proc.stdout
    assert as_json["endpoint"] == {"base_url": server.url, "model": "scripted", "models": ["scripted"],
                                   "window": 12_000}
    assert "the configured model 'gpt-4.1' is not among them" in other.stdout


def test_models_says_why_it_cannot_list_and_nothing_about_rm_when_nothing_is_cached(home, workspace, tmp_path):
    cache = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    proc = ga(["models"], None, home, workspace, OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="k",
              GA_MODEL="m", **cache)
    assert proc.returncode == 0, proc.stderr
    assert "endpoint http://127.0.0.1:9/v1: cannot list its models: it cannot be reached" in proc.stdout
    assert "not provisioned" in proc.stdout and "remove with" not in proc.stdout and "models rm" not in proc.stdout
    assert json.loads(ga(["models", "--json"], None, home, workspace, **cache).stdout)["remove"] is None
    nothing = ga(["models"], None, home, workspace, **cache)
    assert nothing.stdout.startswith("endpoint: none configured")
    removed = ga(["models", "rm"], None, home, workspace, **cache)
    assert removed.returncode == 0 and removed.stdout.startswith("nothing cached in")
