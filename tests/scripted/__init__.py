"""The scripted fake model: a Chat Completions server (or an in-process model) that answers from a list of steps, and
a terminal nobody sits at. Test machinery, not part of ga: the tests, the bench and outside checks drive the real
loop with it from a checkout (script.py says what a step may hold; `python -m tests.scripted` serves one)."""

from __future__ import annotations

from tests.scripted.script import Script, ScriptedModel, ScriptedServer, tool_call
from tests.scripted.terminal import ScriptedTerminal

__all__ = ["Script", "ScriptedModel", "ScriptedServer", "ScriptedTerminal", "tool_call"]
