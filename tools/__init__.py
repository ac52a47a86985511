"""The tools: one module per tool, each exposing SPEC. Only tools that exist are listed."""

from __future__ import annotations

import importlib

from ga.tooling.spec import ToolSpec

TOOL_MODULES = ("file_read", "file_patch", "file_write", "code_run", "web_scan", "web_execute_js",
                "update_working_checkpoint", "start_long_term_update", "ask_user")


def schema(*required: str, **properties: dict) -> dict:
    """A tool's parameters: an object of these properties, `required` among them, and no others."""
    return {"type": "object", "properties": properties, **({"required": list(required)} if required else {}),
            "additionalProperties": False}


def load_tools() -> list[ToolSpec]:
    return [importlib.import_module(f"tools.{name}").SPEC for name in TOOL_MODULES]


def sandbox_problem() -> str:
    """Why code_run's sandbox cannot hold on this host ("" when it can); probed once per process."""
    from tools.guard.sandbox_probe import problem

    return problem()


def hide_own_environment() -> None:
    """Keep ga's own environment (the API key...) out of its children's reach: call once, before any child."""
    from tools.process.environment import hide_own_environment as hide

    hide()


def sweep_run(run_id: str) -> list[int]:
    """Kill what code_run started in this run and left running (at resume, after a crash); returns the pids."""
    from tools.process.lifetime import sweep_run as sweep

    return sweep(run_id)
