"""Memory as one run sees it: the Memory seam (ga/protocols.py) over this package, built by the CLI for each run."""

from __future__ import annotations

from pathlib import Path

from ga.config import Settings
from ga.protocols import ToolOutcome
from memory import index, learning, rules


class RunMemory:
    def __init__(self, settings: Settings, *, run_id: str, run_dir: Path, whole_sops: bool = False):
        self.settings, self.run_id, self.run_dir = settings, run_id, run_dir
        self.whole_sops = whole_sops
        """Listed SOPs shown whole (ModelSettings.whole_sops), not only the short ones."""

    def system_section(self) -> str:
        return index.system_section(self.settings.home, self.settings.skills_path)

    def task_listing(self, task: str) -> str:
        return index.task_listing(self.settings.home, task, self.settings.skills_path, whole=self.whole_sops,
                                  workdir=self.settings.workdir)

    def before(self, tool: str, args: dict, state: dict) -> list[str]:
        return learning.before(tool, args, state, settings=self.settings, run_dir=self.run_dir)

    def observe(self, tool: str, result: ToolOutcome, state: dict) -> None:
        learning.observe(tool, result, state, settings=self.settings, run_id=self.run_id, run_dir=self.run_dir)

    def briefing(self, task: str) -> str:
        return rules.briefing(self.settings.home, task, self.settings.skills_path)
