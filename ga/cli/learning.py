"""Learning after a run, wired: memory/learn.py with a replayer that runs scripts as code_run does.

A replay is a code_run call through the real dispatcher (argument checks, the command policy, unattended: what
would need a human is refused) in the sandbox, with no network whatever GA_SANDBOX_NET says (a learnt script must
not post the run's message a second time), in a throw-away workspace.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path

from ga.config import Settings
from ga.protocols import ToolCall, ToolOutcome, Usage
from ga.runs.folder import Run


class _Unattended:
    """The UI of a replay: nothing is shown, and nobody is there to answer."""

    def turn(self, number: int) -> None: ...
    def text(self, chunk: str) -> None: ...
    def retry(self, text: str) -> None: ...
    def usage(self, usage: Usage) -> None: ...
    def tool_start(self, call: ToolCall, args: dict) -> None: ...
    def live(self, text: str) -> None: ...
    def tool_done(self, call: ToolCall, result: ToolOutcome) -> None: ...
    def stage(self, stage: int, why: str, previous: int) -> None: ...
    def notice(self, text: str) -> None: ...

    def ask(self, question: str, candidates: list[str]) -> str:
        raise EOFError

    def approve(self, title: str, text: str, editable: str | None = None, remember: str = "") -> tuple[str, str]:
        return "deny", ""


class SandboxReplayer:
    def __init__(self, settings: Settings, run: Run):
        from ga.tooling.dispatch import Dispatcher
        from tools import load_tools

        self.settings, self.run_dir = settings, run.folder
        self.dispatcher = Dispatcher([t for t in load_tools() if t.name == "code_run"])
        self.count = 0

    def problem(self) -> str:
        from tools.guard import sandbox_probe

        return sandbox_probe.problem()

    def run(self, command: str, root: Path, cwd: str, timeout: float) -> tuple[bool, str]:
        from ga.tooling.spec import ToolContext

        self.count += 1
        settings = dataclasses.replace(self.settings, workdir=root, autonomous=True, sandbox=True, mode="normal",
                                       allow_paths=[], check="")
        ctx = ToolContext(settings=settings, run_dir=self.run_dir, ui=_Unattended(), interactive=False, state={})
        call = ToolCall(id=f"replay_{self.count}", name="code_run",
                        arguments=json.dumps({"script": command, "type": "bash", "cwd": cwd,
                                              "timeout": max(1, int(timeout))}))
        try:
            with _no_network():
                [result] = self.dispatcher.dispatch([call], ctx)
        finally:
            ctx.close()
        if result.details.get("killed") == "interrupted":
            raise KeyboardInterrupt  # Ctrl-C skips learning, not just this replay
        return not result.is_error, result.content


@contextlib.contextmanager
def _no_network() -> Iterator[None]:
    from tools.guard.sandbox import NETWORK_ENV

    before = os.environ.get(NETWORK_ENV)
    os.environ[NETWORK_ENV] = "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(NETWORK_ENV, None)
        else:
            os.environ[NETWORK_ENV] = before


def learn_after(ui, run: Run, status: str, settings: Settings) -> None:
    """What the run taught, learned (memory/learn.py)."""
    from memory import learn

    replayer = SandboxReplayer(settings, run) if settings.learn else None
    learn.after_run(settings, run, status, ui, replayer=replayer)
