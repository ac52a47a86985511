"""The seams: what the loop needs from a model, from the terminal and from long-term memory. Implementations don't
inherit; the CLI (ga/cli/compose.py) builds them and injects them into the loop."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(kw_only=True)
class ToolCall:
    id: str
    name: str
    arguments: str | dict | None
    """Raw arguments as the model sent them: normally a JSON string."""


@dataclass(kw_only=True)
class Usage:
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens the server read from its prompt cache (a part of prompt_tokens), when it says so."""

    def add(self, other: Usage) -> None:
        self.requests += other.requests
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(kw_only=True)
class Reply:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    """The server's (stop, tool_calls, length, content_filter), or "repetition": ga stopped a reply that kept
    repeating one block (ga/model/stream.py)."""
    usage: Usage = field(default_factory=Usage)
    estimated_usage: bool = False
    """True when the server reported no usage and the counts are estimates."""
    reasoning: str = ""
    """A reasoning model's thinking (ga/model/stream.py): kept in the trajectory, never in `content`."""


class Model(Protocol):
    def complete(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None] | None = None,
                 *, deadline: float | None = None) -> Reply:
        """One Chat Completions request (retried as a whole on transient failures). `deadline` (time.monotonic())
        is when the run must stop: the request ends by then, raising LimitReached."""

    def context_window(self) -> int | None:
        """The model's context length as the server reports it, or None when it does not say."""


class UI(Protocol):
    """The terminal, or what stands in for it (--jsonl's event stream). Every method the loop and the tools call.
    In autonomous mode ask/approve are never called (the dispatcher decides)."""

    def turn(self, number: int) -> None:
        """A model request starts (the run's `number`-th)."""

    def human_seconds(self) -> float:
        """Seconds spent so far waiting on the human (questions, approvals): not part of a tool call's time."""

    def text(self, chunk: str) -> None:
        """Reply text as it streams in."""

    def retry(self, text: str) -> None:
        """The request is sent again (`text` says why): what streamed of the reply so far comes again."""

    def usage(self, usage: Usage) -> None:
        """A reply is complete; `usage` is the run's total so far."""

    def tool_start(self, call: ToolCall, args: dict) -> None:
        """A tool call starts, with the arguments it runs with."""

    def live(self, text: str) -> None:
        """A running tool's output as it comes (e.g. a program's)."""

    def tool_done(self, call: ToolCall, result: ToolOutcome) -> None:
        """A tool call ended."""

    def stage(self, stage: int, why: str, previous: int) -> None:
        """The escalation stage changed from `previous` (0: over)."""

    def notice(self, text: str) -> None:
        """One line of progress (a restarted browser, a compaction step...)."""

    def ask(self, question: str, candidates: list[str]) -> str:
        """Ask the human; numbered candidates, free text allowed."""

    def approve(self, title: str, text: str, editable: str | None = None, remember: str = "") -> tuple[str, str]:
        """Show `text` (a diff, a command as written) and ask before the change. Returns ("approve", ""),
        ("reject", the human's reason or ""), or ("edit", the new version of `editable`, which defaults to `text`).
        `remember` (confirm mode: the tool's name) also offers to approve that tool, or every change, for the run:
        ("approve", "tool") or ("approve", "run")."""


class ToolOutcome(Protocol):
    """A tool's result as the seams see it (ga.tooling.spec.ToolResult)."""

    content: str
    details: dict
    is_error: bool


class Memory(Protocol):
    """Long-term memory as one run sees it (memory/ implements it; none: a run without memory)."""

    def system_section(self) -> str:
        """The L1 index for the stable system prompt ("" when memory is empty)."""

    def task_listing(self, task: str) -> str:
        """The SOPs and facts relevant to this task, for the end of the system prompt ("" when none is)."""

    def before(self, tool: str, args: dict, state: dict) -> list[str]:
        """Before a call runs (its arguments parsed): the workspace is kept as it was before its first change, and
        an SOP's script being run is noted, for learning. Returns the SOPs whose scripts it runs (the user is told)."""

    def observe(self, tool: str, result: ToolOutcome, state: dict) -> None:
        """Every tool result, before the model sees it: SOP reads are noted in `state` (the run's tool state) for the
        ledger, and memory writes guarded (secrets out, provenance in); a note for the model goes into the result."""

    def briefing(self, task: str) -> str:
        """What start_long_term_update hands the model: the memory rules, the index, the SOPs closest to `task`."""
