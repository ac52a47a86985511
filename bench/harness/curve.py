"""The learning curve: per agent (arm) and round of the task families, how many trials succeeded and what they cost,
and rounds 2 and later pooled with intervals over families (the unit that varies: a family is one procedure).

Arms compare what a round learnt: `ga` keeps what earlier rounds taught, `ga:nolearn` starts every round with
nothing learnt, `ga:taught` had round 1 played by a capable model (the scripted upstream), and a peer keeps nothing.
"""

from __future__ import annotations

from collections import defaultdict
from html import escape

from bench.harness import inference
from bench.harness.stats import tokens


def learning_curve(rows: list[dict]) -> dict[str, dict]:
    """agent → {"rounds": [{round, trials, successes, tokens}], "warm": {trials, successes, tokens, *_ci}}."""
    by_agent: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r.get("family") and r.get("round"):
            by_agent[r["agent"]].append(r)
    out = {}
    for agent, rs in by_agent.items():
        rounds: dict[int, list[dict]] = defaultdict(list)
        for r in rs:
            rounds[int(r["round"])].append(r)
        warm = [r for r in rs if int(r["round"]) > 1]
        families: dict[str, list[dict]] = defaultdict(list)
        for r in warm:
            families[r["family"]].append(r)
        out[agent] = {"rounds": [_cell(n, cell) for n, cell in sorted(rounds.items())],
                      "warm": {**_cell(0, warm),
                               "successes_ci": inference.bootstrap(families, _successes) if warm else None,
                               "tokens_ci": inference.bootstrap(families, _mean_tokens) if warm else None}}
    return out


def _cell(number: int, rows: list[dict]) -> dict:
    return {"round": number, "trials": len(rows), "successes": sum(1 for r in rows if r["success"]),
            "tokens": sum(tokens(r) for r in rows) / len(rows) if rows else 0.0}


def _successes(groups: list[list[dict]]) -> float:
    return float(sum(1 for g in groups for r in g if r["success"]))


def _mean_tokens(groups: list[list[dict]]) -> float | None:
    flat = [tokens(r) for g in groups for r in g]
    return sum(flat) / len(flat) if flat else None


def _interval(ci: tuple[float, float] | list | None, fmt: str) -> str:
    return f" [{fmt.format(ci[0])}–{fmt.format(ci[1])}]" if ci else ""


def lines(curve: dict[str, dict]) -> list[str]:
    """The curve as a few terminal lines: each arm's rounds, then rounds 2+ pooled."""
    if not curve:
        return []
    width = max(len(a) for a in curve)
    out = ["learning curve (solved/trials · mean tokens per trial; rounds 2+ with 95% intervals over families):"]
    for agent, c in curve.items():
        cells = "  ".join(f"r{x['round']} {x['successes']}/{x['trials']} · {x['tokens']:,.0f}" for x in c["rounds"])
        w = c["warm"]
        warm = (f"  | rounds 2+: {w['successes']}/{w['trials']}{_interval(w['successes_ci'], '{:.0f}')} · "
                f"{w['tokens']:,.0f}{_interval(w['tokens_ci'], '{:,.0f}')} tok")
        out.append(f"  {agent:<{width}}  {cells}{warm if w['trials'] else ''}")
    return out


def html(curve: dict[str, dict]) -> str:
    if not curve:
        return ""
    rounds = sorted({x["round"] for c in curve.values() for x in c["rounds"]})
    head = "".join(f"<th>round {n}</th>" for n in rounds)
    body = []
    for agent, c in curve.items():
        by_round = {x["round"]: x for x in c["rounds"]}
        cells = "".join(f"<td>{by_round[n]['successes']}/{by_round[n]['trials']}<br>"
                        f"{by_round[n]['tokens']:,.0f} tok</td>" if n in by_round else "<td></td>" for n in rounds)
        w = c["warm"]
        warm = (f"<td>{w['successes']}/{w['trials']}{escape(_interval(w['successes_ci'], '{:.0f}'))}<br>"
                f"{w['tokens']:,.0f}{escape(_interval(w['tokens_ci'], '{:,.0f}'))} tok</td>")
        body.append(f"<tr><td>{escape(agent)}</td>{cells}{warm}</tr>")
    return ("<h2>Learning curve</h2><p>Solved/trials and mean tokens per trial, per round of the task families; "
            "rounds 2+ pooled, with 95% bootstrap intervals over families.</p>"
            f'<table id="curve"><tr><th>agent</th>{head}<th>rounds 2+</th></tr>{"".join(body)}</table>')
