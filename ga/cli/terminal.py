"""The terminal: progress on stderr, the final answer on stdout, questions and approvals when a human is there. On a
terminal, what is under way is shown at the bottom with a spinner and erased when done; elsewhere (pipes, CI, --json)
stderr gets plain whole lines. What the model or a tool said is cleaned and printed as Text, never as markup."""

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
from ga.cli.pipes import reader_gone, show_answer
from ga.cli.questions import approve_prompt, ask_prompt, preview
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
    """Everything ga shows goes through these methods. Quiet (-q): only the answer, errors and what asks the human;
    raw (--raw): the answer as the model wrote it, never rendered as Markdown."""

    def __init__(self, *, quiet: bool = False, err: TextIO | None = None, out: TextIO | None = None,
                 raw: bool = False):
        self.err = _Console(file=err or sys.stderr, highlight=False, soft_wrap=True, markup=False, emoji=False)
        self.out, self.quiet, self.raw = out or sys.stdout, quiet, raw
        self.fancy = self.err.is_terminal and not self.err.is_dumb_terminal  # spinners; else whole plain lines
        self.running: dict[str, Running] = {}
        self.waiting: float | None = None  # when the current model request started
        self.reply = ""  # the current reply's text, not shown for good yet (it may be the final answer)
        self._held = ""  # a reply held while the check runs: the answer if it passes, else a turn's text
        self.human_s = 0.0  # seconds spent waiting on the human: not part of a tool call's time
        self.run_id = ""  # the run being shown: hints name it
        self._clean = screen.CleanStream()
        self._usage: Usage | None = None
        self._lock = threading.RLock()
        self._live: Live | None = None
        self._approved = ""  # the change just approved: its diff is not shown again when the tool is done

    # the model's reply

    def turn(self, number: int) -> None:
        """A model request starts."""
        with self._lock:
            self.reply, self._held = self._held + self.reply, ""  # a reply whose check failed was no answer
            self._commit()
            self.waiting = time.monotonic()
            self._refresh()

    def text(self, chunk: str) -> None:
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
            self.err.print(Text(text, style="dim"))
        if self._usage is not None and not self.quiet:
            u, self._usage = self._usage, None
            cached = f" ({u.cached_tokens:,} cached)" if u.cached_tokens else ""
            self.err.print(Text(f"· turn {u.requests} · {u.prompt_tokens:,} in{cached} / {u.completion_tokens:,} "
                                "out tokens", style="dim"))

    # tools

    def tool_start(self, call: ToolCall, args: dict | None = None) -> None:
        with self._lock:
            if call.name == "check":  # the reply it checks may be the answer: shown once, by answer() or later
                self._held, self.reply = self.reply, ""
            self._commit()
            running = self.running[call.id] = Running(call_line(call, args))
            if not self.fancy and not self.quiet:
                self.err.print(Text.assemble(("→ ", "cyan"), running.line))
                running.header = True
            self._refresh()

    def live(self, text: str) -> None:
        """A running tool's output, as it arrives."""
        with self._lock:
            running = next(reversed(self.running.values()), None) if self.running else None
            if self.quiet:
                return
            if running is None:
                self.err.print(Text(screen.clean(text).rstrip("\n"), style="dim"))
                return
            if not running.header:
                self.err.print(Text.assemble(("▸ ", "cyan"), running.line))
                running.header = True
            lines = (running.partial + screen.clean(text)).split("\n")
            running.partial = lines.pop()
            if lines:
                self.err.print(Text("\n".join(lines), style="dim"))
            self._refresh()

    def tool_done(self, call: ToolCall, result: ToolResult) -> None:
        with self._lock:
            self._commit()
            running = self.running.pop(call.id, None) or Running(call_line(call))
            if not self.quiet:
                self._done_lines(running, result)
            self._refresh()

    def _done_lines(self, running: Running, result: ToolResult) -> None:
        if running.partial:
            self.err.print(Text(running.partial, style="dim"))
        mark = Text("✗", style="red") if result.is_error else Text("✓", style="green")
        took = Text(f" {result.details.get('elapsed', 0):.2f}s", style="dim")
        line = Text(running.line.plain.split(" ")[0], style="bold") if running.header and self.fancy else running.line
        edited = Text(" (your edit)", style="yellow") if result.details.get("edited") else ""
        self.err.print(Text.assemble(mark, " ", line, edited, took))
        if result.is_error and result.content:
            self.err.print(Text(f"  {screen.one_line(result.said(), ERROR_LINE_CHARS, keep_last=True)}", style="red"))
        if why := result.details.get("sandbox_blocked"):  # what the model is told, in one line for the user
            self.err.print(Text(f"  the sandbox stopped it: {why} (see `GA_SANDBOX_NET`, `GA_SANDBOX_PORTS`, "
                                "--no-sandbox)", style="yellow"))
        if (diff := result.details.get("diff")) and diff != self._approved:
            if diff.count("\n") <= DIFF_LINES or "removed" not in result.details:
                self.err.print(preview(diff))
            else:  # a rewrite: its line counts, and where the whole diff is
                where = f"{invocation()} runs show {self.run_id} --diffs" if self.run_id else "the run's trajectory"
                self.err.print(Text(f"  -{result.details['removed']}/+{result.details['added']} lines; the whole "
                                    f"diff: {where}", style="cyan"))

    # lines

    def notice(self, text: str, *, error: bool = False) -> None:
        """A line of progress (`· `); `error`: what went wrong with the run, marked `! ` and shown even when quiet."""
        self._line(("! ", "yellow") if error else ("· ", "dim"), text, always=error)

    def warn(self, text: str) -> None:
        """Something that may need the user's attention while the run goes on (a retry, an escalation stage)."""
        self._line(("! ", "yellow"), text)

    def hint(self, text: str) -> None:
        """What to type next, after the outcome it belongs to: shown even when quiet."""
        self._line(("", ""), text, always=True, style="dim")

    def _line(self, mark: tuple[str, str], text: str, *, always: bool = False, style: str = "") -> None:
        with self._lock:
            if self.waiting is None:  # a finished reply's text comes before what is said about it
                self._commit()
            if always or not self.quiet:
                self.err.print(Text.assemble(mark, (screen.clean(redact(text)), style)))

    def info(self, text: str) -> None:
        """A line about the run itself (its id, model, workspace)."""
        if not self.quiet:
            self.log_line(text)

    def log_line(self, text: str) -> None:
        """A log record, above the live region."""
        with self._lock:
            self.err.print(Text(screen.clean(redact(text)), style="dim"))

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
        """Stages 2 and 3, and their end: an ordinary failure and its fix are already on the tool's own line."""
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
        with self._lock, self._paused():
            self._commit()
            decision, given = approve_prompt(self.err, title, text, text if editable is None else editable, remember)
            self._approved = text if decision == "approve" else ""
            return decision, given

    # the end

    def answer(self, status: str, text: str) -> None:
        """The final answer, once: on stdout, rendered when stdout is a terminal (its streamed text is not repeated)."""
        with self._lock:
            self.reply = self._held = ""  # the streamed preview of this very answer
            self._commit()
            self.close()
            show_answer(self.out, redact(text), raw=self.raw)

    def close(self) -> None:
        """Stop the live region; what was pending is printed."""
        with self._lock:
            self.running.clear()
            self.waiting = None
            self._commit()
            self._stop()

    def _refresh(self) -> None:
        if not self.fancy or self.quiet:
            return
        if self.running or self.waiting is not None or self.reply:
            if self._live is None:
                self._live = Live(Board(self), console=self.err, refresh_per_second=10, transient=True,
                                  redirect_stdout=False, redirect_stderr=False)
                self._live.start(refresh=True)
        else:
            self._stop()

    def _stop(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()

    @contextlib.contextmanager
    def _paused(self) -> Iterator[None]:
        """No live region while the human reads and types; that time is counted apart (human_s)."""
        self._stop()
        began = time.monotonic()
        try:
            yield
        finally:
            self.human_s += time.monotonic() - began
            self._refresh()
