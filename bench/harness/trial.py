"""One job for an executor: a trial of one agent on one task, or the rounds of a task family in order, each round
in a fresh workspace but one HOME and GA_HOME for the whole family (what round 1 learnt, round 2 may use).

A job runs anywhere an executor puts it (a local process, a Dask worker): it starts its own site, scripted upstream
and metering proxy on that machine's 127.0.0.1, and returns plain result rows. Nothing an agent does can raise
out of it: a crash, a hang or a broken task is a failed row with the reason.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import sys
import time
import traceback
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import atif, executors
from bench.harness.adapters import resolve
from bench.harness.cassette import Cassette
from bench.harness.context import AgentRun, TrialContext
from bench.harness.process import run_program
from bench.harness.proxy import MeteringProxy, Upstream
from bench.harness.site import Site
from bench.harness.tasks import Task, load_task
from bench.harness.verify import SITE_POSTS, Verdict, verify
from ga.runs.disk import atomic_write

SETUP_TIMEOUT = 120.0
STOP = ".stop"
"""A file in the output folder: the harness was interrupted, jobs already handed to a worker start no trial."""
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PLAYWRIGHT_BROWSERS_PATH", "GA_BROWSER", "SSL_CERT_FILE",
             "NODE_EXTRA_CA_CERTS")
"""What an agent inherits from the harness's environment: no credentials, no HOME, nothing of ga's settings."""


@dataclass(kw_only=True)
class BenchConfig:
    out: Path
    """The output folder: results.jsonl, trials/, report.html."""
    model: str = ""
    upstream: Upstream = field(default_factory=Upstream)
    scripted: bool = False
    """Upstream is the scripted fake, one per trial, answering from the task's scripted/AGENT.json."""
    record: Path | None = None
    """Save every exchange into cassettes under this folder."""
    replay: Path | None = None
    """Answer from the cassettes under this folder instead of an upstream."""
    max_turns: int = 30
    agent_timeout: float | None = None
    """Seconds per trial for every task, in place of each task's [agent] timeout_sec."""
    server: dict = field(default_factory=dict)
    """What the upstream said about itself when the bench started (its models, llama.cpp's build): in every row."""


@dataclass(kw_only=True)
class Job:
    agent: str
    """The agent's name (results, trial folders, scripted/AGENT.json)."""
    trial: int
    tasks: list[Path]
    """One task, or a family's rounds still to run, in round order."""
    config: BenchConfig
    family: str = ""
    spec: str = ""
    """How to find the agent (a built-in name, a config name or a .toml path); empty: the name."""


def trial_folder(out: Path, agent: str, task: str, trial: int) -> Path:
    return out / "trials" / agent / task / str(trial)


def run_job(job: Job) -> list[dict]:
    """Run the job's trials in order and return their result rows (also written to each trial's result.json)."""
    rows = []
    shared = job.config.out / "trials" / job.agent / f"family-{job.family}" / str(job.trial) if job.family else None
    for path in job.tasks:
        executors.leave_if_orphaned()
        if (job.config.out / STOP).exists():
            break  # interrupted: this trial (and the rest of the family) runs on resume
        try:
            task = load_task(path)
            snapshot = _before_round(shared, task) if shared is not None else None
            rows.append(run_trial(job, task, shared))
            if snapshot is not None:
                shutil.rmtree(snapshot)  # the round is done: a resume starts from what it left
        except Exception as e:  # a broken task or harness bug is this trial's failure, not the whole run's
            rows.append(failed_row(job, path, f"harness error: {type(e).__name__}: {e}", traceback.format_exc()))
    return rows


def _before_round(shared: Path, task: Task) -> Path:
    """Round 1 starts cold; every round starts from the family's HOME and GA_HOME as the previous round left them:
    a copy is kept until the round is done, so a round that was interrupted runs again from the same state."""
    snapshot = shared.with_name(f"{shared.name}.before-round-{task.round}")
    if snapshot.exists():  # this round was interrupted: undo what it did
        if shared.exists():
            shutil.rmtree(shared)
        shutil.copytree(snapshot, shared, symlinks=True)
        return snapshot
    if task.round == 1 and shared.exists():
        shutil.rmtree(shared)
    shared.mkdir(parents=True, exist_ok=True)
    shutil.copytree(shared, snapshot, symlinks=True)
    return snapshot


def _base_env(folder: Path, home: Path, ga_home: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "/usr/bin:/bin")])
    env.update(HOME=str(home), GA_HOME=str(ga_home), TMPDIR=str(folder / "tmp"), TERM="dumb", NO_COLOR="1",
               XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_DATA_HOME=str(home / ".local" / "share"), PYTHONUNBUFFERED="1")
    return env


