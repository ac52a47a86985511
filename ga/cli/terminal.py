"""The terminal: progress on stderr, the final answer on stdout, questions and approvals when a human is there.

On a terminal, what is under way (the model's reply, running tools) is shown at the bottom with a spinner and the
elapsed time, and erased when done; everything else is printed once, as whole lines. Anywhere else (pipes, CI
logs, --json) stderr gets plain lines only: no spinner frames, no cursor movement, no colour.

Whatever the model or a tool said is filtered by ga.tooling.screen.clean and printed as rich Text, never as markup.
A reply's text is shown once: as progress when tools follow it, as the answer when it is the final one.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text

from ga.cli.board import Board, Running, call_line
from ga.cli.pipes import reader_gone
from ga.cli.questions import approve_prompt, ask_prompt, preview
from ga.cli.rendering import show_answer
from ga.invocation import invocation
from ga.protocols import ToolCall, Usage
from ga.tooling import screen
from ga.tooling.redact import redact
from ga.tooling.spec import ToolResult

log = logging.getLogger(__name__)

STAGES = {0: "escalation over: {why}",
          2: "escalation stage 2 ({why}): the model is told to stop retrying and change its approach",
          3: "escalation stage 3 ({why}): asking the human for help"}
ERROR_LINE_CHARS = 200
DIFF_LINES = 40
"""A diff up to this many lines is shown whole after its tool's line; a longer one as its counts."""


class _Console(Console):
    def on_broken_pipe(self) -> None:  # rich's own exits: lost progress lines (`2>&1 | head -1`) must not end a run
        self.quiet = True
        reader_gone(self.file)


