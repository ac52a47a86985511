"""The checker: tests/ is copied into the trial only after the agent is done (the agent never sees it), then
tests/test.sh runs in the workspace. Harbor's reward files decide when present ($LOGS_DIR/verifier/reward.json
with a "reward" key, else reward.txt); otherwise the exit code does (0 passes).

What the checker reads is the harness's own: an agent that runs without a sandbox can write beside its workspace
(`../logs/verifier/reward.txt`, `../logs/site-posts.jsonl`), so the verifier's folder is cleared and made anew
(whatever the agent left there, a link included, goes) just before the checker runs, and $SITE_LOG is a copy of
the posts the task site received, written there from the site's memory."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from bench.harness.context import TrialContext
from bench.harness.process import run_program

OUTPUT_TAIL = 2_000
SITE_POSTS = "site-posts.jsonl"
"""The task site's log of form posts, in the trial's logs/ (as they come) and in logs/verifier/ (the copy the checker
gets as $SITE_LOG)."""


@dataclass(kw_only=True)
class Verdict:
    success: bool
    reward: float
    exit_code: int | None
    timed_out: bool = False
    output: str = ""
    """The checker's last output, for the report."""
    error: str = ""


def _reward(folder) -> float | None:
    json_file, text_file = folder / "reward.json", folder / "reward.txt"
    try:
        if json_file.is_file():
            data = json.loads(json_file.read_text())
            value = data.get("reward", next(iter(data.values()), None)) if isinstance(data, dict) else data
            return float(value)
        if text_file.is_file():
            return float(text_file.read_text().strip())
    except (ValueError, TypeError, StopIteration):
        return None
    return None


def fresh_folder(folder: Path) -> Path:
    """`folder` emptied and made anew by the harness (0700): a file, a link or a folder of the agent's goes."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(mode=0o700, parents=True)
    return folder


def verify(ctx: TrialContext, site_posts: list[str] | None = None) -> Verdict:
    """Run the task's checker; `site_posts`: the JSON lines the task site logged (None: the task has no site)."""
    tests = ctx.folder / "tests"
    if tests.is_symlink() or tests.is_file():
        tests.unlink()
    elif tests.exists():
        shutil.rmtree(tests)
    shutil.copytree(ctx.task.path / "tests", tests)
    verifier_logs = fresh_folder(ctx.logs / "verifier")
    site_log = verifier_logs / SITE_POSTS
    site_log.write_text("".join(site_posts or []), encoding="utf-8")
    env = {**ctx.env, "TESTS_DIR": str(tests), "LOGS_DIR": str(ctx.logs), "WORKSPACE": str(ctx.workspace),
           "SITE_LOG": str(site_log)}
    log = verifier_logs / "test.out"
    done = run_program(["bash", str(tests / "test.sh")], cwd=ctx.workspace, env=env,
                       timeout=ctx.task.verifier_timeout, stdout=log)
    output = log.read_text(encoding="utf-8", errors="replace")[-OUTPUT_TAIL:] if log.is_file() else ""
    reward = _reward(verifier_logs)
    wrote_reward = (verifier_logs / "reward.txt").exists() or (verifier_logs / "reward.json").exists()
    if wrote_reward and reward is None:
        return Verdict(success=False, reward=0.0, exit_code=done.exit_code, timed_out=done.timed_out,
                       output=output, error="the checker wrote a reward file that is not a number")
    if reward is None:
        reward = 1.0 if done.exit_code == 0 else 0.0
    error = done.error if done.timed_out else ""
    return Verdict(success=reward >= 1.0 and not done.timed_out, reward=reward, exit_code=done.exit_code,
                   timed_out=done.timed_out, output=output, error=error)
