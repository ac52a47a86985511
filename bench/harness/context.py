"""What an adapter gets for one trial: the task, its folders, the proxy's URLs, the deadline."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness.tasks import Task

ROOT = Path(__file__).resolve().parents[2]
"""ga's checkout."""
DUMMY_KEY = "bench-metered"
"""The key an agent config is rendered with outside a trial (installing, checking); in a trial an agent gets the
proxy's per-trial token instead (TrialContext.api_key)."""


@dataclass(kw_only=True)
class AgentRun:
    exit_code: int | None = 0
    """The agent's last exit code; None when it was killed at the deadline."""
    timed_out: bool = False
    wall_s: float = 0.0
    error: str = ""
    """Why the agent failed to run (could not start, crashed, killed), for the report."""
    self_reported: dict = field(default_factory=dict)
    """What the agent says it used (ga's --json usage...), next to what the proxy metered."""
    answers_given: int = 0
    """Answers the scripted human gave."""
    acted: bool | None = None
    """Whether the agent got the model to act at least once (a command run, a tool called); None: tell it from the
    metered tool calls. An agent that never acted failed on format, not on the work."""
    claimed_done: bool | None = None
    """Whether the agent said it had done the task (ga: status done; another agent: what its config reads, by
    default exit 0); None when it could not say (it never ran, or was killed)."""


@dataclass(kw_only=True)
class TrialContext:
    task: Task
    agent: str
    trial: int
    folder: Path
    """The trial's folder: workspace/, home/, logs/, exchanges.jsonl, result.json."""
    workspace: Path
    home: Path
    """HOME for the agent: fresh per trial, shared by the rounds of a family."""
    ga_home: Path
    """GA_HOME likewise."""
    logs: Path
    instruction: str
    """instruction.md with the trial's placeholders filled."""
    model: str
    openai_url: str
    """The proxy's OpenAI-compatible base URL (ends in /v1)."""
    anthropic_url: str
    """The proxy's Anthropic base URL."""
    api_key: str
    """The key the agent must use: the proxy's token for this trial (it refuses every request without it and puts
    the real key, if any, on what it forwards)."""
    env: dict[str, str]
    """The base environment: PATH, locale, HOME, GA_HOME, TMPDIR, SITE_URL... (no credentials)."""
    deadline: float
    """time.monotonic() by which the agent must be done."""
    max_turns: int = 30
    """Model requests an agent may make (passed to the agents that take a limit)."""
    site_url: str = ""

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())