class Terminal:
    """Everything ga shows goes through these methods: text, turn, tool_start, live, tool_done, usage, notice, info,
    log_line, retry, ask, approve, answer, close. Quiet (-q): only the answer, errors and what asks the human."""

    def __init__(self, *, quiet: bool = False, err: TextIO | None = None, out: TextIO | None = None,
                 raw: bool = False):
        self.err = _Console(file=err or sys.stderr, highlight=False, soft_wrap=True, markup=False, emoji=False)
        self.out = out or sys.stdout
        self.quiet = quiet
        self.raw = raw
        self._held = ""
        """A reply held while the check runs: the answer when the check passes, shown then; else a turn's text."""
        self.human_s = 0.0
        """Seconds spent waiting on the human (questions, approvals): not part of a tool call's time."""
        """--raw: the answer as the model wrote it, never rendered as Markdown."""
        self.fancy = self.err.is_terminal and not self.err.is_dumb_terminal
        """A real terminal on stderr: spinners allowed. Otherwise only whole plain lines."""
        self.running: dict[str, Running] = {}
        self.waiting: float | None = None
        """When the current model request started (None: no request under way)."""
        self.reply = ""
        """The current reply's text, not shown for good yet (it may turn out to be the final answer)."""
        self._clean = screen.CleanStream()
        self._usage: Usage | None = None
        self._lock = threading.RLock()
        self._live: Live | None = None
        self._approved = ""
        """The change the human just approved: its diff is not shown a second time when the tool is done."""
        self.run_id = ""
        """The run being shown (its header names it): hints name it."""

    # the model's reply

    def turn(self, number: int) -> None:
        """A model request starts."""
        with self._lock:
            self.reply, self._held = self._held + self.reply, ""  # a reply whose check failed was no answer
            self._commit()
            self.waiting = time.monotonic()
            self._refresh()

    def text(self, chunk: str) -> None:
        """Reply text as it arrives."""
        with self._lock:
            self.reply += self._clean.feed(chunk)
            self._refresh()

    def retry(self, text: str) -> None:
        """The request is sent again: the text streamed so far comes again, so it is dropped."""
        with self._lock:
            self.reply, self._clean = "", screen.CleanStream()
            self.warn(text)

    def usage(self, usage: Usage) -> None:
        """A reply is complete; its token line is shown after its text."""
        with self._lock:
            self.reply += self._clean.flush()
            self.waiting, self._usage = None, usage
            self._refresh()

    def _commit(self) -> None:
        """The pending reply text (it was not the final answer) and its token line, for good."""
        text, self.reply = self.reply.strip("\n"), ""
        if text and not self.quiet:
            self._print(Text(text, style="dim"))
        if self._usage is not None and not self.quiet:
            u, self._usage = self._usage, None
            cached = f" ({u.cached_tokens:,} cached)" if u.cached_tokens else ""
            self._print(Text(f"· turn {u.requests} · {u.prompt_tokens:,} in{cached} / {u.completion_tokens:,} out "
                             "tokens", style="dim"))

    # tools

    def tool_start(self, call: ToolCall, args: dict | None = None) -> None:
        with self._lock:
            if call.name == "check":  # the reply it checks may be the answer: shown once, by answer() or later
                self._held, self.reply = self.reply, ""
            self._commit()
            running = self.running[call.id] = Running(call_line(call, args))
            if not self.fancy and not self.quiet:
                self._print(Text.assemble(("→ ", "cyan"), running.line))
                running.header = True
            self._refresh()

    def live(self, text: str) -> None:
        """A running tool's output, as it arrives (already cleaned by the runner; cleaned again, it is the same)."""
        with self._lock:
            running = next(reversed(self.running.values()), None) if self.running else None
            if self.quiet:
                return
            if running is None:
                self._print(Text(screen.clean(text).rstrip("\n"), style="dim"))
                return
            if not running.header:
                self._print(Text.assemble(("▸ ", "cyan"), running.line))
                running.header = True
            lines = (running.partial + screen.clean(text)).split("\n")
            running.partial = lines.pop()
            if lines:
                self._print(Text("\n".join(lines), style="dim"))
            self._refresh()

    def tool_done(self, call: ToolCall, result: ToolResult) -> None:
        with self._lock:
            self._commit()
            running = self.running.pop(call.id, None) or Running(call_line(call))
            if self.quiet:
                self._refresh()
                return
            if running.partial:
                self._print(Text(running.partial, style="dim"))
            mark = Text("✗", style="red") if result.is_error else Text("✓", style="green")
            took = Text(f" {result.details.get('elapsed', 0):.2f}s", style="dim")
            line = running.line if not running.header or not self.fancy else Text(running.line.plain.split(" ")[0],
                                                                                style="bold")
            edited = Text(" (your edit)", style="yellow") if result.details.get("edited") else ""
            self._print(Text.assemble(mark, " ", line, edited, took))
            if result.is_error and result.content:
                self._print(Text(f"  {screen.one_line(result.said(), ERROR_LINE_CHARS, keep_last=True)}", style="red"))
            if why := result.details.get("sandbox_blocked"):  # what the model is told, in one line for the user
                self._print(Text(f"  the sandbox stopped it: {why} (see `GA_SANDBOX_NET`, `GA_SANDBOX_PORTS`, "
                                 "--no-sandbox)", style="yellow"))
            if result.details.get("diff") and not self.quiet and result.details["diff"] != self._approved:
                self._print(self._diff(result.details))
            self._refresh()

    def _diff(self, details: dict) -> Text:
        """A change's diff in colour; a long one (a rewrite) as its line counts and where the whole diff is."""
        diff = details["diff"]
        if diff.count("\n") <= DIFF_LINES or "removed" not in details:
            return preview(diff)
        where = f"{invocation()} runs show {self.run_id} --diffs" if self.run_id else "the run's trajectory"
        return Text(f"  -{details['removed']}/+{details['added']} lines; the whole diff: {where}", style="cyan")

    # lines

    def notice(self, text: str, *, error: bool = False) -> None:
        """A line of progress (`· `); `error`: what went wrong with the run (its end, an unverified answer), marked
        as a warning (`! `) and shown even when quiet."""
        if error:
            self._line(("! ", "yellow"), text, always=True)
        else:
            self._line(("· ", "dim"), text)

    def warn(self, text: str) -> None:
        """Something that may need the user's attention while the run goes on (a retry, an escalation stage)."""
        self._line(("! ", "yellow"), text)

    def hint(self, text: str) -> None:
        """What to type next (`resume with: ...`), after the outcome it belongs to: shown even when quiet."""
        self._line(("", ""), text, always=True, style="dim")

    def _line(self, mark: tuple[str, str], text: str, *, always: bool = False, style: str = "") -> None:
        with self._lock:
            if self.waiting is None:  # a finished reply's text comes before what is said about it
                self._commit()
            if always or not self.quiet:
                self._print(Text.assemble(mark, (screen.clean(redact(text)), style)))

    def info(self, text: str) -> None:
        """A line about the run itself (its id, model, workspace)."""
        with self._lock:
            if not self.quiet:
                self._print(Text(screen.clean(redact(text)), style="dim"))

    def log_line(self, text: str) -> None:
        """A log record (a warning; with -v, one of ga's decisions), above the live region."""
        with self._lock:
            self._print(Text(screen.clean(redact(text)), style="dim"))

    def started(self, *, run_id: str, task: str, model: str, workdir: str, mode: str, resumed: bool,
                model_settings: str = "default", check: str = "", autonomous: str = "", sandbox: bool = False,
                sandbox_why: str = "") -> None:
        self.run_id = run_id
        state = ("sandbox on" if sandbox else "sandbox off") + (f" ({sandbox_why})" if sandbox_why else "")
        extra = "".join([f" · {model_settings}-model settings" if model_settings != "default" else "",
                         f" · check: {check}" if check else "", f" · autonomous ({autonomous})" if autonomous else "",
                         f" · {state}"])
        self.info(f"run {run_id} · {model} · {workdir} · {mode} mode{extra}")

    def stage(self, stage: int, why: str, previous: int) -> None:
        """Stages 2 and 3, and their end: an ordinary failure (`ls missing`) and its fix are already on the tool's
        own line."""
        if stage >= 2 or (stage == 0 and previous >= 2):
            self.warn(STAGES[stage].format(why=why))
        else:
            log.info("escalation stage %d → %d: %s", previous, stage, why)

    # the human

    def human_seconds(self) -> float:
        return self.human_s

    def ask(self, question: str, candidates: list[str]) -> str:
        with self._lock, self._paused():
            self._commit()
            return ask_prompt(self.err, question, candidates)

    def approve(self, title: str, text: str, editable: str | None = None, remember: str = "") -> tuple[str, str]:
        """Show a change and ask: ("approve", "" or the scope `remember` offers), ("reject", the reason given, maybe
        ""), or ("edit", new text of `editable`, which defaults to `text`)."""
        with self._lock, self._paused():
            self._commit()
            decision, given = approve_prompt(self.err, title, text, text if editable is None else editable, remember)
            self._approved = text if decision == "approve" else ""
            return decision, given

    # the end

    def answer(self, status: str, text: str) -> None:
        """The final answer, once: on stdout, rendered when stdout is a terminal (its streamed text is not repeated)."""
        text = redact(text)
        with self._lock:
            self.reply = self._held = ""  # the streamed preview of this very answer
            self._commit()
            self.close()
            show_answer(self.out, text, raw=self.raw)

    def close(self) -> None:
        """Stop the live region; what was pending is printed."""
        with self._lock:
            self.running.clear()
            self.waiting = None
            self._commit()
            self._stop()

    # machinery

    def _print(self, text: Text) -> None:
        self.err.print(text)

    def _refresh(self) -> None:
        if not self.fancy or self.quiet:
            return
        busy = self.running or self.waiting is not None or (self.reply and not self.quiet)
        if busy and self._live is None:
            self._live = Live(Board(self), console=self.err, refresh_per_second=10, transient=True,
                              redirect_stdout=False, redirect_stderr=False)
            self._live.start(refresh=True)
        elif not busy:
            self._stop()

    def _stop(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()

    @contextlib.contextmanager
    def _paused(self) -> Iterator[None]:
        """The live region goes away while the human reads and types (and while an editor owns the screen); the time
        it takes is counted apart (human_s), so a call's time is its own, not the human's."""
        self._stop()
        began = time.monotonic()
        try:
            yield
        finally:
            self.human_s += time.monotonic() - began
            self._refresh()
