"""ga bench SUITE --agents ga,mini-swe-agent --trials 3 [--workers N] [--out DIR] ...
ga bench report DIR · ga bench install AGENT [--force] · ga bench agents"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import textwrap
from pathlib import Path

from ga.errors import ConfigError
from ga.invocation import invocation

EXIT_USAGE, EXIT_INTERRUPTED = 2, 130
TRUST = ("What the bench trusts: a suite's setup (task.toml), its checker (tests/test.sh) and its solution "
         "(solve.sh, the oracle) run on this machine as you, outside any sandbox, and so do the agents (ga in its own "
         "sandbox when bubblewrap works): run only suites you trust. A Dask scheduler runs what it is sent and the "
         "bench loads what it sends back (pickles): use one you trust; dask:// (tcp://) is neither encrypted nor "
         "authenticated, tls:// with --tls-ca-file, --tls-cert and --tls-key is both.")
TOOLS = ("report", "install", "agents", "list")
"""`bench WORD ...` for these words is that tool, not a suite named WORD."""


def _terminated(signum: int, frame: object) -> None:
    """`kill PID`, timeout(1), a service manager: stop as Ctrl-C does, the agents of the running trials with it
    (otherwise they live on, orphaned, and keep the model server busy)."""
    raise KeyboardInterrupt


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=f"{invocation()} bench", description="Run agents on a task suite through one metering proxy; write "
        "results.jsonl (resumable), report.html, PNG charts and ATIF trajectories.",
        epilog="\n\n".join(textwrap.fill(t, 79) for t in (
            "Also: `bench report DIR` (rewrite the report), `bench install AGENT`, `bench agents`.", TRUST)),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("suite", type=Path, help="a folder of tasks (or one task folder)")
    p.add_argument("--agents", default="ga", help="comma-separated: ga, oracle, nop, mini-swe-agent, pi, ... or a "
                   "path to an agent config (.toml); the first is the reference for win/tie/loss (default: ga)")
    p.add_argument("--trials", type=int, default=1, help="trials per agent and task (default 1)")
    p.add_argument("--workers", type=int, default=1, help="trials at once (default 1: a local model serves one)")
    p.add_argument("--out", type=Path, help="results folder (default bench/out/SUITE-NAME); rerun to resume")
    p.add_argument("--executor", default="local", help="local (a process pool), dask://HOST:PORT (plain TCP) or "
                   "tls://HOST:PORT (with the three --tls-* files)")
    for flag, what in (("--tls-ca-file", "the CA that signed the scheduler's certificate"),
                       ("--tls-cert", "this client's certificate"), ("--tls-key", "its private key")):
        p.add_argument(flag, metavar="PEM", help=f"with --executor tls://: {what}")
    p.add_argument("--model", help="model name for every agent (default: $GA_MODEL)")
    p.add_argument("--upstream", help="the real OpenAI-compatible endpoint (default: $OPENAI_BASE_URL), or "
                   "`scripted`: each task's scripted/AGENT.json answers (offline)")
    p.add_argument("--anthropic-upstream", default=os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com",
                   help="the Anthropic endpoint for agents that speak its Messages API")
    p.add_argument("--tasks", help="comma-separated task names to run (NAME* for a prefix)")
    p.add_argument("--split", choices=("dev", "test"), help="only the tasks of this split (task.toml [metadata] "
                   "split); dev tasks may be looked at while changing an agent, test tasks are only reported")
    p.add_argument("--tier", choices=("small", "standard"), help="only the tasks of this tier")
    p.add_argument("--max-turns", type=int, default=30, help="model requests per trial, for agents that take a "
                   "limit (default 30)")
    p.add_argument("--output-cap", type=int, default=0, metavar="TOKENS",
                   help="output tokens per model request at most, for every agent alike (the proxy lowers or sets "
                   "each request's max_tokens; recorded in every row's server); 0: each agent's own (default)")
    p.add_argument("--timeout", type=float, help="seconds per trial for every task (default: each task's "
                   "[agent] timeout_sec)")
    cassettes = p.add_mutually_exclusive_group()
    cassettes.add_argument("--record", type=Path, metavar="DIR", help="save every exchange into cassettes in DIR")
    cassettes.add_argument("--replay", type=Path, metavar="DIR", help="answer from the cassettes in DIR (no model)")
    p.add_argument("--no-report", action="store_true", help="only results.jsonl")
    return p


def tool_parser(command: str) -> argparse.ArgumentParser:
    """The parser of `bench report`, `bench install` or `bench agents`."""
    p = argparse.ArgumentParser(prog=f"{invocation()} bench {command}", description={
        "report": "Rewrite a results folder's report.html and charts from its results.jsonl.",
        "install": "Install another agent as its config says, into its own prefix: $GA_BENCH_AGENTS/NAME "
                   "(default ~/.cache/ga/bench-agents/NAME).",
        "agents": "List the agents the benchmark can run: built in, and the configs in bench/harness/agents/, with "
                  "whether each is installed here.",
        "list": "List the task suites of this checkout (bench/suites/) and how many tasks each holds.",
    }[command])
    if command == "report":
        p.add_argument("dir", type=Path, help="a results folder (bench --out DIR), holding results.jsonl")
    elif command == "install":
        p.add_argument("agent", help="an agent name (see `bench agents`) or the path to its .toml config")
        p.add_argument("--force", action="store_true", help="install again, even when it is installed")
    return p


def main(argv: list[str]) -> int:
    if argv and argv[0] in TOOLS:
        return _tool(argv[0], tool_parser(argv[0]).parse_args(argv[1:]))
    args = build_parser().parse_args(argv)
    try:
        return _bench(args)
    except ConfigError as e:
        print(f"ga bench: {e}", file=sys.stderr)
        return EXIT_USAGE


def _config(args: argparse.Namespace, agents: list[str]):
    from bench.harness.proxy import Upstream
    from bench.harness.trial import BenchConfig

    for flag in ("trials", "workers", "max_turns"):
        if getattr(args, flag) < 1:
            raise ConfigError(f"--{flag.replace('_', '-')} must be 1 or more")
    if args.output_cap < 0:
        raise ConfigError("--output-cap must be 0 (none) or more")
    if args.timeout is not None and args.timeout <= 0:
        raise ConfigError("--timeout must be more than 0 seconds")
    upstream = args.upstream or os.environ.get("OPENAI_BASE_URL", "")
    scripted = upstream == "scripted"
    model = args.model or os.environ.get("GA_MODEL") or ("scripted" if scripted or args.replay else "")
    needs_model = any(a not in ("oracle", "nop") for a in agents)
    if needs_model and not (scripted or args.replay) and not upstream:
        raise ConfigError("No model endpoint: give --upstream URL (or set OPENAI_BASE_URL), --upstream scripted "
                          "for the offline scripts, or --replay DIR.")
    if needs_model and not model:
        raise ConfigError("No model name: give --model (or set GA_MODEL).")
    out = args.out or Path("bench") / "out" / args.suite.resolve().name
    asks_model = needs_model and upstream and not (scripted or args.replay)
    server = check_upstream(upstream, os.environ.get("OPENAI_API_KEY", "")) if asks_model else {}
    if args.output_cap:
        server["output_cap"] = args.output_cap
    return BenchConfig(server=server,
        out=out.resolve(), model=model, scripted=scripted, max_turns=args.max_turns, agent_timeout=args.timeout,
        record=args.record.resolve() if args.record else None, replay=args.replay.resolve() if args.replay else None,
        upstream=Upstream(openai_base="" if scripted else upstream, anthropic_base=args.anthropic_upstream,
                          api_key=os.environ.get("OPENAI_API_KEY", ""), output_cap=args.output_cap,
                          anthropic_key=os.environ.get("ANTHROPIC_API_KEY", "")))


def check_upstream(base_url: str, key: str) -> dict:
    """The upstream answers GET /models as an OpenAI-compatible API does, before any trial (a typo'd URL would
    otherwise fail every trial, each after the agent's own retries); then what it says about itself."""
    import urllib.error
    import urllib.request

    url = base_url.rstrip("/") + "/models"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            json.loads(response.read(1_000_000))
    except urllib.error.HTTPError as e:
        why = "it refused the key (OPENAI_API_KEY)" if e.code in (401, 403) else \
            "not the base of an OpenAI-compatible API (most end in /v1)"
        raise ConfigError(f"--upstream {base_url}: GET {url} answered HTTP {e.code}: {why}. No trial was run.") \
            from None
    except (urllib.error.URLError, OSError) as e:
        raise ConfigError(f"--upstream {base_url} cannot be reached ({getattr(e, 'reason', e)}): check the URL (host, "
                          "port, /v1) and that the server runs. No trial was run.") from None
    except ValueError:
        raise ConfigError(f"--upstream {base_url}: GET {url} did not answer JSON: not the base of an "
                          "OpenAI-compatible API (most end in /v1). No trial was run.") from None
    return describe_server(base_url, key)


def describe_server(base_url: str, key: str) -> dict:
    """What the upstream says about itself: the models it serves, and llama.cpp's build and settings when it is one."""
    import urllib.request

    def get(url: str) -> dict:
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                body = json.loads(response.read(1_000_000))
        except (OSError, ValueError):
            return {}
        return body if isinstance(body, dict) else {}

    base = base_url.rstrip("/")
    info: dict = {"url": base, "models": [m.get("id") for m in get(base + "/models").get("data", [])
                                          if isinstance(m, dict)]}
    props = get(base.removesuffix("/v1") + "/props")
    if props:
        settings = props.get("default_generation_settings") or {}
        info["llama.cpp"] = {"build": props.get("build_info"), "n_ctx": settings.get("n_ctx"),
                             "temperature": (settings.get("params") or settings).get("temperature")}
    return info


def _bench(args: argparse.Namespace) -> int:
    from bench.harness import charts, curve, report, results, runner
    from bench.harness.adapters import resolve
    from bench.harness.executors import make_executor
    from bench.harness.tasks import load_suite

    specs = [a.strip() for a in args.agents.split(",") if a.strip()]
    agents: dict[str, str] = {}
    for given in specs:  # unknown or missing agents fail here, before any trial
        spec = str(Path(given).expanduser().resolve()) if given.endswith(".toml") else given  # workers run elsewhere
        adapter = resolve(spec)
        if hasattr(adapter, "check_installed"):
            adapter.check_installed()
        if adapter.name in agents:
            raise ConfigError(f"--agents: {adapter.name} is given twice")
        agents[adapter.name] = spec
    if not agents:
        raise ConfigError("--agents: give one or more agents, comma-separated (e.g. ga,mini-swe-agent)")
    tasks = load_suite(args.suite, [t.strip() for t in args.tasks.split(",")] if args.tasks else None,
                       split=args.split, tier=args.tier)
    config = _config(args, list(agents))
    if not args.no_report:
        charts.check_available()
    runner.check_out_folder(config.out, config)
    files = (args.tls_ca_file, args.tls_cert, args.tls_key)
    if any(files) and not all(files):
        raise ConfigError("give all three of --tls-ca-file, --tls-cert and --tls-key")
    executor = make_executor(args.executor, args.workers, tls=files if all(files) else None)
    print(f"ga bench: {len(tasks)} tasks × {', '.join(agents)} × {args.trials} trials → {config.out}",
          file=sys.stderr)
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        runner.run(tasks, agents, args.trials, config, executor=executor)
    except KeyboardInterrupt:  # the runner has stopped the trials
        print("\nga bench: interrupted; the finished trials are saved: run the same command to resume.",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous)
        executor.close()
    from bench.harness.stats import summarise

    print(report.terminal_table(summarise(results.load(config.out / "results.jsonl"), list(agents))), file=sys.stderr)
    if not args.no_report:
        path = report.write(config.out, list(agents), title=args.suite.resolve().name)
        print(f"ga bench: report {path}", file=sys.stderr)
    for split, learnt in report.curves(results.load(config.out / "results.jsonl")).items():
        print(f"{split} families, " + "\n".join(curve.lines(learnt)), file=sys.stderr)
    return 0


def _tool(command: str, args: argparse.Namespace) -> int:
    try:
        if command == "report":
            if not (args.dir / "results.jsonl").is_file():
                raise ConfigError(f"{args.dir} holds no results.jsonl: give the folder a bench run wrote (--out DIR)")
            from bench.harness import report

            print(report.write(args.dir.resolve()))
            return 0
        if command == "install":
            from bench.harness.adapters import resolve
            from bench.harness.cli_agent import CLIAgent

            adapter = resolve(args.agent)
            if not isinstance(adapter, CLIAgent):
                raise ConfigError(f"{args.agent} is built in: nothing to install")
            return adapter.install_now(args.force)
        return _list_agents() if command == "agents" else _list_suites()
    except ConfigError as e:
        print(f"ga bench: {e}", file=sys.stderr)
        return EXIT_USAGE


def _list_agents() -> int:
    from bench.harness.adapters import CONFIGS
    from bench.harness.cli_agent import CLIAgent

    rows = [("oracle", "built in", "", "runs solution/solve.sh"), ("nop", "built in", "", "does nothing"),
            ("ga", "built in", "", f"{invocation()} --json --autonomous")]
    for path in sorted(CONFIGS.glob("*.toml")):
        agent = CLIAgent.load(path)
        here = "installed" if agent.prefix.is_dir() and any(agent.prefix.iterdir()) else "not installed"
        status = here if agent.install or agent.install_of else "external"
        rows.append((agent.name, status, "tested" if agent.tested else "untested", agent.description))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)) + "  " + row[3])
    print(f"install one with: {invocation()} bench install NAME", file=sys.stderr)
    return 0


def _list_suites() -> int:
    from bench.harness.context import ROOT

    suites = ROOT / "bench" / "suites"
    found = sorted(p for p in suites.iterdir() if p.is_dir()) if suites.is_dir() else []
    for suite in found:
        tasks = sum(1 for t in suite.iterdir() if (t / "task.toml").is_file())
        print(f"{suite.name:12s} {tasks:4d} tasks  {suite}")
    if not found:
        print(f"ga bench: no suites in {suites}", file=sys.stderr)
    print(f"run one with: {invocation()} bench bench/suites/NAME --agents ga (see `bench agents`)", file=sys.stderr)
    return 0
