"""PNG charts of a summary: tokens per task per agent, success vs tokens, and each family's cold-vs-warm curve."""

from __future__ import annotations

import sys
from pathlib import Path

from ga.errors import ConfigError


def check_available() -> None:
    """Fail before the trials, not after them, when the charts cannot be drawn."""
    _pyplot()


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ConfigError(f"The benchmark charts need matplotlib: {sys.executable} -m pip install -r "
                          "requirements-bench.txt (in ga's checkout)") from None
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def draw(summary: dict, folder: Path) -> list[Path]:
    """Write the charts into folder; returns their paths (no family chart when the suite has no family)."""
    plt = _pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    paths = [_tokens_per_task(plt, summary, folder / "tokens_per_task.png"),
             _success_vs_tokens(plt, summary, folder / "success_vs_tokens.png")]
    if summary["families"]:
        paths.append(_cold_warm(plt, summary, folder / "cold_vs_warm.png"))
    return paths


def _tokens_per_task(plt, summary: dict, path: Path) -> Path:
    tasks, agents = list(summary["tasks"]), summary["order"]
    height = max(3.0, 0.32 * len(tasks) * max(1, len(agents)) + 1.2)
    fig, ax = plt.subplots(figsize=(9, height))
    bar = 0.8 / max(1, len(agents))
    for i, agent in enumerate(agents):
        values = [summary["tasks"][t].get(agent, {}).get("tokens", 0) for t in tasks]
        positions = [j + i * bar for j in range(len(tasks))]
        ax.barh(positions, values, height=bar, label=agent)
    ax.set_yticks([j + bar * (len(agents) - 1) / 2 for j in range(len(tasks))], tasks, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("mean tokens per trial (input + output)")
    ax.set_title("Tokens per task")
    ax.legend(loc="lower right")
    return _save(plt, fig, path)


def _success_vs_tokens(plt, summary: dict, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, agent in enumerate(summary["order"]):
        cells = [c[agent] for c in summary["tasks"].values() if agent in c]
        ax.scatter([c["tokens"] for c in cells], [c["rate"] for c in cells], alpha=0.45, color=f"C{i}",
                   label=f"{agent} (tasks)")
        whole = summary["agents"][agent]
        ax.scatter([whole["tokens"]], [whole["success_rate"]], marker="D", s=90, edgecolors="black", color=f"C{i}",
                   label=f"{agent} (all)")
    ax.set_xlabel("mean tokens per trial")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title("Success vs tokens")
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def _cold_warm(plt, summary: dict, path: Path) -> Path:
    families = summary["families"]
    fig, axes = plt.subplots(1, len(families), figsize=(5 * len(families), 4), squeeze=False)
    for ax, (family, by_agent) in zip(axes[0], families.items(), strict=True):
        for agent, rounds in by_agent.items():
            xs = [r["round"] for r in rounds]
            ax.plot(xs, [r["tokens"] for r in rounds], marker="o", label=agent)
            for r in rounds:
                ax.annotate(f"{r['successes']}/{r['trials']}", (r["round"], r["tokens"]), fontsize=7,
                            textcoords="offset points", xytext=(4, 4))
        ax.set_title(f"{family}: cold → warm")
        ax.set_xlabel("round (1 = cold)")
        ax.set_ylabel("mean tokens per trial")
        ax.set_xticks(sorted({r["round"] for rs in by_agent.values() for r in rs}))
        ax.legend(fontsize=8)
    return _save(plt, fig, path)


def _save(plt, fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
