"""The terminal as a person sees it: prompts keep their brackets, answers come from stdin, nothing said is obeyed."""

from __future__ import annotations

import io
import sys

from ga.cli.terminal import Terminal
from ga.protocols import ToolCall, Usage
from ga.tooling.spec import ToolResult


def terminal() -> tuple[Terminal, io.StringIO, io.StringIO]:
    err, out = io.StringIO(), io.StringIO()
    return Terminal(err=err, out=out), err, out


def test_prompts_show_their_bracketed_choices_and_a_reject_carries_its_reason(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("x\nr\ntoo risky\nr no tests yet\n2\n"))
    t, err, _ = terminal()
    assert t.approve("code_run", "rm -rf build") == ("reject", "too risky")
    assert t.approve("code_run", "rm -rf build") == ("reject", "no tests yet")
    assert t.ask("Which?", ["a", "b"]) == "2"
    shown = err.getvalue()
    assert "[a]pprove / [r]eject / [e]dit >" in shown and "[number or your answer] >" in shown
    assert "1. a" in shown and "2. b" in shown and "Type a, r" in shown  # "x" was not understood


def test_edit_without_an_editor_reads_lines_until_a_dot_and_stdin_closing_pauses(monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO("e\nprint('a')\nprint('b')\n.\n"))
    t, _, _ = terminal()
    assert t.approve("code_run", "print(1)", "print(1)") == ("edit", "print('a')\nprint('b')")
    assert t.approve("code_run", "print(1)") == ("pause", "")  # Ctrl-D: the run pauses at the approval


def test_a_failing_editor_is_told_at_the_prompt_and_asked_again(monkeypatch):
    monkeypatch.setenv("EDITOR", "false")
    monkeypatch.setattr(sys, "stdin", io.StringIO("e\na\n"))
    t, err, _ = terminal()
    assert t.approve("file_write", "+x", "x") == ("approve", "")
    assert "The editor exited with code 1; nothing was changed." in err.getvalue()


def test_names_arguments_and_results_are_shown_as_written_never_as_markup_or_control():
    t, err, _ = terminal()
    call = ToolCall(id="1", name="oops[/]", arguments='{"a": "[bold]x\\u001b]0;T\\u0007 :smile:"}')
    t.tool_start(call, {"a": "[bold]x\x1b]0;T\x07 :smile:"})
    t.tool_done(call, ToolResult(content="Unknown tool 'oops[/]'\x1b[2J", is_error=True))
    t.text("[red]hi[/] \x1b[8mhidden")
    t.usage(Usage(requests=1, prompt_tokens=10, completion_tokens=2))
    t.notice("[/] \x1b]52;c;eA==\x07done")
    lines = err.getvalue().splitlines()
    assert lines == ["→ oops[/] a=[bold]x :smile:", "✗ oops[/] a=[bold]x :smile: 0.00s", "  Unknown tool 'oops[/]'",
                     "[red]hi[/] hidden", "· turn 1 · 10 in / 2 out tokens", "· [/] done"]


def test_the_final_answer_replaces_its_streamed_text_and_goes_to_stdout_as_is():
    t, err, out = terminal()
    t.turn(1)
    t.text("The answer")
    t.text(" is 42.")
    t.usage(Usage(requests=1, prompt_tokens=5, completion_tokens=3))
    t.answer("done", "The answer is 42.")
    assert out.getvalue() == "The answer is 42.\n"
    assert err.getvalue() == "· turn 1 · 5 in / 3 out tokens\n"


def test_text_followed_by_tools_is_progress_and_a_retry_drops_the_half_reply():
    t, err, _ = terminal()
    t.turn(1)
    t.text("half a rep")
    t.retry("500 server error; retrying in 1.0 s")
    t.text("Reading the file.")
    t.usage(Usage(requests=1, prompt_tokens=5, completion_tokens=3))
    t.tool_start(ToolCall(id="1", name="file_read", arguments='{"path": "a"}'), {"path": "a"})
    assert err.getvalue().splitlines() == ["! 500 server error; retrying in 1.0 s", "Reading the file.",
                                           "· turn 1 · 5 in / 3 out tokens", "→ file_read path=a"]
