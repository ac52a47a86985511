"""How a run ends: Done (the model answered and nothing says otherwise), a limit reached, and the Outcome every caller
reads."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ga.config import Settings
from ga.errors import AgentStop, LimitReached
from ga.invocation import invocation
from ga.protocols import Usage


class Done(AgentStop):
    status = "done"
    exit_code = 0


@dataclass(kw_only=True)
class Outcome:
    run_id: str
    status: str
    exit_code: int
    answer: str = ""
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    question: dict | None = None
    """A paused run's question: {"question", "candidates"} (the outbox and the notification carry it)."""
    verified: bool | None = None
    """True: the --check passed. False: the check failed or never passed, or the last tool call failed and nothing
    succeeded after it. None: no check, and nothing failed at the end."""
    model_settings: str = "default"
    """Which per-model settings applied (ga/model/settings.py): "default", or e.g. "small"."""
    model: str = ""
    """The model the run used."""
    duration_s: float | None = None
    """Seconds this invocation worked on the run (a --local model's first provisioning not counted)."""

    def as_json(self) -> dict:
        asked = {"question": self.question["question"], "candidates": self.question.get("candidates") or []} \
            if self.question else {}
        return {"run_id": self.run_id, "status": self.status, "answer": self.answer, **asked,
                "verified": self.verified, "usage": asdict(self.usage), "tool_calls": self.tool_calls,
                "model": self.model, "duration_s": self.duration_s, "model_settings": self.model_settings}


def check_limits(s: Settings, run_id: str, *, turns: int, tokens: int, elapsed: float) -> None:
    """Before each turn: LimitReached once the run's turns, tokens or time are spent, saying how to go on."""
    resume = f"{invocation()} --resume {run_id}"
    if s.max_turns and turns >= s.max_turns:
        raise LimitReached(f"Reached the turn limit ({s.max_turns}). Continue with {resume} --max-turns N.")
    if s.max_tokens and tokens >= s.max_tokens:
        raise LimitReached(f"Reached the token limit ({tokens} ≥ {s.max_tokens}). Continue with {resume} "
                           "--max-tokens N.")
    if s.max_time and elapsed >= s.max_time:
        raise LimitReached(f"Reached the time limit ({s.max_time:g} s). Continue with {resume}.")


def verified(check: str, state: dict) -> bool | None:
    """What the end of a run shows (Outcome.verified), from its state."""
    if check:
        return bool((state.get("check_result") or {}).get("passed"))
    return False if state.get("last_failed") else None
