"""One turn's output budget: the results of a turn share it; over it, the largest are cut first, each cut keeping
whole lines from both ends and saying where the whole result is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ga.tooling import tokens

RESULTS_TOKENS = 12_500
"""Default budget all results of one turn share, in tokens (about 50,000 characters); the agent sizes it from the
room its context has left (ga/context/history.py). Over it, the largest results are cut first."""
RESULTS_CHARS = RESULTS_TOKENS * tokens.CHARS_PER_TOKEN
MARKER_TOKENS = 80
"""Room kept in a cut result for the line that says what was cut and where the whole is."""
SHOWN_RESULTS = "shown_results"
"""ToolContext.state key: {call_id: what a tool remembers of a result the model still sees in full} (file_read's
unchanged re-reads). The runtime drops an id once that result is cut here, or masked or folded by the context."""


class Result(Protocol):
    content: str
    details: dict


def fit(ids: list[str], results: list[Result], budget: int, *, save: Callable[[str, str], Path], shown: dict) -> int:
    """Cut the largest of one group's results until the group is within `budget` tokens; the tokens used.
    `save(name, text)` keeps a whole result; `shown` is the run's SHOWN_RESULTS (a cut result is no longer shown)."""
    sizes = [tokens.estimate(r.content) for r in results]
    allowed = tokens.shares(sizes, budget)
    for call_id, result, size, keep in zip(ids, results, sizes, allowed, strict=True):
        if keep < size:
            cut(result, keep, call_id, save=save)
            shown.pop(call_id, None)
    return sum(tokens.estimate(r.content) for r in results)


def cut(result: Result, budget: int, call_id: str, *, save: Callable[[str, str], Path]) -> None:
    """Keep whole lines from the start and the end within `budget` tokens; save the whole; say how to get it."""
    text, path = result.content, None
    try:
        path = save(f"{call_id or 'result'}.txt", text)
    except OSError as e:  # a full disk must not lose the result itself
        where = f"the whole result could not be saved ({e.strerror or e})"
    head, tail = tokens.clip(text, max(0, budget - MARKER_TOKENS - tokens.estimate(str(path or ""))))  # a long path
    dropped, start = text[len(head):len(text) - len(tail)], head.count("\n") + 1
    if head and not head.endswith("\n"):  # a line too long to keep whole was cut inside
        head += "\n"
    if path is not None:
        where = f"the whole result: {path} — file_read it with start={start}"
        result.details.setdefault("full_output", str(path))
        result.details["cut_output"] = str(path)
    lines = dropped.count("\n") + (not dropped.endswith("\n") and bool(dropped))
    result.content = (f"{head}[… {len(dropped):,} chars ({lines:,} lines) cut to fit this turn's output budget; "
                      f"{where}]" + (f"\n{tail}" if tail else ""))