def _prepare(job: Job, task: Task, shared: Path | None) -> tuple[Path, Path, Path, Path]:
    folder = trial_folder(job.config.out, job.agent, task.name, job.trial)
    if folder.exists():
        shutil.rmtree(folder)  # an interrupted attempt: start clean
    workspace, logs = folder / "workspace", folder / "logs"
    source = task.path / "environment" / "workspace"
    if source.is_dir():
        shutil.copytree(source, workspace, symlinks=True)
    workspace.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True)
    (folder / "tmp").mkdir()
    home, ga_home = ((shared or folder) / "home"), ((shared or folder) / "ga_home")
    home.mkdir(parents=True, exist_ok=True)
    ga_home.mkdir(parents=True, exist_ok=True)
    return folder, workspace, home, ga_home


def run_trial(job: Job, task: Task, shared: Path | None) -> dict:
    folder, workspace, home, ga_home = _prepare(job, task, shared)
    row = _run_with_services(job, task, folder, workspace=workspace, env=_base_env(folder, home, ga_home), home=home,
                             ga_home=ga_home)
    atomic_write(folder / "result.json", json.dumps(row, ensure_ascii=False, indent=1))
    return row


def _run_with_services(job: Job, task: Task, folder: Path, *, workspace: Path, env: dict[str, str], home: Path,
                       ga_home: Path) -> dict:
    """The site, the setup, the upstream and the proxy around the agent, then the checker and the ATIF export."""
    config = job.config
    with ExitStack() as stack:
        site_url, site = "", None
        if task.has_site:
            site = stack.enter_context(Site(task.path / "environment" / "site", folder / "logs" / SITE_POSTS))
            site_url = site.url
            env["SITE_URL"] = site_url  # the post log is for the checker only
        if task.setup:
            setup = run_program(["bash", "-c", task.setup], cwd=workspace, env={**env, "TASK_DIR": str(task.path)},
                                timeout=SETUP_TIMEOUT,
                                stdout=folder / "logs" / "setup.out")
            if setup.exit_code != 0:
                failed = AgentRun(exit_code=None, error=f"task setup failed: {setup.error or setup.exit_code}")
                return _row(job, task, folder, failed, verdict=None, totals={})
        upstream, script = _upstream(stack, job, task, site_url, workspace)
        timeout = config.agent_timeout or task.agent_timeout
        # a request may wait as long as the trial may last (a busy single-slot server queues it)
        upstream = dataclasses.replace(upstream, timeout=max(upstream.timeout, timeout))
        proxy = stack.enter_context(MeteringProxy(upstream, folder / "exchanges.jsonl", cassette=_cassette(job, task),
                                                  rewrite={str(folder): "{trial}"}))
        ctx = TrialContext(task=task, agent=job.agent, trial=job.trial, folder=folder, workspace=workspace, home=home,
                           ga_home=ga_home, logs=folder / "logs", instruction=task.render_instruction(site_url),
                           model=config.model, openai_url=proxy.openai_url, anthropic_url=proxy.anthropic_url,
                           api_key=proxy.token, env=env, deadline=time.monotonic() + timeout,
                           max_turns=config.max_turns, site_url=site_url)
        adapter = resolve(job.spec or job.agent)
        if script is False:
            missing = task.path / "scripted" / f"{job.agent}.json"
            ran = AgentRun(exit_code=None, error=f"no scripted upstream for {job.agent}: {missing} is missing")
        else:
            ran = _run_agent(adapter, ctx)
        proxy.close()  # before the totals: what the agent left waiting on the model is metered too
        totals = proxy.totals()
        verdict = verify(ctx, site.posts if site is not None else None)
        atif.export(folder / "trajectory.atif.json", proxy.exchanges, agent=job.agent,
                    version=getattr(adapter, "version", ""), model=config.model,
                    session=f"{job.agent}-{task.name}-{job.trial}", instruction=ctx.instruction)
        row = _row(job, task, folder, ran, verdict=verdict, totals=totals, adapter=adapter)
        if script not in (None, False):
            row["script_complete"] = _script_complete(script)
        return row


def _run_agent(adapter, ctx: TrialContext) -> AgentRun:
    try:
        return adapter.run(ctx)
    except Exception as e:
        (ctx.logs / "adapter-error.txt").write_text(traceback.format_exc(), encoding="utf-8")
        return AgentRun(exit_code=None, error=f"adapter error: {type(e).__name__}: {e}")


