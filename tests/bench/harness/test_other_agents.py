"""The ready agent configs that install on this machine (mini-swe-agent from PyPI, Pi from npm), run through the
proxy on a shipped task with the scripted upstream. `.ci/run` installs them (python run.py bench install NAME);
on a developer machine without them these tests are skipped, under CI they fail."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from bench.harness.adapters import CONFIGS, resolve
from bench.harness.cli_agent import CLIAgent
from tests.bench.harness.conftest import bench, copy_tasks, rows


def installed(name: str) -> bool:
    agent = resolve(name)
    program = agent.fill(agent.command[0], agent.variables())
    return bool(shutil.which(program) or os.path.isfile(program))


@pytest.mark.parametrize("name", ["mini-swe-agent", "mini-swe-agent-text", "pi"])
def test_agent_solves_a_task_through_the_proxy(tmp_path, name):
    if not installed(name):
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed: .ci/run must run `python run.py bench install {name}`")
        pytest.skip(f"{name} is not installed (python run.py bench install {name})")
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug")
    out = tmp_path / "out"
    assert bench(suite, "--agents", name, "--upstream", "scripted", "--out", out, "--no-report") == 0
    (row,) = rows(out)
    assert row["success"], (row["error"], row["verifier"]["output"][-500:])
    text_mode = name == "mini-swe-agent-text"  # its commands are in the reply's text: the meter sees no tool call
    assert row["script_complete"] and row["requests"] >= 3 and row["usage_local"] == 0
    assert row["tool_calls"] == (0 if text_mode else 3)
    assert row["agent_version"] and row["agent_config"]["config"] == f"{name}.toml" and row["acted"] is True
    assert row["claimed_done"] is True  # mini-swe-agent: its trajectory says Submitted; Pi: it exited 0


@pytest.mark.parametrize("name", ["mini-swe-agent", "mini-swe-agent-text"])
def test_a_peer_that_never_gets_the_model_to_act_is_a_format_failure(tmp_path, name):
    """Replies with no command: mini-swe-agent gives up after three format errors, no command ran. Its trajectory
    still holds its own config, whose templates name the returncode: `acted` must not be read from those."""
    if not installed(name):
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed: .ci/run must run `python run.py bench install {name}`")
        pytest.skip(f"{name} is not installed (python run.py bench install {name})")
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug")
    chatter = [{"content": "I would look at stats.py and fix the mean."}] * 3
    (suite / "fix-calc-bug" / "scripted" / f"{name}.json").write_text(json.dumps(chatter))
    out = tmp_path / "out"
    assert bench(suite, "--agents", name, "--upstream", "scripted", "--out", out, "--no-report") == 0
    (row,) = rows(out)
    assert not row["success"] and row["requests"] == 3 and row["tool_calls"] == 0
    assert row["acted"] is False and row["claimed_done"] is False


def test_every_shipped_config_loads_and_says_whether_it_is_tested():
    configs = {p.stem: CLIAgent.load(p) for p in CONFIGS.glob("*.toml")}
    assert {"mini-swe-agent", "pi", "codex", "claude-code", "openclaw", "genericagent"} <= set(configs)
    assert {n for n, c in configs.items() if c.tested} == {"mini-swe-agent", "mini-swe-agent-text", "pi"}
    for config in configs.values():
        assert config.description and config.command
