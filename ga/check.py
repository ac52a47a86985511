"""--check CMD: the user's definition of done, run when the model gives its final answer.

The command runs as a code_run call would (through the one dispatch path: the command policy, the sandbox, the time
limits), in the workspace, but with no workspace module standing in for the tools that judge the work (Python's safe
path, the workspace last on sys.path: ga/tooling/boundary/check_env.py); the files made or changed during the run
that the check imported or read are listed in its result. Exit 0 ends the run done and verified. Otherwise its output
goes back to the model as a failed step and the run goes on; check failures count in the escalation like any failure,
so the same failure again moves to stage 2, then to stage 3's question to the human (autonomous: the run pauses)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ga.errors import AgentStop
from ga.escalation import Escalation
from ga.protocols import UI, ToolCall
from ga.runs.folder import Run
from ga.tooling.dispatch import Dispatcher
from ga.tooling.spec import ToolContext, error

TIMEOUT = 600
"""Seconds the check may take: code_run's own maximum (the run's --max-time still caps it)."""
FAILED = ("The check `{command}` failed with exit {code}: the task is not done yet. Fix what it reports, then give "
          "your final answer again.\n{output}")
MAX_LISTED = 20
"""Files named in the check's result; the state keeps them all."""
_STATUS = re.compile(r"^\[(?:exit code|killed|interrupted)[^\]]*\]\n?")


class CheckRefused(AgentStop):
    """The check could not run at all (refused by the command policy, or by the user): nothing the model can fix."""


@dataclass(kw_only=True)
class Checked:
    passed: bool
    message: dict | None = None
    """For a failed check: the user message the model reads (its output, the escalation's hint)."""


def run_check(command: str, *, number: int, dispatcher: Dispatcher, ctx: ToolContext, run: Run, ui: UI,
              escalation: Escalation) -> Checked:
    shown = ToolCall(id=f"check_{number}", name="check", arguments={"command": command})
    call = ToolCall(id=shown.id, name="code_run",
                    arguments=json.dumps({"script": command, "type": "bash", "timeout": TIMEOUT}))
    ui.tool_start(shown, {"command": command})
    result = dispatcher.dispatch([call], dataclasses.replace(ctx, check=True))[0]
    made = made_during_run(result.details.get("imported") or [], float(run.state.get("created") or 0))
    if made:
        listed = ", ".join(os.path.relpath(p, ctx.workspace) for p in made[:MAX_LISTED])
        more = f" and {len(made) - MAX_LISTED} more" if len(made) > MAX_LISTED else ""
        result.content += f"\nnote: the check imported or read {len(made)} file(s) made or changed during this run: " \
                          f"{listed}{more}"
    ui.tool_done(shown, result)
    code = result.details.get("exit_code")
    forged = [p for p in made if _tool_module(p, ctx.workspace)]
    if forged:  # the run wrote the tool that judges it (pytest missing: a pytest.py answered `python -m pytest`)
        result.content += ("\nnote: not verified: the check ran " + ", ".join(os.path.relpath(p, ctx.workspace)
                           for p in forged) + ", a test tool's module this run wrote; install the real tool")
    passed = not result.is_error and not forged
    run.state["check_result"] = {"command": command, "passed": passed, "exit_code": code, "run_files": made}
    run.append({"type": "check", "command": command, "passed": passed, "exit_code": code,
                "content": result.content, "details": result.details, "run_files": made})
    if passed:
        return Checked(passed=True)
    if code is None and result.details.get("stage") in ("permission", "arguments"):
        raise CheckRefused(f"The check `{command}` could not run: {result.content}")
    output = _STATUS.sub("", result.content, count=1).strip() or "(no output)"
    said = hashlib.sha1(output.encode()).hexdigest()[:12]  # the same failure again is a repeat, another is progress
    counted = escalation.observe(ToolCall(id=shown.id, name="check", arguments={"command": command, "said": said}),
                                 error(FAILED.format(command=command, output=output, code=f"{code} ({killed})" if (
                                     killed := result.details.get("killed")) else code)))
    return Checked(passed=False, message={"role": "user", "content": counted.content})


TOOL_MODULES = frozenset({"pytest", "_pytest", "py", "unittest", "nose", "nose2", "tox", "coverage", "doctest",
                          "hypothesis", "mypy", "ruff", "flake8", "pylint", "black", "pytest_cov", "pluggy"})
"""Modules of the tools a check runs: one the run wrote must never be what answers for them."""


def _tool_module(path: str, workspace: Path) -> bool:
    """Whether `path` (a file the check imported) is, as the workspace puts it on sys.path, one of TOOL_MODULES."""
    try:
        parts = Path(path).relative_to(workspace).parts
    except ValueError:
        return False
    return bool(parts) and Path(parts[0]).stem in TOOL_MODULES


def made_during_run(paths: list[str], since: float) -> list[str]:
    """The files made or changed since the run began (their ctime, which no program can set back)."""
    made = []
    for path in paths:
        try:
            if os.stat(path).st_ctime >= since:
                made.append(path)
        except OSError:
            continue
    return made
