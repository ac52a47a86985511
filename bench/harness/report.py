"""The report of a results folder: summary.json, PNG charts and report.html (the table and the charts)."""

from __future__ import annotations

import json
import time
from html import escape
from pathlib import Path
from string import Template

from bench.harness import charts, curve, results
from bench.harness.stats import summarise

TEMPLATE = Path(__file__).with_name("report_template.html")


def _num(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _row(cells: list[str], header: bool = False) -> str:
    tag = "th" if header else "td"
    return "<tr>" + "".join(c if c.startswith("<t") else f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"


def summary_table(summary: dict, table_id: str = "summary") -> str:
    """One row per agent, narrow enough for a 1280-px window: each figure's interval or parts go on a second, small
    line of its cell, not into columns of their own."""
    ks = sorted({k for a in summary["agents"].values() for k in a["pass_k"]}, key=int)
    head = ["agent", "version", "tasks", "success (95% CI: tasks · trials)", f"pass^k (k = {', '.join(ks)})",
            "never acted", "acted, wrong", "harness errors", "tokens in (cached) · out", "requests · tool calls",
            "wall s", "tokens / solved (95% CI)", "claimed done (true) · paused",
            f"W/T/L vs {summary['reference']} (sign p)"]
    lines = [f'<table id="{table_id}">', _row(head, header=True)]
    harness = summary.get("harness_errors", {})
    for name, a in summary["agents"].items():
        wtl = summary["win_tie_loss"].get(name)
        success = (f"{a['successes']}/{a['trials']} ({_pct(a['success_rate'])})"
                   f"<br><small>{_interval(a.get('task_ci'), _pct) or '—'} · "
                   f"{_pct(a['ci_low'])}–{_pct(a['ci_high'])}</small>")
        spent = (f"{_num(a['input_tokens'])} <small>({_num(a['cached_tokens'])})</small>"
                 f"<br><small>{_num(a['output_tokens'])} out</small>")
        ci = _interval(a.get("tokens_per_solved_ci"), _num, paren=True)
        per_solved = f"{_num(a['tokens_per_solved'])} <small>{ci}"
        lines.append(_row([
            escape(name), escape(", ".join(summary.get("versions", {}).get(name, [])) or "—"),
            str(a.get("tasks_n", "—")), success, " · ".join(_pct(a["pass_k"].get(k)) for k in ks),
            str(a.get("never_acted", "—")), str(a.get("acted_wrong", "—")), str(len(harness.get(name, []))), spent,
            f"{_num(a['requests'], 1)} · {_num(a['tool_calls'], 1)}", _num(a["wall_s"], 1), f"{per_solved}</small>",
            _claims(a), _wtl(wtl)]))
    lines.append("</table>")
    return "\n".join(lines)


def _interval(ci: list | None, show, *, paren: bool = False) -> str:
    if not ci:
        return ""
    text = f"{show(ci[0])}–{show(ci[1])}"
    return f"({text})" if paren else text


def _wtl(wtl: dict | None) -> str:
    if not wtl:
        return "reference"
    p = wtl.get("sign_p")
    return f"{wtl['win']}/{wtl['tie']}/{wtl['loss']}" + (f" (p={p:.2f})" if p is not None else "")


def groups_html(summary: dict) -> str:
    """The test split first (what is reported), then dev (tasks that may have been looked at while tuning), each
    tier apart."""
    parts = []
    for label, group in summary.get("groups", {}).items():
        parts.append(f"<h3>{escape(label)}</h3>")
        parts.append(summary_table(group, table_id="group-" + label.replace(" · ", "-")))
    return ("<h2>By split and tier</h2>\n" + "\n".join(parts)) if parts else ""


def _claims(a: dict) -> str:
    if "claimed" not in a:  # a summary from before claims were recorded
        return "–"
    said = f"{a['claimed']} ({a['claimed_true']}, {_pct(a['claim_accuracy'])})" if a["claimed"] else "0"
    return f"{said}<br><small>{a['paused']} paused</small>" if a.get("paused") else said


def harness_html(summary: dict) -> str:
    """Trials the harness failed, apart: they are no figure of the agent's (a rerun of the bench runs them again)."""
    failed = [(agent, e) for agent, errors in summary.get("harness_errors", {}).items() for e in errors]
    if not failed:
        return ""
    rows = [_row(["agent", "task", "trial", "error"], header=True)]
    rows += [_row([escape(agent), escape(e["task"]), str(e["trial"]), escape(e["error"][:300])]) for agent, e in failed]
    return ("<h2>Harness errors (not counted above; the same bench command runs them again)</h2>\n"
            '<table id="harness">\n' + "\n".join(rows) + "\n</table>")


def task_table(summary: dict) -> str:
    agents = summary["order"]
    lines = [_row(["task", *[escape(a) for a in agents]], header=True)]
    for task, cells in summary["tasks"].items():
        row = [escape(task)]
        for agent in agents:
            c = cells.get(agent)
            if not c:
                row.append("<td>—</td>")
                continue
            kind = "ok" if c["rate"] == 1 else "fail" if c["rate"] == 0 else "part"
            row.append(f'<td class="{kind}">{c["successes"]}/{c["trials"]} · {_num(c["tokens"])} tok · '
                       f'{_num(c["wall_s"], 1)} s</td>')
        lines.append(_row(row))
    return "\n".join(lines)


def families_html(summary: dict) -> str:
    if not summary["families"]:
        return ""
    curves = [curve.html(c).replace("<h2>Learning curve</h2>", f"<h2>Learning curve · {escape(split)} families</h2>")
              for split, c in summary.get("curve", {}).items()]
    parts = [*curves, "<h2>Task families: cold (round 1) vs warm (later rounds)</h2>", '<table id="families">',
             _row(["family", "agent", "cold success", "cold tokens", "warm success", "warm tokens"], header=True)]
    for family, by_agent in summary["cold_warm"].items():
        for agent, cw in by_agent.items():
            parts.append(_row([escape(family), escape(agent), _pct(cw["cold"]["rate"]), _num(cw["cold"]["tokens"]),
                               _pct(cw["warm"]["rate"]) if cw["warm"]["trials"] else "—",
                               _num(cw["warm"]["tokens"]) if cw["warm"]["trials"] else "—"]))
    parts.append("</table>")
    return "\n".join(parts)


def curves(rows: list[dict]) -> dict[str, dict]:
    """The learning curve of each split that has families (test first: what is reported)."""
    return {split: c for split in ("test", "dev")
            if (c := curve.learning_curve([r for r in rows if r.get("split", "test") == split]))}


def terminal_table(summary: dict) -> str:
    """The few figures a terminal shows at the end of a bench: per agent, success, tokens, time, harness errors."""
    head = f"{'agent':<22} {'success':>14} {'tokens/trial':>13} {'tokens/solved':>14} {'wall s':>7}  harness errors"
    lines = [head]
    for name, a in summary["agents"].items():
        success = f"{a['successes']}/{a['trials']} ({_pct(a['success_rate'])})"
        lines.append(f"{name[:22]:<22} {success:>14} {_num(a['tokens']):>13} {_num(a['tokens_per_solved']):>14} "
                     f"{_num(a['wall_s'], 1):>7}  {len(summary.get('harness_errors', {}).get(name, []))}")
    for name, errors in summary.get("harness_errors", {}).items():
        if errors and name not in summary["agents"]:
            lines.append(f"{name[:22]:<22} {'—':>14} {'—':>13} {'—':>14} {'—':>7}  {len(errors)}")
    return "\n".join(lines)


def write(out: Path, agents: list[str] | None = None, title: str = "") -> Path:
    """Summarise out/results.jsonl into out/summary.json, out/charts/*.png and out/report.html."""
    rows = results.load(out / "results.jsonl")
    summary = summarise(rows, agents or [])
    summary["curve"] = curves(rows)
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    pictures = charts.draw(summary, out / "charts") if rows else []
    models = ", ".join(summary["models"]) or "none (built-in agents only)"
    meta = (f"{len(rows)} trials · {len(summary['tasks'])} tasks · model: {escape(models)} · "
            f"written {time.strftime('%Y-%m-%d %H:%M')}")
    html = Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        title=escape(title or out.name), meta=meta, summary_table=summary_table(summary), groups=groups_html(summary),
        harness=harness_html(summary),
        task_table=task_table(summary), families=families_html(summary), reference=escape(summary["reference"]),
        charts="\n".join(f'<img src="charts/{p.name}" alt="{p.stem}">' for p in pictures))
    path = out / "report.html"
    path.write_text(html, encoding="utf-8")
    return path
