"""The context benchmark: a recorded 60-turn session replayed with compaction and with everything kept, and a
stress run of huge outputs against a server that refuses requests longer than its window.

    python bench/perf/context_bench.py [--budget 32000] [--steps small|large] [--fixture FILE.json.gz]

Replay: the real agent loop, context and dispatcher, the real tool schemas; the model and the tool results come from
the fixture (bench/perf/context_record.py made it with the real tools). Tokens are o200k_base counts of each request as
rendered text (the schemas, then each message). The "server" reports those counts as usage, as a real one would.
--steps large replays with the masking --local uses (GA_CONTEXT_STEPS=large: fewer, deeper steps; its budget there is
24,576 tokens, 0.75 of the model's window). Figures: total prompt tokens (compaction vs everything kept), the prefix
each request shares with the previous one,
the prompt-cache hit share a provider keeping the previous request's prefix would see, the largest request against
the budget plus one turn's results, and whether the facts later turns need are still in the requests.
Stress: real tools (no browser) and the scripted HTTP server with a 32,768-token window (it counts chars/4 of the
JSON, its own "tokenizer"): outputs of megabytes, 30 parallel reads; no request may be refused.
Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.harness.meter import count as count_tokens  # noqa: E402
from ga.agent import Agent  # noqa: E402
from ga.config import load_settings  # noqa: E402
from ga.model.client import OpenAIModel  # noqa: E402
from ga.model.settings import ModelSettings  # noqa: E402
from ga.protocols import Reply, ToolCall, Usage  # noqa: E402
from ga.runs.folder import Run  # noqa: E402
from ga.tooling.dispatch import Dispatcher  # noqa: E402
from ga.tooling.spec import ToolResult  # noqa: E402
from tests.scripted import ScriptedServer, ScriptedTerminal, tool_call  # noqa: E402
from tools import load_tools  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "context_session.json.gz"
PROBE = ("p99", "p99_ms=211.5")
"""The probe: the p99 latency is printed by a code run early on and written in no checkpoint, so at the end it can
only come from that result's stub."""
NEEDED = {"p95": ("184.6", 14), "release": ("4.12.3", 17), "failing test": ("1243.5", 6)}
"""Facts later turns need: (value, the turn whose result first shows it); every later request must still hold it."""


def render(messages: list[dict], tools: list[dict]) -> str:
    """A request as the text a chat template would make of it (the tool schemas first, as servers put them)."""
    parts = [json.dumps(tools, ensure_ascii=False)] if tools else []
    for m in messages:
        calls = "".join(f"\n<call {c['function']['name']}>{c['function']['arguments']}"
                        for c in m.get("tool_calls") or [])
        parts.append(f"<|{m['role']}|>\n{m.get('content') or ''}{calls}")
    return "\n".join(parts)


class ReplayModel:
    """Answers from the fixture; a request without tools is the context's summary request (a scripted note)."""

    def __init__(self, turns: list[dict]):
        self.steps = list(turns)  # the last one, without calls, is the answer
        self.requests: list[dict] = []

    def context_window(self) -> int | None:
        return None

    def complete(self, messages, tools, on_text=None, deadline=None) -> Reply:
        text = render(messages, tools)
        prompt = count_tokens(text)
        self.requests.append({"text": text, "tokens": prompt, "main": bool(tools), "messages": messages})
        if not tools:
            note = ("## Goal\nFix the report totals; write REPORT.md.\n## Progress\nSee the kept turns and the "
                    "checkpoint.\n## Next step\nContinue from the newest turn.")
            return Reply(content=note, usage=Usage(requests=1, prompt_tokens=prompt, completion_tokens=40))
        step = self.steps.pop(0)
        calls = [ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in step["calls"]]
        return Reply(content=step["content"], tool_calls=calls, finish_reason="tool_calls" if calls else "stop",
                     usage=Usage(requests=1, prompt_tokens=prompt, completion_tokens=30))


def replay_tools(turns: list[dict]) -> list:
    recorded = {c["id"]: c for t in turns for c in t["calls"]}

    def run(args: dict, ctx) -> ToolResult:
        call = recorded[ctx.call_id]
        return ToolResult(content=call["result"], is_error=call["is_error"])

    specs = []
    for spec in load_tools():
        if spec.name == "update_working_checkpoint":
            specs.append(spec)  # the real one: the checkpoint is state the context shows every turn
        else:
            specs.append(dataclasses.replace(spec, run=run, check=None))
    return specs


