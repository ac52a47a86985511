"""The summary's statistics on known numbers."""

from __future__ import annotations

import pytest

from bench.harness.inference import sign_test
from bench.harness.stats import cold_warm, pass_hat_k, summarise, wilson, win_tie_loss


def row(task, agent, trial, success, tokens=100, **extra):
    return {"task": task, "agent": agent, "trial": trial, "success": success, "input_tokens": tokens,
            "cached_tokens": 0, "output_tokens": 0, "requests": 1, "tool_calls": 1, "wall_s": 1.0} | extra


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
    assert s["win_tie_loss"]["x"] == {"win": 0, "tie": 2, "loss": 1, "sign_p": 1.0}
    assert win_tie_loss(rows, "ga", "x") == {"win": 1, "tie": 2, "loss": 0, "sign_p": 1.0}


def test_intervals_take_tasks_as_the_unit_and_the_sign_test_is_exact():
    # 10 tasks, 3 identical (greedy) trials each: 30 trials, but only 10 observations
    rows = [row(f"t{i}", "ga", k, i < 5) for i in range(10) for k in (1, 2, 3)]
    a = summarise(rows, ["ga"])["agents"]["ga"]
    low, high = a["task_ci"]
    assert a["tasks_n"] == 10 and a["task_rate"] == 0.5 and low < 0.3 and high > 0.7  # about ±0.3
    assert a["ci_high"] - a["ci_low"] < high - low  # Wilson over 30 "independent" trials: too narrow
    assert a["tokens_per_solved"] == pytest.approx(3000 / 15) and a["tokens_per_solved_ci"][0] < 200 < \
        a["tokens_per_solved_ci"][1]
    assert sign_test(0, 8) == pytest.approx(2 / 256) and sign_test(3, 3) == 1.0 and sign_test(0, 0) is None
    assert sign_test(9, 1) == pytest.approx(22 / 1024)


def test_never_acting_is_a_format_failure_apart_from_wrong_work_and_splits_are_summarised_apart():
    rows = [row("a", "ga", 1, False, tool_calls=0, acted=None, split="test", tier="small"),
            row("b", "ga", 1, False, tool_calls=3, acted=None, split="test", tier="small"),
            row("c", "ga", 1, False, tool_calls=0, acted=True, split="dev", tier="standard"),
            row("d", "ga", 1, True, split="dev", tier="standard")]
    s = summarise(rows, ["ga"])
    assert (s["agents"]["ga"]["never_acted"], s["agents"]["ga"]["acted_wrong"]) == (1, 2)
    assert list(s["groups"]) == ["test · small", "dev · standard"]
    assert s["groups"]["test · small"]["agents"]["ga"]["trials"] == 2


def test_cold_and_warm_rounds_of_a_family():
    rows = [row("f-r1", "ga", 1, False, 900, family="f", round=1), row("f-r2", "ga", 1, True, 300, family="f", round=2),
            row("f-r3", "ga", 1, True, 100, family="f", round=3)]
    s = summarise(rows, ["ga"])
    assert [r["tokens"] for r in s["families"]["f"]["ga"]] == [900, 300, 100]
    assert s["cold_warm"]["f"]["ga"] == cold_warm(s["families"]["f"]["ga"])
    assert s["cold_warm"]["f"]["ga"]["cold"] == {"trials": 1, "rate": 0.0, "tokens": 900}
    assert s["cold_warm"]["f"]["ga"]["warm"] == {"trials": 2, "rate": 1.0, "tokens": 200}


def test_a_paused_trial_is_counted_apart_from_claims_and_shown_in_the_report():
    from bench.harness.report import summary_table

    rows = [{"task": t, "agent": "ga", "trial": 1, "success": ok, "claimed_done": claimed, "input_tokens": 10,
             "output_tokens": 1, "cached_tokens": 0, "requests": 1, "tool_calls": 1, "wall_s": 1.0,
             "self_reported": {"status": status}}
            for t, ok, claimed, status in (("a", True, True, "done"), ("b", False, True, "done"),
                                           ("c", False, False, "paused"), ("d", False, False, "failed"))]
    agent = summarise(rows, ["ga"])["agents"]["ga"]
    assert (agent["claimed"], agent["claimed_true"], agent["paused"]) == (2, 1, 1)
    assert "1 paused" in summary_table(summarise(rows, ["ga"]))
