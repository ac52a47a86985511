"""The context through the CLI: a server refusing a request as too long, a server's window, the usage it reports."""

from __future__ import annotations

import json
import signal

import pytest

from tests.ga.cli.test_cli import events, ga, ga_background, only_run, wait_for
from tests.scripted import ScriptedServer, tool_call


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def big_files(workspace, n: int, lines: int = 200) -> list[dict]:
    for k in range(n):
        (workspace / f"part{k}.txt").write_text("".join(f"part {k} line {i}: the quick brown fox jumps\n"
                                                        for i in range(1, lines + 1)))
    return [{"tool_calls": [tool_call("file_read", path=f"part{k}.txt")]} for k in range(n)]


@pytest.mark.parametrize("flavour", ["openai", "llama.cpp", "vllm"])
def test_a_context_length_refusal_is_answered_by_compacting_and_retrying_once(home, workspace, flavour):
    steps = [*big_files(workspace, 4), {"fault": "context_length", "flavour": flavour, "window": 8_192},
             {"content": "read them all"}]
    with ScriptedServer(steps) as server:
        proc = ga(["read the parts", "--json"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "read them all"
    refused, retried = server.requests[4], server.requests[5]
    assert len(json.dumps(retried)) < len(json.dumps(refused)) / 2
    assert "[old result masked" in json.dumps(retried["messages"])
    assert "Compacting and retrying once" in proc.stderr
    (step,) = events(only_run(home), "context")
    state = json.loads((only_run(home) / "state.json").read_text())
    assert state["context"]["window"] == 8_192 and step["budget"] == 8_192 - 1_024


def test_a_resumed_run_sends_the_same_masked_prefix_as_before_it_was_killed(home, workspace):
    reads = big_files(workspace, 8, lines=120)
    steps = [*reads, {"delay": 30, "content": "never delivered"}, {"content": "done"}]
    with ScriptedServer(steps) as server:
        proc = ga_background(["read the parts"], server, home, workspace, GA_CONTEXT_TOKENS="6000")
        wait_for(lambda: len(server.requests) == 9)  # the ninth request is in flight
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        before = server.requests[8]
        resumed = ga(["--resume", only_run(home).name], server, home, workspace, GA_CONTEXT_TOKENS="6000")
        server.assert_complete()
    assert resumed.returncode == 0, resumed.stderr
    assert "[old result masked" in json.dumps(before["messages"])
    assert server.requests[9]["messages"] == before["messages"]


def test_a_refusal_after_compacting_fails_clearly_and_resume_sends_a_compacted_request(home, workspace):
    steps = [*big_files(workspace, 4), {"fault": "context_length", "window": 8_192},
             {"fault": "context_length", "window": 8_192}]
    with ScriptedServer(steps) as server:
        proc = ga(["read the parts"], server, home, workspace)
        assert proc.returncode == 1
        assert "refused again after compacting" in proc.stderr and "--resume" in proc.stderr
        run_id = only_run(home).name
        server.add([{"content": "done after all"}])
        resumed = ga(["--resume", run_id, "--json"], server, home, workspace)
        server.assert_complete()
    assert resumed.returncode == 0, resumed.stderr
    first = server.requests[4]
    assert len(json.dumps(server.requests[-1])) < len(json.dumps(first)) / 2  # no oversized re-send on resume


def test_a_server_with_a_small_window_refuses_nothing_even_with_huge_outputs(home, workspace):
    """The window the server reports caps the budget; the fake counts tokens its own way (chars/4 of the JSON),
    and ga learns that scale from its usage."""
    script = "for i in range(200000): print('output line', i, 'of a program that prints far too much')"
    steps = [*big_files(workspace, 6, lines=2_000),
             {"tool_calls": [tool_call("code_run", script=script, timeout=60)]},
             {"tool_calls": [tool_call("file_read", path=f"part{k}.txt", start=500) for k in range(6)]},
             {"content": "survived"}]
    with ScriptedServer(steps, window=8_000) as server:
        proc = ga(["read everything", "--json"], server, home, workspace, GA_CONTEXT_TOKENS="32000")
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert server.refused == 0
    sizes = [len(json.dumps({"m": r["messages"], "t": r["tools"]})) // 4 for r in server.requests]
    assert max(sizes) <= 8_000


def test_json_usage_has_cached_tokens_and_the_terminal_shows_them(home, workspace):
    usage = {"prompt_tokens": 1_400, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 1_200}}
    steps = [{"tool_calls": [tool_call("file_write", path="a.txt", content="x")], "usage": usage},
             {"content": "wrote it", "usage": usage}]
    with ScriptedServer(steps) as server:
        proc = ga(["write a", "--json"], server, home, workspace)
    out = json.loads(proc.stdout)
    assert out["usage"] == {"requests": 2, "prompt_tokens": 2_800, "completion_tokens": 18, "cached_tokens": 2_400}
    assert "(1,200 cached)" in proc.stderr