def replay(fixture: dict, budget: int, home: Path, steps: str = "small") -> tuple[ReplayModel, Agent]:
    turns = fixture["turns"]
    model = ReplayModel(turns)
    workspace = home / "ws"
    workspace.mkdir(parents=True)
    settings = load_settings(env={}, home=home, workdir=workspace, model="replay", autonomous=True, max_turns=0,
                             context_tokens=budget)
    run = Run.create(settings.runs_dir, fixture["task"], {})
    run.state.setdefault("context", {})["steps"] = steps  # as the composition root sets it
    # a replay changes no file and sends every schema, as the session it replays did
    agent = Agent(settings=settings, model=model, dispatcher=Dispatcher(replay_tools(turns)), run=run,
                  ui=ScriptedTerminal(), interactive=False,
                  model_settings=ModelSettings(doubt_claims=False, defer_tools=False))
    outcome = agent.start()
    assert outcome.status == "done", outcome
    return model, agent


def common_prefix(a: str, b: str) -> str:
    n = min(len(a), len(b))
    low, high = 0, n  # binary search on the longest common prefix (slices compare in C)
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return a[:low]


def prefix_figures(requests: list[dict]) -> tuple[list[float], int]:
    """Per consecutive pair of main requests, the share of the earlier one that starts the later one (by tokens);
    and the prompt tokens a provider caching the previous main request's prefix would serve from cache."""
    shares, cached, previous = [], 0, None
    for r in requests:
        if previous is not None:
            common = count_tokens(common_prefix(previous["text"], r["text"]))
            cached += common
            if r["main"]:
                shares.append(common / previous["tokens"])
        if r["main"]:
            previous = r
    return shares, cached


def turn_results(agent: Agent) -> int:
    """The largest total a single turn's results reached, in tokens, as given to the model."""
    best, current = 0, 0
    for m in agent.context.messages:
        if m["role"] == "assistant":
            best, current = max(best, current), 0
        elif m["role"] == "tool":
            current += count_tokens(m["content"])
    return max(best, current)


def where(value: str, messages: list[dict]) -> str:
    places = []
    for m in messages:
        text = m.get("content") or ""
        if value not in text:
            continue
        if "[Working checkpoint" in text and value in text.split("[Working checkpoint")[1]:
            places.append("checkpoint")
        if text.startswith("[old result masked") and value in text.split("[Working checkpoint")[0]:
            places.append("stub")
        elif text.startswith("[Hand-off"):
            places.append("hand-off")
        elif m["role"] == "tool" and value in text.split("[Working checkpoint")[0]:
            places.append("result")
    if any(value in c["function"]["arguments"] for m in messages for c in m.get("tool_calls") or []):
        places.append("call arguments")
    return ", ".join(sorted(set(places))) or "nowhere"


def report(fixture: dict, budget: int, kind: str = "small") -> list[tuple[str, bool]]:
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        compact, agent = replay(fixture, budget, Path(a), kind)
        everything, _ = replay(fixture, 100_000_000, Path(b))
        steps = [n for n in agent.ui.notices if n.startswith("context ")]
    total_c = sum(r["tokens"] for r in compact.requests)
    total_e = sum(r["tokens"] for r in everything.requests)
    shares, cached = prefix_figures(compact.requests)
    _, cached_e = prefix_figures(everything.requests)
    main = [r for r in compact.requests if r["main"]]
    largest, per_turn = max(r["tokens"] for r in main), turn_results(agent)
    good = sum(s >= 0.9 for s in shares)
    print(f"\n== replay of a recorded {len(fixture['turns'])}-turn session (budget {budget:,} tokens, {kind} steps, "
          "o200k_base)")
    print(f"total prompt tokens: everything kept {total_e:,} · compaction {total_c:,} "
          f"({total_e / total_c:.2f}× fewer; target ≥ 3×)")
    print(f"requests: {len(main)} + {len(compact.requests) - len(main)} summary; compaction steps: {len(steps)}")
    print(f"consecutive pairs sharing ≥ 90% of the previous request's prefix: {good}/{len(shares)} "
          f"({good / len(shares):.0%}; target ≥ 90%)")
    print(f"estimated prompt-cache hit share (cached/prompt): compaction {cached / total_c:.0%} "
          f"({total_c - cached:,} uncached tokens) · everything kept {cached_e / total_e:.0%} "
          f"({total_e - cached_e:,} uncached)")
    print(f"tokens a local server evaluates (those not in the previous request's prefix): {total_c - cached:,}, "
          f"{(total_c - cached) / (total_e - cached_e):.2f}× those of everything kept")
    print(f"largest request {largest:,} tokens; budget + the largest turn's results = {budget:,} + {per_turn:,}")
    checks = [("≥ 3× fewer prompt tokens", total_e >= 3 * total_c),
              ("≥ 90% of pairs share ≥ 90% of their prefix", good >= 0.9 * len(shares)),
              ("largest request ≤ budget + one turn's results", largest <= budget + per_turn)]
    for name, (value, since) in NEEDED.items():
        missing = [i + 1 for i, r in enumerate(main) if i + 1 > since and value not in r["text"]]
        print(f"fact {name} = {value} (from turn {since}): in every later request: {not missing} "
              f"(final request: {where(value, main[-1]['messages'])})")
        checks.append((f"fact {name} kept", not missing))
    label, value = PROBE
    place = where(value, main[-1]["messages"])
    print(f"probe: the {label} latency ({value}) in the final request: {place}")
    checks.append(("probe answer in a stub or the checkpoint", "stub" in place or "checkpoint" in place))
    return checks


