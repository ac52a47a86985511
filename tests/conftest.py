"""Shared fixtures: a real workspace and GA_HOME in tmp, a ToolContext, a scripted terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from ga.config import load_settings
from ga.testing.terminal import ScriptedTerminal
from ga.tooling.spec import ToolContext


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def make_ctx(tmp_path: Path, workspace: Path):
    """make_ctx(**settings_overrides, interactive=False, answers=[...]) -> ToolContext."""

    def make(*, interactive: bool = False, answers: list | None = None, **overrides) -> ToolContext:
        overrides.setdefault("workdir", workspace)
        settings = load_settings(env={}, home=tmp_path / "home", **overrides)
        run_dir = settings.runs_dir / "test-run"
        run_dir.mkdir(parents=True, exist_ok=True)
        return ToolContext(settings=settings, run_dir=run_dir, ui=ScriptedTerminal(answers), interactive=interactive)

    return make
