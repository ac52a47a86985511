"""The summary: success with intervals (Wilson over trials, and a bootstrap over tasks, the unit of the design) and
pass^k, tokens, requests, tool calls, time, tokens per solved task with its interval, what the agents claimed and how
often that was true, trials where the agent never got the model to act (format failures) apart from wrong work,
per-task win/tie/loss against the first agent with a sign test, cold vs warm for task families; all of it for every
split and tier apart (the test split is what is reported; dev tasks may have been looked at while tuning).

Tokens are input + output (cached tokens are part of input, as in ATIF; they are also shown apart).
"""

from __future__ import annotations

import math
from collections import defaultdict

from bench.harness import inference
from bench.harness.results import harness_error

Z95 = 1.959964


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a success rate: sound at 0/n and n/n, where the normal one is not."""
    if n == 0:
        return 0.0, 0.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_hat_k(counts: list[tuple[int, int]], k: int) -> float | None:
    """pass^k (tau-bench): the chance that k trials of a task all succeed, C(c,k)/C(n,k), averaged over the tasks
    with at least k trials; None when no task has k."""
    usable = [(c, n) for c, n in counts if n >= k]
    if not usable:
        return None
    return sum(math.comb(c, k) / math.comb(n, k) for c, n in usable) / len(usable)


def tokens(row: dict) -> int:
    return int(row.get("input_tokens", 0)) + int(row.get("output_tokens", 0))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def agent_summary(rows: list[dict]) -> dict:
    n, solved = len(rows), sum(1 for r in rows if r["success"])
    low, high = wilson(solved, n)
    by_task: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_task[r["task"]].append(r)
    counts = [(sum(1 for r in rs if r["success"]), len(rs)) for rs in by_task.values()]
    k_max = max((len(rs) for rs in by_task.values()), default=0)
    total_tokens = sum(tokens(r) for r in rows)
    tasks = inference.by_task(rows)
    task_ci = inference.bootstrap(tasks, inference.success_rate)
    price_ci = inference.bootstrap(tasks, inference.tokens_per_solved)
    return {
        "trials": n, "successes": solved, "success_rate": solved / n if n else 0.0, "ci_low": low, "ci_high": high,
        "pass_k": {str(k): pass_hat_k(counts, k) for k in range(1, k_max + 1)},
        "input_tokens": _mean([r["input_tokens"] for r in rows]),
        "cached_tokens": _mean([r["cached_tokens"] for r in rows]),
        "output_tokens": _mean([r["output_tokens"] for r in rows]),
        "tokens": _mean([tokens(r) for r in rows]), "total_tokens": total_tokens,
        "requests": _mean([r["requests"] for r in rows]), "tool_calls": _mean([r["tool_calls"] for r in rows]),
        "wall_s": _mean([r["wall_s"] for r in rows]),
        "tokens_per_solved": total_tokens / solved if solved else None,
        "tokens_per_solved_ci": list(price_ci) if price_ci else None,
        "tasks_n": len(tasks), "task_rate": inference.success_rate(list(tasks.values())) if tasks else 0.0,
        "task_ci": list(task_ci) if task_ci else None,
        "never_acted": sum(1 for r in rows if not r["success"] and not _acted(r)),
        "acted_wrong": sum(1 for r in rows if not r["success"] and _acted(r)),
        "errors": sum(1 for r in rows if r.get("error")), "timeouts": sum(1 for r in rows if r.get("timed_out")),
        **claims(rows),
    }


def _acted(row: dict) -> bool:
    """The agent got the model to act (its row says; rows from before `acted` was recorded: a tool call metered)."""
    return bool(row["acted"]) if row.get("acted") is not None else bool(row.get("tool_calls"))


def claims(rows: list[dict]) -> dict:
    """How often the agent said it was done, and how often that was true (claim accuracy: solved among claimed)."""
    claimed = [r for r in rows if r.get("claimed_done")]
    true = sum(1 for r in claimed if r["success"])
    # a question asked back (ga's exit 3) is neither a claim of done nor a silent failure: counted apart
    paused = sum(1 for r in rows if (r.get("self_reported") or {}).get("status") == "paused")
    return {"claimed": len(claimed), "claimed_true": true, "claim_accuracy": true / len(claimed) if claimed else None,
            "paused": paused}


def task_table(rows: list[dict]) -> dict[str, dict[str, dict]]:
    """task → agent → {trials, successes, rate, tokens (mean), wall_s (mean)}."""
    cells: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        cells[r["task"]][r["agent"]].append(r)
    return {task: {agent: {"trials": len(rs), "successes": sum(1 for r in rs if r["success"]),
                           "rate": sum(1 for r in rs if r["success"]) / len(rs),
                           "tokens": _mean([tokens(r) for r in rs]), "wall_s": _mean([r["wall_s"] for r in rs])}
                   for agent, rs in by_agent.items()}
            for task, by_agent in sorted(cells.items())}


def win_tie_loss(rows: list[dict], agent: str, reference: str) -> dict:
    """Per task, `agent` against `reference` (inference.paired), with the sign test's p-value."""
    return inference.paired([r for r in rows if r["agent"] == agent], [r for r in rows if r["agent"] == reference])


