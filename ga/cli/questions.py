"""Questions and approvals at the terminal: the answer line, a reason with a reject, a change edited in $EDITOR.

Everything here talks to a human; nothing typed here reaches the model as an error: an edit that cannot be used
is said so at the prompt, which asks again.
"""

from __future__ import annotations

import os
import select
import shlex
import subprocess
import sys
import tempfile

from rich.console import Console
from rich.text import Text

from ga.tooling import screen

APPROVE = ("a", "approve", "y", "yes")
APPROVE_TOOL = ("t", "tool", "always")
"""Confirm mode: approve this tool's calls for the rest of the run."""
APPROVE_RUN = ("l", "all")
"""Confirm mode: approve every change for the rest of the run."""
REJECT = ("r", "reject", "n", "no")
EDIT = ("e", "edit")
END_OF_TEXT = "."
"""Without $EDITOR, new text is typed at the prompt and ends with a line holding only this (or Ctrl-D)."""


def read_line(console: Console, prompt: str) -> str:
    """One line from stdin after `prompt`; EOFError when stdin is closed."""
    console.print(Text(prompt, style="bold"), end="")
    console.file.flush()
    _wait_for_input()
    line = sys.stdin.readline()
    if not line:
        console.print()  # Ctrl-D left the cursor after the prompt
        raise EOFError("no answer: standard input is closed")
    return line.rstrip("\n")


def _wait_for_input() -> None:
    """On a terminal, wait in short steps: Ctrl-C's SIGINT may be taken by a thread that is not Python's (a numeric
    library's pool), and then a read blocked in the main thread would hear of it only at the next key; a return to
    Python every 0.2 s raises it at once. (A tty hands out one line per read: nothing waits in Python's buffer.)"""
    try:
        if not sys.stdin.isatty():
            return
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):  # replaced or closed stdin: the read says so
        return
    while not select.select([fd], [], [], 0.2)[0]:
        pass


def ask_prompt(console: Console, question: str, candidates: list[str]) -> str:
    console.print(Text.assemble(("? ", "bold magenta"), screen.clean(question)))
    for i, candidate in enumerate(candidates, 1):
        console.print(Text(f"  {i}. {screen.one_line(candidate, 200)}"))
    return read_line(console, "[number or your answer] > " if candidates else "[your answer] > ")


def approve_prompt(console: Console, title: str, shown: str, editable: str, remember: str = "") -> tuple[str, str]:
    """("approve", ""), ("reject", reason or ""), or ("edit", the new text of `editable`); with `remember` (a tool's
    name) also ("approve", "tool"): that tool for the rest of the run, or ("approve", "run"): every change;
    ("pause", "") when input ended (Ctrl-D)."""
    console.print(Text(f"Approve {screen.one_line(title, 200).rstrip('?')}?", style="bold yellow"))
    console.print(preview(shown))
    if remember:
        console.print(Text(f"  or: [t] approve every {screen.one_line(remember, 40)} call of this run · [l] approve "
                           "every change of this run", style="dim"))
    while True:
        try:
            word, _, rest = read_line(console, "[a]pprove / [r]eject / [e]dit > ").strip().partition(" ")
        except EOFError:  # Ctrl-D: the run pauses here, as at a question (ga/tooling/approval.py)
            return "pause", ""
        word = word.lower()
        if word in APPROVE:
            return "approve", ""
        if remember and word in APPROVE_TOOL + APPROVE_RUN:
            scope = "tool" if word in APPROVE_TOOL else "run"
            what = f"every {remember} call" if scope == "tool" else "every change"
            console.print(Text(f"Approved, and {what} of this run from now on.", style="dim"))
            return "approve", scope
        if word in REJECT:
            try:
                reason = rest.strip() or read_line(console, "reason, for the model (Enter: none) > ").strip()
            except EOFError:
                reason = ""
            return "reject", reason
        if word in EDIT:
            edited = edit_text(console, editable)
            if edited is not None:
                return "edit", edited
        elif word:
            console.print(Text(f"Type a, {'t, l, ' if remember else ''}r (optionally followed by a reason) or e.",
                               style="yellow"))


def edit_text(console: Console, text: str) -> str | None:
    """The human's new version of `text`: in $VISUAL/$EDITOR when set, else typed at the prompt. None: no change."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    edited = _in_editor(console, editor, text) if editor else _typed(console)
    if edited is None:
        return None
    if not text.endswith("\n") and edited.endswith("\n") and not edited.endswith("\n\n"):
        edited = edited[:-1]  # editors end the file with a newline the original did not have
    if edited == text:
        console.print(Text("Unchanged; approve it, reject it or edit again.", style="yellow"))
        return None
    return edited


def _in_editor(console: Console, editor: str, text: str) -> str | None:
    fd, path = tempfile.mkstemp(prefix="ga-edit-", suffix=".txt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        try:
            code = subprocess.run([*shlex.split(editor), path], check=False).returncode
        except OSError as e:
            console.print(Text(f"Could not start the editor {editor!r} ($VISUAL/$EDITOR): {e}.", style="yellow"))
            return None
        if code != 0:
            console.print(Text(f"The editor exited with code {code}; nothing was changed.", style="yellow"))
            return None
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    finally:
        os.unlink(path)


def _typed(console: Console) -> str | None:
    console.print(Text(f"Type the new text; end it with a line holding only {END_OF_TEXT} (or Ctrl-D). "
                       "Set $EDITOR to edit in your editor instead.", style="dim"))
    lines = []
    while (line := sys.stdin.readline()) and line.rstrip("\n") != END_OF_TEXT:
        lines.append(line)
    return "".join(lines) if lines else None


def preview(shown: str) -> Text:
    """What is to be approved, cleaned; a unified diff in colour."""
    lines = screen.clean(shown).rstrip("\n").split("\n")
    is_diff = bool(lines) and lines[0].startswith("--- ")
    text = Text()
    for line in lines:
        style = ""
        if is_diff:
            style = ("bold" if line.startswith(("+++", "---")) else "green" if line.startswith("+")
                     else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "")
        text.append(line + "\n", style=style)
    text.rstrip()
    return text
