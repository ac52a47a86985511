"""Statistics that fit the design: tasks are the unit, trials of one task are not independent draws.

Greedy decoding of the same task three times is one observation three times over, not three; so intervals come
from resampling tasks (a percentile bootstrap over tasks, each task weighing the mean of its trials), and two agents
are compared task by task (wins, ties and losses, with a two-sided sign test on the tasks that differ).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict

RESAMPLES = 2000
SEED = 20261202
"""A fixed seed: the same results give the same intervals, report after report."""


def by_task(rows: list[dict]) -> dict[str, list[dict]]:
    tasks: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        tasks[r["task"]].append(r)
    return dict(tasks)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    low, high = math.floor(k), math.ceil(k)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def bootstrap(tasks: dict[str, list[dict]], statistic, *, level: float = 0.95) -> tuple[float, float] | None:
    """A percentile interval of `statistic(list of task row-lists)` resampling tasks with replacement; None when the
    statistic is undefined in too many resamples (e.g. tokens per solved task with nothing solved)."""
    groups = list(tasks.values())
    if not groups:
        return None
    rng = random.Random(SEED)
    draws = []
    for _ in range(RESAMPLES):
        value = statistic([groups[rng.randrange(len(groups))] for _ in groups])
        if value is not None:
            draws.append(value)
    if len(draws) < RESAMPLES * 0.9:
        return None
    tail = (1 - level) / 2
    return _percentile(draws, tail), _percentile(draws, 1 - tail)


def success_rate(groups: list[list[dict]]) -> float:
    """The mean over tasks of each task's share of solved trials."""
    return sum(sum(1 for r in g if r["success"]) / len(g) for g in groups) / len(groups)


def tokens_per_solved(groups: list[list[dict]]) -> float | None:
    """Tokens of all trials (input + output) over the trials solved: the price of one solution."""
    solved = sum(1 for g in groups for r in g if r["success"])
    spent = sum(int(r.get("input_tokens", 0)) + int(r.get("output_tokens", 0)) for g in groups for r in g)
    return spent / solved if solved else None


def sign_test(wins: int, losses: int) -> float | None:
    """Two-sided exact binomial p-value of wins against losses (ties left out); None when every task tied."""
    n = wins + losses
    if n == 0:
        return None
    extreme = min(wins, losses)
    tail = sum(math.comb(n, k) for k in range(extreme + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def paired(rows_a: list[dict], rows_b: list[dict]) -> dict:
    """Agent a against agent b on the tasks both ran: per task the higher success rate wins; on equal rates where
    both solved something, fewer mean tokens (by more than 5%) wins; else a tie. With the sign test's p-value."""
    a, b = by_task(rows_a), by_task(rows_b)
    out = {"win": 0, "tie": 0, "loss": 0}
    for task in sorted(set(a) & set(b)):
        rate_a, rate_b = success_rate([a[task]]), success_rate([b[task]])
        tok_a = sum(int(r["input_tokens"]) + int(r["output_tokens"]) for r in a[task]) / len(a[task])
        tok_b = sum(int(r["input_tokens"]) + int(r["output_tokens"]) for r in b[task]) / len(b[task])
        if rate_a != rate_b:
            out["win" if rate_a > rate_b else "loss"] += 1
        elif rate_a > 0 and abs(tok_a - tok_b) > 0.05 * max(tok_a, tok_b):
            out["win" if tok_a < tok_b else "loss"] += 1
        else:
            out["tie"] += 1
    out["sign_p"] = sign_test(out["win"], out["loss"])
    return out
