"""The command policy's shared vocabulary: verdicts, a Decision, and the Scanner that the Python and other
interpreters' checks report to. shell_scan.Scan implements it; python_scan and other_code only know this interface."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

ALLOW, ASK, REFUSE = "allow", "ask", "refuse"
"""The three tiers: run it, ask a human (the dangerous tier), never run it (the catastrophic tier)."""
_SEVERITY = {ALLOW: 0, ASK: 1, REFUSE: 2}


@dataclass(frozen=True, kw_only=True)
class Decision:
    verdict: str = ALLOW
    """allow, ask (the dangerous tier) or refuse (the catastrophic tier)."""
    rule: str = ""
    reason: str = ""
    command: str = ""
    """The one simple command (or Python call) that raised it: what policy.json's allow_commands match."""

    @property
    def message(self) -> str:
        return f"{self.reason} (rule: {self.rule})" if self.rule else "allowed"


def worst(found: list[Decision]) -> Decision:
    return max(found, key=lambda d: _SEVERITY[d.verdict], default=Decision())


class Scanner(Protocol):
    """Where a check reports what it found, and hands back code it found inside code."""

    def flag(self, verdict: str, rule: str, reason: str) -> None:
        """Record a finding (ASK or REFUSE) under a rule id."""
        ...

    def bash(self, script: str) -> None:
        """Scan shell code found inside the code being scanned."""
        ...

    def python(self, source: str) -> None:
        """Scan Python code found inside the code being scanned."""
        ...

    def argv(self, argv: list[str], feed: str | list[tuple[str, bool]] | None = None) -> None:
        """Check one simple command."""
        ...

    def delete(self, path: str, *, recursive: bool, command: str, selective: bool = False) -> None:
        """Check a deletion of `path`."""
        ...

    def write(self, path: str, command: str, *, strict: bool = True) -> None:
        """Check a write to `path`; `strict`: a path with an unknown start asks (bash), else it passes (Python)."""
        ...
