"""The terminal as a person sees it: prompts keep their brackets, answers come from stdin."""

from __future__ import annotations

import io
import sys

from ga.ui import Terminal


def test_prompts_show_their_bracketed_choices(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("x\nr\n2\n"))
    terminal = Terminal()
    assert terminal.approve("code_run", "rm -rf build") == ("reject", "rm -rf build")
    assert terminal.ask("Which?", ["a", "b"]) == "2"
    err = capsys.readouterr().err
    assert "[a]pprove / [r]eject / [e]dit >" in err and "[number or your answer] >" in err
    assert "1. a" in err and "2. b" in err
