"""The ready agent configs that install on this machine (mini-swe-agent from PyPI, Pi from npm), run through the
proxy on a shipped task with the scripted upstream. `.ci/run` installs them (python run.py bench install NAME);
on a developer machine without them these tests are skipped, under CI they fail."""

from __future__ import annotations

import os
import shutil

import pytest

from ga.bench.adapters import CONFIGS, resolve
from ga.bench.cli_agent import CLIAgent
from tests.bench.conftest import bench, copy_tasks, rows


def installed(name: str) -> bool:
    agent = resolve(name)
    program = agent.fill(agent.command[0], agent.variables())
    return bool(shutil.which(program) or os.path.isfile(program))


@pytest.mark.parametrize("name", ["mini-swe-agent", "pi"])
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
    assert row["script_complete"] and row["requests"] >= 3 and row["tool_calls"] == 3 and row["usage_local"] == 0


def test_every_shipped_config_loads_and_says_whether_it_is_tested():
    configs = {p.stem: CLIAgent.load(p) for p in CONFIGS.glob("*.toml")}
    assert {"mini-swe-agent", "pi", "codex", "claude-code", "openclaw", "genericagent"} <= set(configs)
    assert {n for n, c in configs.items() if c.tested} == {"mini-swe-agent", "pi"}
    for config in configs.values():
        assert config.description and config.command
