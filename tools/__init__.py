"""The tools: one module per tool, each exposing SPEC. Only tools that exist are listed."""

from __future__ import annotations

import importlib

from ga.dispatch import ToolSpec

TOOL_MODULES = (
    "file_read",
    "file_patch",
    "file_write",
    "code_run",
    "web_scan",
    "web_execute_js",
    "update_working_checkpoint",
    "start_long_term_update",
    "ask_user",
)


def load_tools() -> list[ToolSpec]:
    return [importlib.import_module(f"tools.{name}").SPEC for name in TOOL_MODULES]
