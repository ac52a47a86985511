"""Shared fixtures: a real workspace and GA_HOME in tmp, a ToolContext, a scripted terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from ga.config import load_settings
from ga.dispatch import ToolContext


class ScriptedTerminal:
    """Stands in for the human at the terminal: answers from a list and records what it was shown."""

    def __init__(self, answers: list | None = None):
        self.answers = list(answers or [])
        self.asked: list[tuple] = []
        self.live_output: list[str] = []
        self.notices: list[str] = []

    def ask(self, question: str, candidates: list[str]) -> str:
        self.asked.append(("ask", question, candidates))
        return self.answers.pop(0)

    def approve(self, title: str, text: str, editable: str | None = None) -> tuple[str, str]:
        self.asked.append(("approve", title, text))
        return self.answers.pop(0)

    def live(self, text: str) -> None:
        self.live_output.append(text)

    def notice(self, text: str) -> None:
        self.notices.append(text)


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
