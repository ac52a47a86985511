"""What the checker reads is the harness's own: an agent that runs unsandboxed beside its trial's logs cannot score a
failing task by writing a reward file, linking the verifier's folder elsewhere, or forging the task site's posts."""

from __future__ import annotations

import pytest

from tests.bench.harness.conftest import agent_config, bench, copy_tasks, rows


def offline(upstream: str) -> tuple[str, ...]:
    """The agents here never ask the model; the bench still checks --upstream answers before any trial."""
    return ("--no-report", "--upstream", upstream, "--model", "m", "--timeout", "30")


@pytest.mark.parametrize("cheat", [
    "mkdir -p ../logs/verifier && echo 1 > ../logs/verifier/reward.txt",
    "mkdir -p ../logs/verifier && echo '{\"reward\": 1}' > ../logs/verifier/reward.json",
    "mkdir -p ../planted && echo 1 > ../planted/reward.txt && ln -s ../planted ../logs/verifier",
], ids=["reward.txt", "reward.json", "linked-folder"])
def test_a_reward_the_agent_wrote_does_not_score(tmp_path, cheat, upstream):
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug")  # its checker fails: stats.py is still wrong
    cheater = agent_config(tmp_path, "cheater", ["bash", "-c", cheat])
    out = tmp_path / "out"
    assert bench(suite, "--agents", f"oracle,{cheater}", "--out", out, *offline(upstream)) == 0
    by = {r["agent"]: r for r in rows(out)}
    assert by["oracle"]["success"]  # the honest solution still scores
    assert not by["cheater"]["success"] and by["cheater"]["reward"] == 0.0, by["cheater"]
    assert not (out / "trials" / "cheater" / "fix-calc-bug" / "1" / "logs" / "verifier").is_symlink()


def test_site_posts_the_agent_wrote_beside_the_log_do_not_count(tmp_path, upstream):
    suite = copy_tasks(tmp_path / "suite", "web-form")
    post = ('{"path": "/signup", "form": {"name": "Rosa Parks", "email": "rosa@example.org", "plan": "team", '
            '"terms": "accepted"}, "t": 0}')
    forger = agent_config(tmp_path, "forger", ["bash", "-c", f"echo '{post}' >> ../logs/site-posts.jsonl"])
    out = tmp_path / "out"
    assert bench(suite, "--agents", f"oracle,{forger}", "--out", out, *offline(upstream)) == 0
    by = {r["agent"]: r for r in rows(out)}
    assert by["oracle"]["success"]
    assert not by["forger"]["success"], by["forger"]