def family_rounds(rows: list[dict]) -> dict[str, dict[str, list[dict]]]:
    """family → agent → per round {round, trials, successes, rate, tokens}; plus cold (round 1) vs warm (later)."""
    cells: dict[str, dict[str, dict[int, list[dict]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for r in rows:
        if r.get("family"):
            cells[r["family"]][r["agent"]][int(r.get("round") or 0)].append(r)
    return {family: {agent: [{"round": rnd, "trials": len(rs), "successes": sum(1 for r in rs if r["success"]),
                              "rate": sum(1 for r in rs if r["success"]) / len(rs),
                              "tokens": _mean([tokens(r) for r in rs])}
                             for rnd, rs in sorted(rounds.items())]
                     for agent, rounds in by_agent.items()}
            for family, by_agent in sorted(cells.items())}


def cold_warm(rounds: list[dict]) -> dict:
    cold = [r for r in rounds if r["round"] == 1]
    warm = [r for r in rounds if r["round"] > 1]

    def pooled(cells: list[dict]) -> dict:
        n = sum(c["trials"] for c in cells)
        return {"trials": n, "rate": sum(c["successes"] for c in cells) / n if n else 0.0,
                "tokens": sum(c["tokens"] * c["trials"] for c in cells) / n if n else 0.0}

    return {"cold": pooled(cold), "warm": pooled(warm)}


def summarise(rows: list[dict], agents: list[str]) -> dict:
    """The whole run, and each split and tier apart under "groups" (e.g. "test · small"). Trials the harness failed
    (results.harness_error) are left out of every figure and listed under "harness_errors"."""
    failed = [r for r in rows if harness_error(r)]
    rows = [r for r in rows if not harness_error(r)]
    summary = _summary(rows, agents)
    errors: dict[str, list[dict]] = {a: [] for a in summary["order"]}
    for r in failed:
        errors.setdefault(r["agent"], []).append({"task": r["task"], "trial": r["trial"], "error": r["error"]})
    summary["harness_errors"] = errors
    groups = {}
    for split in ("test", "dev"):
        for tier in ("small", "standard"):
            part = [r for r in rows if r.get("split", "test") == split and r.get("tier", "standard") == tier]
            if part and len({(r.get("split"), r.get("tier")) for r in rows}) > 1:
                groups[f"{split} · {tier}"] = _summary(part, summary["order"])
    summary["groups"] = groups
    return summary


def _summary(rows: list[dict], agents: list[str]) -> dict:
    order = [a for a in agents if any(r["agent"] == a for r in rows)]
    order += sorted({r["agent"] for r in rows} - set(order))
    table = task_table(rows)
    reference = order[0] if order else ""
    fams = family_rounds(rows)
    return {
        "agents": {a: agent_summary([r for r in rows if r["agent"] == a]) for a in order},
        "order": order, "reference": reference, "tasks": table,
        "win_tie_loss": {a: win_tie_loss(rows, a, reference) for a in order[1:]},
        "families": fams,
        "cold_warm": {f: {a: cold_warm(rounds) for a, rounds in by_agent.items()} for f, by_agent in fams.items()},
        "models": sorted({r.get("model", "") for r in rows if r.get("model")}),
        "versions": {a: sorted({r.get("agent_version", "") for r in rows if r["agent"] == a} - {""}) for a in order},
    }
