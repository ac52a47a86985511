"""The summary's statistics on known numbers."""

from __future__ import annotations

import pytest

from ga.bench.stats import cold_warm, pass_hat_k, summarise, wilson, win_tie_loss


def row(task, agent, trial, success, tokens=100, **extra):
    return {"task": task, "agent": agent, "trial": trial, "success": success, "input_tokens": tokens,
            "cached_tokens": 0, "output_tokens": 0, "requests": 1, "tool_calls": 1, "wall_s": 1.0, **extra}


def test_wilson_interval_is_sound_at_the_edges():
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 0) == (0.0, 0.0)


def test_pass_hat_k_is_all_k_trials_succeeding():
    counts = [(3, 3), (1, 3)]
    assert pass_hat_k(counts, 1) == pytest.approx((1 + 1 / 3) / 2)
    assert pass_hat_k(counts, 2) == pytest.approx(0.5)
    assert pass_hat_k([(2, 3)], 2) == pytest.approx(1 / 3)
    assert pass_hat_k(counts, 4) is None


def test_summary_tokens_per_solved_and_win_tie_loss():
    rows = [row("a", "ga", 1, True, 100), row("a", "ga", 2, True, 100), row("b", "ga", 1, False, 300),
            row("a", "x", 1, True, 200), row("a", "x", 2, False, 200), row("b", "x", 1, False, 50),
            row("c", "ga", 1, True, 100), row("c", "x", 1, True, 100)]
    s = summarise(rows, ["ga", "x"])
    assert s["order"] == ["ga", "x"] and s["reference"] == "ga"
    assert s["agents"]["ga"]["tokens_per_solved"] == pytest.approx(600 / 3)
    assert s["agents"]["x"]["tokens_per_solved"] == pytest.approx(550 / 2)
    # a: x solves less (loss); b: both 0 (tie); c: same rate, same tokens (tie)
    assert s["win_tie_loss"]["x"] == {"win": 0, "tie": 2, "loss": 1}
    assert win_tie_loss(s["tasks"], "ga", "x") == {"win": 1, "tie": 2, "loss": 0}


def test_cold_and_warm_rounds_of_a_family():
    rows = [row("f-r1", "ga", 1, False, 900, family="f", round=1), row("f-r2", "ga", 1, True, 300, family="f", round=2),
            row("f-r3", "ga", 1, True, 100, family="f", round=3)]
    s = summarise(rows, ["ga"])
    assert [r["tokens"] for r in s["families"]["f"]["ga"]] == [900, 300, 100]
    assert s["cold_warm"]["f"]["ga"] == cold_warm(s["families"]["f"]["ga"])
    assert s["cold_warm"]["f"]["ga"]["cold"] == {"trials": 1, "rate": 0.0, "tokens": 900}
    assert s["cold_warm"]["f"]["ga"]["warm"] == {"trials": 2, "rate": 1.0, "tokens": 200}
