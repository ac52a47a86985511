"""Questions and approvals at the terminal: the answer line, a reason with a reject, a change edited in $EDITOR.
An edit that cannot be used is said at the prompt, which asks again: nothing typed here reaches the model as an error.
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

WORDS = {word: kind for kind, words in (("approve", "a approve y yes"), ("reject", "r reject n no"), ("edit", "e edit"),
                                         ("tool", "t tool always"), ("run", "l all")) for word in words.split()}
"""What an approval takes; confirm mode also "tool" (its calls) and "run" (every change) for the rest of the run."""
DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("+", "green"), ("-", "red"), ("@@", "cyan"))
END_OF_TEXT = "."  # without $EDITOR, typed text ends with a line holding only this (or Ctrl-D)


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
    """On a terminal, wait in 0.2 s steps: a Ctrl-C taken by a thread that is not Python's would otherwise be heard
    only at the next key. (A tty hands out one line per read: nothing waits in Python's buffer.)"""
    try:
        if not sys.stdin.isatty():
            return
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):  # replaced or closed stdin: the read says so
        return
    while not select.select([fd], [], [], 0.2)[0]:
        pass


def ask_prompt(console: Console, question: str, candidates: list[str]) -> str:
    if question:
        console.print(Text.assemble(("? ", "bold magenta"), screen.clean(question)))
    for i, candidate in enumerate(candidates, 1):
        console.print(Text(f"  {i}. {screen.one_line(candidate, 200)}"))
    return read_line(console, "[number or your answer] > " if candidates else "[your answer] > ")


def approve_prompt(console: Console, title: str, shown: str, editable: str, remember: str = "") -> tuple[str, str]:
    """As UI.approve (ga/protocols.py), and ("pause", "") when input ended (Ctrl-D)."""
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
        kind = WORDS.get(word.lower(), "")
        if kind == "approve":
            return "approve", ""
        if remember and kind in ("tool", "run"):
            what = f"every {remember} call" if kind == "tool" else "every change"
            console.print(Text(f"Approved, and {what} of this run from now on.", style="dim"))
            return "approve", kind
        if kind == "reject":
            try:
                reason = rest.strip() or read_line(console, "reason, for the model (Enter: none) > ").strip()
            except EOFError:
                reason = ""
            return "reject", reason
        if kind == "edit":
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
    styles = DIFF_STYLES if lines[0].startswith("--- ") else ()
    text = Text()
    for line in lines:
        text.append(line + "\n", style=next((style for start, style in styles if line.startswith(start)), ""))
    text.rstrip()
    return text
