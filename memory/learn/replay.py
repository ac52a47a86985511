"""The replayer extraction runs scripts with: a code_run call through the real dispatcher (argument checks, the command
policy, unattended: what would need a human is refused) in the sandbox, in a throw-away workspace, and offline
whatever GA_SANDBOX_NET says (a learnt script must not post the run's message a second time).

code_run's spec and the sandbox's probe are handed in by the composition root (ga/cli): memory/ never imports tools/."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from ga.config import Settings
from ga.protocols import ToolCall
from ga.runs.folder import Run
from ga.tooling.dispatch import Dispatcher
from ga.tooling.spec import ToolContext, ToolSpec


class _Unattended:
    """The UI of a replay: nothing is shown (every other UI method does nothing), and nobody is there to answer."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *_args, **_kwargs: None

    def human_seconds(self) -> float:
        return 0.0

    def ask(self, question: str, candidates: list[str]) -> str:
        raise EOFError

    def approve(self, title: str, text: str, editable: str | None = None, remember: str = "") -> tuple[str, str]:
        return "deny", ""


class SandboxReplayer:
    def __init__(self, settings: Settings, run: Run, code_run: ToolSpec, sandbox_problem: Callable[[], str]):
        self.settings, self.run_dir = settings, run.folder
        self.dispatcher = Dispatcher([code_run])
        self.sandbox_problem = sandbox_problem
        self.count = 0

    def problem(self) -> str:
        return self.sandbox_problem()

    def run(self, command: str, root: Path, cwd: str, timeout: float) -> tuple[bool, str]:
        self.count += 1
        settings = dataclasses.replace(self.settings, workdir=root, autonomous=True, sandbox=True, mode="normal",
                                       allow_paths=[], check="")
        ctx = ToolContext(settings=settings, run_dir=self.run_dir, ui=_Unattended(), interactive=False, state={},
                          network=False)
        call = ToolCall(id=f"replay_{self.count}", name="code_run",
                        arguments=json.dumps({"script": command, "type": "bash", "cwd": cwd,
                                              "timeout": max(1, int(timeout))}))
        try:
            [result] = self.dispatcher.dispatch([call], ctx)
        finally:
            ctx.close()
        if result.details.get("killed") == "interrupted":
            raise KeyboardInterrupt  # Ctrl-C skips learning, not just this replay
        return not result.is_error, result.content
