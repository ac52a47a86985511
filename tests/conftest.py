"""Shared fixtures: a real workspace and GA_HOME in tmp, a ToolContext, a scripted terminal."""

from __future__ import annotations

import shutil
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from ga.config import load_settings
from ga.tooling.spec import ToolContext
from tests.scripted import ScriptedTerminal


@pytest.fixture(autouse=True, scope="session")
def default_sigint():
    """A pytest started in the background (`pytest &` in a script, a CI step) inherits SIGINT as ignored, and so
    would every program a test starts: the Ctrl-C tests would send a signal nobody hears. Give the suite the handler
    a shell in a terminal gives it (a handled signal is reset to its default in the programs it starts)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def make_ctx(tmp_path: Path, workspace: Path):
    """make_ctx(**settings_overrides, interactive=False, answers=[...]) -> ToolContext."""
    run_id = f"test-run-{uuid.uuid4().hex[:8]}"  # one a test: its own cgroup (ga-RUN_ID) when tests run in parallel

    def make(*, interactive: bool = False, answers: list | None = None, **overrides) -> ToolContext:
        overrides.setdefault("workdir", workspace)
        settings = load_settings(env={}, home=tmp_path / "home", **overrides)
        run_dir = settings.runs_dir / run_id
        run_dir.mkdir(parents=True, exist_ok=True)
        return ToolContext(settings=settings, run_dir=run_dir, ui=ScriptedTerminal(answers), interactive=interactive)

    return make


THEIRS = "# the user's own\nMAILTO=\"\"\n17 4 * * * echo 'not ga\\'s' >/dev/null\n"


@pytest.fixture
def crontab():
    """The user's crontab set to lines of their own for the test, and put back as it was after it."""
    program = shutil.which("crontab")
    assert program, "crontab is missing: apt-get install cron (the README's test command installs it)"
    before = subprocess.run([program, "-l"], capture_output=True, text=True, check=False)
    subprocess.run([program, "-"], input=THEIRS, text=True, check=True)
    yield lambda: subprocess.run([program, "-l"], capture_output=True, text=True, check=True).stdout
    if before.returncode == 0:
        subprocess.run([program, "-"], input=before.stdout, text=True, check=True)
    else:
        subprocess.run([program, "-r"], capture_output=True, check=False)