def stress(home: Path) -> list[tuple[str, bool]]:
    """Huge outputs against a server with a 32,768-token window: nothing may be refused for length."""
    ws = home / "ws"
    ws.mkdir(parents=True)
    for k in range(30):
        (ws / f"big{k}.txt").write_text("".join(f"file {k} line {i}: {'lorem ipsum dolor ' * 6}\n"
                                                for i in range(20_000)))
    (ws / "one_line.txt").write_text("x" * 5_000_000)
    (ws / "cjk.txt").write_text("".join(f"{i}: 中文文本的一行，用来测试上下文的预算。\n" for i in range(50_000)))
    flood = "import sys\nfor i in range(300000): print('flood line', i, 'x' * 40)"
    steps = [
        {"tool_calls": [tool_call("code_run", script=flood, timeout=120)]},
        {"tool_calls": [tool_call("file_read", path=f"big{k}.txt", count=1000) for k in range(30)]},
        {"tool_calls": [tool_call("file_read", path="one_line.txt")]},
        {"tool_calls": [tool_call("file_read", path="cjk.txt", count=1000)]},
        *({"tool_calls": [tool_call("file_read", path=f"big{k}.txt", start=5000, count=1000),
                          tool_call("code_run", script=f"print(open('big{k}.txt').read()[:200000])")]}
          for k in range(12)),
        {"content": "survived"},
    ]
    with ScriptedServer(steps, window=32_768) as server:
        settings = load_settings(env={}, home=home, workdir=ws, model="stress", autonomous=True, max_turns=0,
                                 base_url=server.url, api_key="x")
        run = Run.create(settings.runs_dir, "read everything", {})
        agent = Agent(settings=settings, model=OpenAIModel(settings), dispatcher=Dispatcher(load_tools()), run=run,
                      ui=ScriptedTerminal(), interactive=False)
        outcome = agent.start()
    sizes = [len(json.dumps(r.get("messages", [])) + json.dumps(r.get("tools", []))) // 4 for r in server.requests]
    steps_done = sum(n.startswith("context ") for n in agent.ui.notices)
    print(f"\n== stress: {len(server.requests)} requests against a 32,768-token window, {steps_done} compaction "
          f"steps; refused for length: {server.refused}; largest request {max(sizes):,} tokens (server's count); "
          f"status {outcome.status}")
    return [("stress: no request refused for length", server.refused == 0 and outcome.status == "done")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=32_000)
    parser.add_argument("--steps", choices=("small", "large"), default="small")
    parser.add_argument("--fixture", default=str(FIXTURE))
    parser.add_argument("--no-stress", action="store_true")
    opts = parser.parse_args()
    with gzip.open(opts.fixture, "rt", encoding="utf-8") as f:
        fixture = json.load(f)
    checks = report(fixture, opts.budget, opts.steps)
    if not opts.no_stress:
        with tempfile.TemporaryDirectory() as tmp:
            checks += stress(Path(tmp))
    print()
    for name, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    sys.exit(0 if all(ok for _, ok in checks) else 1)


if __name__ == "__main__":
    main()
