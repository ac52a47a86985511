"""code_run: run a python or bash script — exact, bounded in time and output, guarded by the command policy. What
runs it (tools/process/execute.py), the policy and the sandbox are imported on its first call, not before."""

from __future__ import annotations

from ga.tooling.permissions import SideEffect
from ga.tooling.spec import ToolContext, ToolResult, ToolSpec
from tools import sandbox_problem, schema
from tools.process import DEFAULT_TIMEOUT, MAX_TIMEOUT

DESCRIPTION = (
    "Run a python or bash script (stdin closed); returns the exit code and merged output. After `timeout` s "
    "the whole process tree is killed. Long output: you get the tail and the full output's path. "
    "Destructive commands are refused or need approval.")

PARAMETERS = schema("script", script={"type": "string"},
                    type={"type": "string", "enum": ["python", "bash"], "default": "python"},
                    timeout={"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT, "default": DEFAULT_TIMEOUT},
                    cwd={"type": "string", "description": "default: workspace"})


def run(args: dict, ctx: ToolContext) -> ToolResult:
    from tools.process import execute

    return execute.run(args, ctx)


def check(args: dict, ctx: ToolContext) -> dict:
    """The command policy's verdict on the script (tools/guard/approval.py)."""
    from tools.guard import approval

    return approval.check(args, ctx)


def shell_sent_as_python(args: dict) -> dict:
    """A small model's shell command sent as Python runs as bash (ModelSettings.tool_repairs; otherwise its
    SyntaxError carries the hint). The command policy then checks it as bash."""
    from tools.process import hints

    if args.get("type", "python") == "python" and hints.shell_command(args.get("script")):
        return {**args, "type": "bash"}
    return args


def plan_confinement(ctx: ToolContext) -> str:
    """Plan mode: code runs in the sandbox with the workspace read-only and no network, or not at all."""
    reason = sandbox_problem()
    return f"the sandbox that makes the workspace read-only cannot hold on this host ({reason})" if reason else ""


SPEC = ToolSpec(name="code_run", description=DESCRIPTION, parameters=PARAMETERS,
                side_effect=SideEffect.SYSTEM_CHANGE, run=run, check=check, editable="script",
                in_plan_mode=plan_confinement,
                repair=shell_sent_as_python, repaired="the script is a shell command, not Python")
