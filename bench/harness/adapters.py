"""Agents the harness can run: the built-in oracle and nop, ga itself, and any CLI agent from a small TOML config
(bench/harness/agents/NAME.toml, or a path to one)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Protocol

import ga
from bench.harness.cli_agent import CLIAgent
from bench.harness.context import ROOT, AgentRun, TrialContext
from bench.harness.process import run_program
from ga.errors import ConfigError
from ga.invocation import ga_command

CONFIGS = Path(__file__).resolve().parent / "agents"
EXIT_PAUSED = 3
GRACE = 15.0
"""Seconds ga's own --max-time stops before the trial's deadline."""


class Adapter(Protocol):
    name: str
    version: str
    """What ran: a release, and for ga the commit (and whether the checkout had changes)."""
    config: dict
    """How it ran (flags, prompt configuration): recorded in every row, so two configurations never blur."""

    def run(self, ctx: TrialContext) -> AgentRun:
        """Run the agent on the trial's workspace until it stops or the deadline passes. Never raises for the
        agent's own failures: they are an AgentRun with an error."""
        ...


class Oracle:
    """Runs the task's solution/solve.sh in the workspace: every task must pass with it."""

    name, version, config = "oracle", "1", {}

    def run(self, ctx: TrialContext) -> AgentRun:
        solve = ctx.task.path / "solution" / "solve.sh"
        if not solve.is_file():
            return AgentRun(exit_code=None, error=f"{solve} is missing")
        env = {**ctx.env, "SOLUTION_DIR": str(solve.parent)}
        done = run_program(["bash", str(solve)], cwd=ctx.workspace, env=env, timeout=ctx.remaining(),
                           stdout=ctx.logs / "agent.out")
        return AgentRun(exit_code=done.exit_code, timed_out=done.timed_out, wall_s=done.wall_s, error=done.error)


class Nop:
    """Does nothing: every task must fail with it (a checker that passes an untouched workspace is broken)."""

    name, version, config = "nop", "1", {}

    def run(self, ctx: TrialContext) -> AgentRun:
        return AgentRun()


@functools.lru_cache(maxsize=1)
def ga_version() -> str:
    """ga's version, its commit and `.dirty` when the checkout has uncommitted changes to tracked files."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10,
                                  check=False).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    sha = git("rev-parse", "--short=10", "HEAD")
    dirty = ".dirty" if sha and git("status", "--porcelain", "--untracked-files=no") else ""
    return f"{ga.__version__}+{sha}{dirty}" if sha else ga.__version__


def answer_command(run_id: str, answer: str) -> list[str]:
    """The command that gives a paused ga run the human's answer and continues it to its next stop, in the
    foreground with --json: the harness needs the outcome (`ga answer RUN_ID TEXT` does the same in the
    background, for a human who does not wait)."""
    return [*ga_command(), "--resume", run_id, "--answer", answer, "--json", "--autonomous"]


ARMS = ("nolearn", "taught")
"""Learning arms: `nolearn` learns nothing (GA_LEARN=0: every round as round 1); `taught` has round 1 of a family
played by the scripted upstream, a capable model's verified run (bench/harness/trial.py), the later rounds by the
real model."""


class GA:
    """ga through its public command line: --json --autonomous; a pause (exit 3) gets the scripted human's answer.
    `ga:small` / `ga:default` force its per-model settings (GA_MODEL_SETTINGS); plain `ga` lets the model's name
    decide. `ga:nolearn` and `ga:taught` are the learning arms (ARMS); joined with `+` (`ga:taught+small`). `ga:bash`
    acts in the text format (the small settings with action_format = "bash")."""

    def __init__(self, variant: str = "") -> None:
        parts = [p for p in variant.split("+") if p]
        self.name = f"ga:{variant}" if variant else "ga"
        self.arm = next((p for p in parts if p in ARMS), "")
        self.model_settings = next((p for p in parts if p not in (*ARMS, "bash")), "")
        if "bash" in parts:  # the text action format: one shell block per reply (ga/model/text_actions.py)
            self.model_settings = f"{self.model_settings or 'small'}:action_format=bash"
        self.version = ga_version()
        self.config = {"mode": "--json --autonomous", "model_settings": self.model_settings or "by the model's name",
                       "max_output_tokens": os.environ.get("GA_MAX_OUTPUT_TOKENS") or "ga's default, lowered by the "
                       "model settings' max_reply_tokens",
                       "learning": {"nolearn": "off", "taught": "on, round 1 scripted"}.get(self.arm, "on")}

    def run(self, ctx: TrialContext) -> AgentRun:
        env = {**ctx.env, "OPENAI_BASE_URL": ctx.openai_url, "OPENAI_API_KEY": ctx.api_key, "GA_MODEL": ctx.model,
               # a busy single-slot server queues requests: wait for a reply as long as the trial may last
               "GA_REQUEST_TIMEOUT": f"{max(60.0, ctx.remaining()):.0f}"}
        if self.model_settings:
            env["GA_MODEL_SETTINGS"] = self.model_settings
        if self.arm == "nolearn":
            env["GA_LEARN"] = "0"
        # --max-time a little under the deadline: ga stops at a turn boundary and reports, rather than being killed
        argv = [*ga_command(), "--json", "--autonomous", "--workdir", str(ctx.workspace),
                "--max-turns", str(ctx.max_turns), "--max-time", f"{max(1.0, ctx.remaining() - GRACE):.0f}",
                ctx.instruction]
        answers, out = list(ctx.task.answers), AgentRun()
        while True:
            stdout = ctx.logs / f"ga.{out.answers_given}.json"
            done = run_program(argv, cwd=ctx.workspace, env=env, timeout=ctx.remaining(), stdout=stdout,
                               stderr=ctx.logs / "agent.err")
            out.exit_code, out.timed_out, out.error = done.exit_code, done.timed_out, done.error
            out.wall_s += done.wall_s
            report = _last_json(stdout)
            if report:  # a resumed run reports the whole run's usage, not this invocation's
                out.self_reported = {k: report.get(k) for k in ("status", "run_id", "usage", "tool_calls",
                                                                 "verified", "model_settings")}
            out.claimed_done = report.get("status") == "done" if report else None
            out.acted = bool(report.get("tool_calls")) if report else None
            if done.exit_code != EXIT_PAUSED or not answers or not report.get("run_id") or ctx.remaining() <= 0:
                break
            argv = [*answer_command(report["run_id"], answers.pop(0)),
                    "--max-time", f"{max(1.0, ctx.remaining() - GRACE):.0f}"]
            out.answers_given += 1
        if done.exit_code not in (0, None) and not out.error:
            out.error = f"ga exited {done.exit_code} ({report.get('status', 'no JSON on stdout')})"
        return out


def _last_json(path: Path) -> dict:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return {}
    for line in reversed(lines):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def resolve(name: str) -> Adapter:
    """An adapter by name: oracle, nop, ga, a config in bench/harness/agents/, or a path to a .toml config."""
    builtins = {"oracle": Oracle, "nop": Nop, "ga": GA}
    if name in builtins:
        return builtins[name]()
    if name.startswith("ga:"):
        return GA(name.removeprefix("ga:"))
    path = Path(name).expanduser() if name.endswith(".toml") else CONFIGS / f"{name}.toml"
    if not path.is_file():
        known = sorted([*builtins, *(p.stem for p in CONFIGS.glob("*.toml"))])
        raise ConfigError(f"Unknown agent {name!r}: use one of {', '.join(known)}, or a path to an agent config "
                          "(.toml; see bench/harness/agents/ for examples).")
    return CLIAgent.load(path)
