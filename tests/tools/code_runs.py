"""Calling code_run the way the loop does, for the tests of its machinery (tools/process, tools/guard)."""

from __future__ import annotations

import json

import psutil

from ga.protocols import ToolCall
from ga.tooling.dispatch import Dispatcher
from tools.code_run import SPEC


def run(ctx, script: str, **args):
    return SPEC.run({"script": script, **args}, ctx)


def dispatch(ctx, *, repairs: bool = False, **args):
    """One call through the dispatcher; repairs=True: with a small model's repairs (ModelSettings.tool_repairs)."""
    call = ToolCall(id="call_1", name="code_run", arguments=json.dumps(args))
    return Dispatcher([SPEC], repairs=repairs).dispatch([call], ctx)[0]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
