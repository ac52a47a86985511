"""Core runtime figures: fixed context per request, prompt-prefix stability, dispatcher overhead, a 200-turn run's
memory and per-turn cost; with --server, the prompt cache's effect on a real server's first request.

    python bench/perf/core_bench.py [--turns 200] [--server http://127.0.0.1:8080/v1 --model NAME]

Prints figures; asserts nothing (targets: context ≤ 1,300 tokens with nine tools; the same prefix bytes in every
workspace; dispatch < 1 ms median; flat memory and per-turn overhead over 200 turns).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.harness.meter import count as count_tokens
from ga.agent import Agent
from ga.cli.terminal import Terminal
from ga.config import load_settings
from ga.prompts import first_message, system_prompt
from ga.protocols import Reply, ToolCall, Usage
from ga.runs.folder import Run
from ga.tooling.dispatch import Dispatcher
from ga.tooling.permissions import SideEffect
from ga.tooling.spec import ToolContext, ToolResult, ToolSpec
from memory.hooks import RunMemory
from tools import load_tools


def fixed_context(settings) -> None:
    specs = load_tools()
    system = system_prompt(RunMemory(settings, run_id="bench", run_dir=settings.runs_dir / "bench"), deferred=True)
    sent = [s for s in specs if not s.deferred]  # the others' schemas wait until the run needs them
    tools = json.dumps([s.schema() for s in sent])
    first = first_message(settings, "Hello")
    print("\n== fixed context per request (o200k_base), task 'Hello'")
    print(f"system prompt        {count_tokens(system):6d} tokens   (the deferred tools named in one line)")
    for s in specs:
        print(f"  {s.name:26s} {count_tokens(json.dumps(s.schema())):5d} tokens" + ("   (deferred)" * s.deferred))
    print(f"first user message   {count_tokens(first):6d} tokens   (workspace, platform, date, task)")
    total = count_tokens(system) + count_tokens(tools) + count_tokens(first)
    print(f"total ({len(sent)} schemas sent) {total:6d} tokens   (target ≤ 1,000)")


def request_prefix(workdir: Path, task: str = "Hello") -> tuple[str, list[dict], list[dict]]:
    """(stable prefix, messages, tools) of the first request a run in `workdir` sends."""
    settings = load_settings(env={}, home=workdir.parent / "home", workdir=workdir, model="m")
    tools = [s.schema() for s in load_tools()]
    system = system_prompt(RunMemory(settings, run_id="bench", run_dir=settings.runs_dir / "bench"))
    messages = [{"role": "system", "content": system}, {"role": "user", "content": first_message(settings, task)}]
    return system + json.dumps(tools), messages, tools


def prefix_stability(root: Path) -> None:
    one, two = root / "project-a", root / "elsewhere" / "project-b"
    for folder in (one, two):
        folder.mkdir(parents=True)
    a, b = request_prefix(one)[0], request_prefix(two)[0]
    same = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    print("\n== prompt prefix across two workspaces (system prompt + tool schemas)")
    print(f"identical: {a == b}; {same:,} of {len(a):,} bytes shared before the first difference")


def server_cache(root: Path, url: str, model: str) -> None:
    """First-request time in two new workspaces back to back, with the per-run line where it is now (after)
    and where it was (first line of the system prompt: before). The server must be otherwise idle."""
    import openai

    client = openai.OpenAI(base_url=url, api_key="none", max_retries=0, timeout=600)
    print(f"\n== first request in a new workspace, {url} (max_tokens 1; 2nd right after the 1st)")
    for layout in ("before", "after"):
        times = []
        for n in range(2):
            folder = root / f"{layout}-{n}" / "ws"
            folder.mkdir(parents=True)
            _, messages, tools = request_prefix(folder)
            if layout == "before":  # the old layout: the per-run line opened the system prompt
                env, task = messages[1]["content"].split("\n\n", 1)
                messages = [{"role": "system", "content": f"{env}\n{messages[0]['content']}"},
                            {"role": "user", "content": task}]
            started = time.perf_counter()
            client.chat.completions.create(model=model, messages=messages, tools=tools, max_tokens=1)
            times.append(time.perf_counter() - started)
        print(f"{layout:6s}: workspace 1 {times[0]:5.1f} s, workspace 2 {times[1]:5.1f} s")


def dispatcher_overhead(settings, run_dir: Path, n: int = 5_000) -> None:
    noop = ToolSpec(name="noop", description="", side_effect=SideEffect.READ_ONLY,
                    parameters={"type": "object",
                                "properties": {"path": {"type": "string"}, "count": {"type": "integer"}},
                                "required": ["path"], "additionalProperties": False},
                    run=lambda args, ctx: ToolResult(content="ok"))
    dispatcher = Dispatcher([noop])
    ctx = ToolContext(settings=settings, run_dir=run_dir, ui=Terminal(quiet=True))
    calls = [ToolCall(id=f"c{i}", name="noop", arguments='{"path": "src/app.py", "count": "30"}') for i in range(n)]
    times = []
    for call in calls:
        t = time.perf_counter()
        dispatcher.dispatch([call], ctx)
        times.append(time.perf_counter() - t)
    times.sort()
    print("\n== dispatcher overhead per call (a no-op tool; parse, repair, validate, permit, budget)")
    print(f"median {statistics.median(times) * 1e3:.3f} ms   p99 {times[int(n * 0.99)] * 1e3:.3f} ms   (target < 1 ms)")


class EndlessModel:
    """Answers every request with a checkpoint update and a file read; no recording, so only the agent grows."""

    def __init__(self, turns: int):
        self.turns, self.n = turns, 0
        self.spent = 0.0

    def context_window(self) -> int | None:
        return None

    def complete(self, messages, tools, on_text=None, deadline=None) -> Reply:
        t = time.perf_counter()
        self.n += 1
        if self.n >= self.turns:
            return Reply(content="done", usage=Usage(requests=1, prompt_tokens=1, completion_tokens=1))
        calls = [ToolCall(id=f"a{self.n}", name="update_working_checkpoint",
                          arguments=json.dumps({"key_info": f"turn {self.n}: reading data.txt"})),
                 ToolCall(id=f"b{self.n}", name="file_read", arguments=json.dumps({"path": "data.txt", "count": 20}))]
        self.spent += time.perf_counter() - t
        return Reply(content="", tool_calls=calls, usage=Usage(requests=1, prompt_tokens=1, completion_tokens=1))


def long_run(home: Path, workspace: Path, turns: int) -> None:
    (workspace / "data.txt").write_text("".join(f"row {i}: some data\n" for i in range(1_000)))
    settings = load_settings(env={}, home=home, workdir=workspace, model="m", autonomous=True, max_turns=0)
    model = EndlessModel(turns)
    agent = Agent(settings=settings, model=model, dispatcher=Dispatcher(load_tools()),
                  run=Run.create(settings.runs_dir, "bench", {}), ui=Terminal(quiet=True), interactive=False)
    per_turn, rss = [], []
    step = agent.step
    def timed_step() -> None:
        t, before = time.perf_counter(), model.spent
        step()
        per_turn.append(time.perf_counter() - t - (model.spent - before))
        rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    agent.step = timed_step
    agent.start()
    first, last = statistics.median(per_turn[5:25]), statistics.median(per_turn[-20:])
    print(f"\n== {turns}-turn scripted run (2 tool calls a turn; model time excluded)")
    print(f"per-turn overhead: turns 5-25 median {first * 1e3:.2f} ms, "
          f"last 20 median {last * 1e3:.2f} ms (ratio {last / first:.2f})")
    print(f"peak RSS: after turn 25 {rss[24]:.1f} MB, at the end {rss[-1]:.1f} MB; "
          f"history {agent.context.tokens()} est. tokens (budget {agent.context.budget}), "
          f"{len(agent.context.state.get('masked', {}))} results masked")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--server", help="an OpenAI-compatible server to time the prompt cache on (idle, shared: "
                                         "4 requests)")
    parser.add_argument("--model", default="local")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        workspace.mkdir()
        settings = load_settings(env={}, home=home, workdir=workspace, model="m")
        run_dir = home / "runs" / "bench"
        run_dir.mkdir(parents=True)
        long_run(home, workspace, args.turns)  # first, so its peak RSS is the agent's, not the tokenizer's
        dispatcher_overhead(settings, run_dir)
        fixed_context(settings)
        prefix_stability(Path(tmp) / "prefix")
        if args.server:
            server_cache(Path(tmp) / "cache", args.server, args.model)


if __name__ == "__main__":
    main()