def _upstream(stack: ExitStack, job: Job, task: Task, site_url: str, workspace: Path):
    """(the proxy's upstream, the scripted server or None; False when a scripted run has no script for the agent)."""
    config = job.config
    if taught_round(job, task):
        from tests.scripted import ScriptedServer

        server = stack.enter_context(ScriptedServer(taught_script(task)))
        return Upstream(openai_base=server.url, timeout=config.upstream.timeout), server
    if not config.scripted:
        return config.upstream, None
    script_file = task.path / "scripted" / f"{job.agent}.json"
    if not script_file.is_file():
        return Upstream(), (None if job.agent in ("oracle", "nop") else False)
    from tests.scripted import ScriptedServer

    text = script_file.read_text(encoding="utf-8").replace("{{site_url}}", site_url)
    text = text.replace("{{workspace}}", json.dumps(str(workspace))[1:-1])
    server = stack.enter_context(ScriptedServer(json.loads(text)))
    return Upstream(openai_base=server.url, timeout=config.upstream.timeout), server


def taught_round(job: Job, task: Task) -> bool:
    """Round 1 of a family for the `ga:taught` arm: played by the scripted upstream, a capable model's run."""
    return bool(task.family) and task.round == 1 and "taught" in job.agent.partition(":")[2].split("+")


def taught_script(task: Task) -> list[dict]:
    """The capable model's run: solution/taught.json (a tests.scripted script) if the task has one, else one code_run
    of solution/solve.sh and a short answer (the oracle's procedure, as a capable model would run it)."""
    own = task.path / "solution" / "taught.json"
    if own.is_file():
        return json.loads(own.read_text(encoding="utf-8"))
    solve = (task.path / "solution" / "solve.sh").read_text(encoding="utf-8")
    body = "\n".join(line for line in solve.splitlines() if not line.startswith("#!"))
    return [{"tool_calls": [{"name": "code_run", "arguments": {"type": "bash", "script": body}}]},
            {"content": "Done: the task is complete."}]


def _script_complete(server) -> bool:
    try:
        server.assert_complete()
    except AssertionError:
        return False
    return True


def _cassette(job: Job, task: Task) -> Cassette | None:
    for mode, base in (("replay", job.config.replay), ("record", job.config.record)):
        if base is not None:
            return Cassette(base / job.agent / task.name / f"{job.trial}.jsonl", mode)
    return None


def _row(job: Job, task: Task, folder: Path, ran: AgentRun, *, verdict: Verdict | None, totals: dict,
         adapter=None) -> dict:
    """The results.jsonl line: the contract's fields first, then what explains them."""
    verdict = verdict or Verdict(success=False, reward=0.0, exit_code=None)
    version = adapter.installed_version() if hasattr(adapter, "installed_version") else getattr(adapter, "version", "")
    row = {"task": task.name, "agent": job.agent, "trial": job.trial, "success": verdict.success,
           "input_tokens": totals.get("input_tokens", 0), "cached_tokens": totals.get("cached_tokens", 0),
           "output_tokens": totals.get("output_tokens", 0), "requests": totals.get("requests", 0),
           "tool_calls": totals.get("tool_calls", 0), "wall_s": round(ran.wall_s, 3),
           "reward": verdict.reward, "family": task.family, "round": task.round, "model": job.config.model,
           "failed_requests": totals.get("failed_requests", 0), "usage_local": totals.get("usage_local", 0),
           "server_s": totals.get("server_s", 0.0), "wait_s": totals.get("wait_s", 0.0),
           "exit_code": ran.exit_code, "timed_out": ran.timed_out, "error": ran.error or verdict.error,
           "answers_given": ran.answers_given, "self_reported": ran.self_reported, "claimed_done": ran.claimed_done,
           "acted": ran.acted if ran.acted is not None else bool(totals.get("tool_calls")),
           "agent_version": version, "agent_config": getattr(adapter, "config", {}), "split": task.split,
           "tier": task.tier, "server": job.config.server,
           "flags": {"max_turns": job.config.max_turns, "timeout": job.config.agent_timeout or task.agent_timeout},
           "verifier": {"exit_code": verdict.exit_code, "timed_out": verdict.timed_out, "output": verdict.output},
           "trial_dir": str(folder), "host": socket.gethostname(), "worker_pid": os.getpid(),
           "finished": time.time()}
    return row


def failed_row(job: Job, path: Path, error: str, trace: str) -> dict:
    task = Task(name=path.name, path=path, instruction="")
    row = _row(job, task, trial_folder(job.config.out, job.agent, path.name, job.trial),
               AgentRun(exit_code=None, error=error), verdict=None, totals={})
    row["traceback"] = trace[-4000:]
    return row
