"""Core runtime figures: fixed context per request, dispatcher overhead, a 200-turn run's memory and per-turn cost.

    python bench/core_bench.py [--turns 200]

Prints figures; asserts nothing (targets: context ≤ 1,300 tokens with nine tools; dispatch < 1 ms median;
flat memory and per-turn overhead over 200 turns).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.tokens import count_tokens
from ga.agent import Agent, system_prompt
from ga.config import load_settings
from ga.dispatch import Dispatcher, ToolContext, ToolResult, ToolSpec
from ga.permissions import SideEffect
from ga.protocols import Reply, ToolCall, Usage
from ga.runs import Run
from ga.ui import Terminal
from tools import load_tools


def fixed_context(settings) -> None:
    specs = load_tools()
    system = system_prompt(settings)
    tools = json.dumps([s.schema() for s in specs])
    print("\n== fixed context per request (o200k_base), task 'Hello'")
    print(f"system prompt        {count_tokens(system):6d} tokens")
    for s in specs:
        print(f"  {s.name:26s} {count_tokens(json.dumps(s.schema())):5d} tokens")
    total = count_tokens(system) + count_tokens(tools) + count_tokens("Hello")
    print(f"total ({len(specs)} tools)      {total:6d} tokens   (target ≤ 1,300 with all nine)")


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

    def complete(self, messages, tools, on_text=None) -> Reply:
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


if __name__ == "__main__":
    main()
