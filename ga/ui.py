"""The terminal: progress on stderr with rich; questions and approvals when a human is there."""

from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from ga.dispatch import ToolResult
from ga.protocols import ToolCall, Usage


def summarize(arguments: str | dict | None, limit: int = 70) -> str:
    """A tool call's arguments in one short line: the first few values, cut."""
    try:
        args = arguments if isinstance(arguments, dict) else json.loads(arguments or "{}")
    except json.JSONDecodeError:
        args = {"?": arguments}
    if not isinstance(args, dict):
        args = {"?": args}
    parts = [f"{k}={' '.join(str(v).split())}" for k, v in args.items()]
    text = " ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Terminal:
    def __init__(self, *, quiet: bool = False):
        self.err = Console(stderr=True, highlight=False, soft_wrap=True)
        self.quiet = quiet
        self._streaming = False

    def text(self, chunk: str) -> None:
        """Reply text as it arrives."""
        if not self.quiet:
            self.err.print(escape(chunk), end="", style="dim")
            self._streaming = True

    def _end_stream(self) -> None:
        if self._streaming:
            self.err.print()
            self._streaming = False

    def tool_done(self, call: ToolCall, result: ToolResult) -> None:
        self._end_stream()
        mark = "[red]✗[/]" if result.is_error else "[green]✓[/]"
        took = result.details.get("elapsed", 0)
        self.err.print(f"{mark} [bold]{call.name}[/] {escape(summarize(call.arguments))} [dim]{took:.2f}s[/]")
        if result.is_error:
            self.err.print(f"  [red]{escape(result.content.splitlines()[0][:200] if result.content else '')}[/]")
        if result.details.get("diff") and not self.quiet:
            self.err.print(escape(result.details["diff"]), style="cyan")

    def usage(self, usage: Usage) -> None:
        self._end_stream()
        cached = f" ({usage.cached_tokens:,} cached)" if usage.cached_tokens else ""
        self.err.print(f"[dim]· turn {usage.requests} · {usage.prompt_tokens:,} in{cached} / "
                       f"{usage.completion_tokens:,} out tokens[/]")

    def live(self, text: str) -> None:
        if not self.quiet:
            self.err.print(escape(text), end="", style="dim", markup=True)

    def notice(self, text: str) -> None:
        self._end_stream()
        self.err.print(f"[yellow]![/] {escape(text)}")

    def ask(self, question: str, candidates: list[str]) -> str:
        self._end_stream()
        self.err.print(f"[bold magenta]?[/] {escape(question)}")
        for i, c in enumerate(candidates, 1):
            self.err.print(f"  {i}. {escape(c)}")
        hint = "number or your answer" if candidates else "your answer"
        return self._input(f"[{hint}] > ")

    def approve(self, title: str, text: str) -> tuple[str, str]:
        self._end_stream()
        self.err.print(f"[bold yellow]Approve {escape(title)}?[/]\n{escape(text)}")
        while True:
            choice = self._input("[a]pprove / [r]eject / [e]dit > ").strip().lower()
            if choice in ("a", "approve", "y", "yes"):
                return "approve", text
            if choice in ("r", "reject", "n", "no"):
                return "reject", text
            if choice in ("e", "edit"):
                return "edit", self._input("new version (one line) > ")

    def _input(self, prompt: str) -> str:
        self.err.print(prompt, end="", markup=False)
        line = sys.stdin.readline()
        if not line:
            raise EOFError("no answer: standard input is closed")
        return line.rstrip("\n")

    def answer(self, status: str, text: str) -> None:
        """The final answer: on stdout, rendered when stdout is a terminal."""
        self._end_stream()
        if sys.stdout.isatty():
            Console(highlight=False).print(Markdown(text))
        else:
            sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))
            sys.stdout.flush()
