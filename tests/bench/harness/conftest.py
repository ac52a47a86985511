"""Helpers for the harness tests: copies of shipped tasks, agent configs, and the bench command in-process."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from bench.harness import cli, results
from tests.scripted import ScriptedServer

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "bench" / "suites" / "offline"
TINY = Path(__file__).with_name("tiny_agent.py")


def copy_tasks(dest: Path, *names: str) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copytree(SUITE / name, dest / name)
    return dest


def agent_config(folder: Path, name: str, command: list[str], env: dict[str, str] | None = None) -> Path:
    """An agent config file (TOML) for a CLI agent."""
    lines = [f"name = {json.dumps(name)}", f"command = {json.dumps(command)}", "[env]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in (env or {}).items()]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def tiny_config(folder: Path) -> Path:
    return agent_config(folder, "tiny", ["${python}", str(TINY), "${instruction}"],
                        {"OPENAI_BASE_URL": "${openai_base_url}", "OPENAI_API_KEY": "${api_key}",
                         "TINY_MODEL": "${model}"})


def bench(*args: object) -> int:
    return cli.main([str(a) for a in args])


def rows(out: Path) -> list[dict]:
    """The finished trials, as the harness reads them (a torn line skipped, the last line of a trial kept)."""
    return results.load(out / "results.jsonl")


def kill_tree(harness: subprocess.Popen, out: Path) -> None:
    """After a test of a harness in its own session: nothing of it may outlive the test, whatever failed."""
    for pid_file in out.glob("trials/*/*/*/logs/*.pid"):
        with contextlib.suppress(ValueError, OSError):
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)  # agents run in sessions of their own
    with contextlib.suppress(OSError):  # its workers too, even when the harness itself is already gone
        os.killpg(harness.pid, signal.SIGKILL)
    harness.wait()


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return tiny_config(tmp_path)


@pytest.fixture
def upstream():
    """An endpoint that answers GET /models as an OpenAI-compatible API does: the bench checks --upstream before any
    trial. The agents of these tests never ask it anything."""
    with ScriptedServer([]) as server:
        yield server.url
