"""The seams: what the loop needs from a model and from the terminal. Implementations don't inherit."""

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
    repeating one block (ga/llm_stream.py)."""
    usage: Usage = field(default_factory=Usage)
    estimated_usage: bool = False
    """True when the server reported no usage and the counts are estimates."""


class Model(Protocol):
    def complete(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None] | None = None,
                 *, deadline: float | None = None) -> Reply:
        """One Chat Completions request (retried as a whole on transient failures). `deadline` (time.monotonic())
        is when the run must stop: the request ends by then, raising LimitReached."""
        ...


class UI(Protocol):
    """The terminal. In autonomous mode ask/approve are never called (the dispatcher decides)."""

    def ask(self, question: str, candidates: list[str]) -> str:
        """Ask the human; numbered candidates, free text allowed."""
        ...

    def approve(self, title: str, text: str, editable: str | None = None) -> tuple[str, str]:
        """Show `text` (a diff, a command as written) and ask before the change. Returns ("approve", ""),
        ("reject", the human's reason or ""), or ("edit", the new version of `editable`, which defaults to `text`)."""
        ...

    def live(self, text: str) -> None:
        """Stream a tool's live output (e.g. a running program) to the terminal."""
        ...

    def notice(self, text: str) -> None:
        """One line of progress (a stage change, a restarted browser...)."""
        ...
