"""The loop, driven in-process by a scripted model: answers, guards, limits, the checkpoint, pause and resume."""

from __future__ import annotations

import json
import re
import signal
import threading

import pytest

from ga.agent import Agent
from ga.config import load_settings
from ga.prompts import render
from ga.protocols import Reply, ToolCall, Usage
from ga.reply import unique_ids
from ga.runs.folder import Run
from ga.tooling.dispatch import Dispatcher
from ga.tooling.human import answer_result, candidates_of
from ga.tooling.permissions import SideEffect
from ga.tooling.spec import ToolResult, ToolSpec
from tests.scripted import ScriptedModel, ScriptedTerminal, tool_call
from tools import ask_user, code_run, file_read, update_working_checkpoint

COUNTER = {"type": "object", "properties": {}, "additionalProperties": False}


@pytest.fixture
def settings(tmp_path, workspace):
    return load_settings(env={}, home=tmp_path / "home", workdir=workspace, model="m", autonomous=True)


def counting_tool(name: str, side_effect: SideEffect, counter: list) -> ToolSpec:
    def run(args, ctx):
        counter.append(name)
        return ToolResult(content=f"{name} ran")

    return ToolSpec(name=name, description="counts", parameters=COUNTER, side_effect=side_effect, run=run)


def start(settings, steps, *, run=None, extra=(), answer=None, interactive=False, answers=(), model_settings=None):
    model = ScriptedModel(steps)
    run = run or Run.create(settings.runs_dir, "the task", {})
    dispatcher = Dispatcher([update_working_checkpoint.SPEC, ask_user.SPEC, *extra])
    agent = Agent(settings=settings, model=model, dispatcher=dispatcher, run=run, model_settings=model_settings,
                  ui=ScriptedTerminal(list(answers)), interactive=interactive, answer=answer)
    return agent.start(), model, run


def test_a_reply_without_tool_calls_is_the_answer(settings):
    outcome, model, run = start(settings, [{"content": "42"}])
    assert (outcome.status, outcome.exit_code, outcome.answer) == ("done", 0, "42")
    first = model.requests[0]["messages"][1]
    assert first["role"] == "user" and first["content"].endswith("\n\nthe task")
    assert first["content"].startswith(f"Workspace {settings.workdir} (")
    assert run.state["status"] == "done" and run.state["answer"] == "42"
    model.assert_complete()


def test_the_checkpoint_is_shown_every_turn_and_survives_compaction(settings):
    settings.context_tokens = 4_000
    calls = []
    big = ToolSpec(name="big", description="", parameters=COUNTER, side_effect=SideEffect.READ_ONLY,
                   run=lambda args, ctx: calls.append(1) or ToolResult(
                       content="".join(f"call {len(calls)} row {i}: some data\n" for i in range(120))))
    steps = [{"tool_calls": [tool_call("update_working_checkpoint", key_info="GOAL-MARKER")]}]
    steps += [{"content": f"thinking {i}", "tool_calls": [tool_call("big")]} for i in range(12)]
    steps += [{"content": "done"}]
    outcome, model, _ = start(settings, steps, extra=[big])
    assert outcome.status == "done"
    last = model.requests[-1]["messages"]
    assert "GOAL-MARKER" in last[-1]["content"]
    assert last[1]["content"].endswith("\n\nthe task")
    stubs = [str(m.get("content")) for m in last if str(m.get("content")).startswith("[old result masked")]
    assert stubs and all("· big" in stub for stub in stubs)
    assert all(r["messages"][1]["content"].endswith("\n\nthe task") for r in model.requests)
    assert all(len(json.dumps(r)) // 4 <= 4_000 for r in model.requests)  # the model's own count


def test_a_re_read_is_a_stub_until_the_earlier_result_is_masked(settings, workspace):
    settings.context_tokens = 3_500
    for name in ("notes", "a", "b", "c", "d", "e", "f"):
        (workspace / f"{name}.txt").write_text("".join(f"{name} row {i}: some data\n" for i in range(1, 301)))
    reads = ["notes", "notes", "a", "b", "c", "d", "e", "f", "notes"]
    steps = [{"tool_calls": [tool_call("file_read", path=f"{n}.txt", count=60)]} for n in reads] + [{"content": "ok"}]
    outcome, model, _ = start(settings, steps, extra=[file_read.SPEC])
    assert outcome.status == "done"
    results = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert "[unchanged: lines 1-60 of notes.txt" in json.dumps(model.requests[2]["messages"][-1])
    assert "(call call_1_0)" in model.requests[2]["messages"][-1]["content"]
    assert results[0]["content"].startswith("[old result masked")  # the first read was masked...
    assert "60|notes row 60" in results[-1]["content"]  # ...so the last read is a real one


class SummarisingModel(ScriptedModel):
    """A scripted model that also answers the context's summary request (the one without tools)."""

    def __init__(self, steps, note):
        super().__init__(steps)
        self.note, self.summary_requests = note, []

    def complete(self, messages, tools, on_text=None, deadline=None):
        if tools:
            return super().complete(messages, tools, on_text, deadline=deadline)
        self.summary_requests.append(messages)
        return Reply(content=self.note, usage=Usage(requests=1, prompt_tokens=500, completion_tokens=50))


def test_when_masking_is_not_enough_old_turns_are_folded_into_the_models_hand_off(settings):
    settings.context_tokens = 2_000
    calls = []
    note = "## Goal\nCount the rows.\n## Progress\n- 17 files counted, total 4711"
    big = ToolSpec(name="big", description="", parameters=COUNTER, side_effect=SideEffect.READ_ONLY,
                   run=lambda args, ctx: calls.append(1) or ToolResult(
                       content="".join(f"call {len(calls)} row {i}: some data\n" for i in range(30))))
    steps = [{"tool_calls": [tool_call("big")]} for _ in range(40)] + [{"content": "4711"}]
    model = SummarisingModel(steps, note)
    run = Run.create(settings.runs_dir, "the task", {})
    agent = Agent(settings=settings, model=model, dispatcher=Dispatcher([big]), run=run, ui=ScriptedTerminal(),
                  interactive=False)
    outcome = agent.start()
    assert outcome.status == "done" and model.summary_requests
    last = model.requests[-1]["messages"]
    assert last[1]["content"].endswith("\n\nthe task") and note in last[2]["content"]
    assert all(len(json.dumps(r)) // 4 <= 2_000 for r in model.requests)
    summaries = [e for e in run.events() if e["type"] == "summary"]
    assert len(summaries) == len(model.summary_requests)
    assert outcome.usage.requests == len(model.requests) + len(summaries)  # the side requests are counted...
    assert Run.open(settings.runs_dir, run.id).history().usage == outcome.usage  # ...and so after a resume


def test_a_length_cut_tool_call_is_not_run_and_the_model_is_told(settings):
    ran = []
    steps = [{"tool_calls": [{"name": "w", "arguments": '{"pa'}], "finish_reason": "length"}, {"content": "ok then"}]
    outcome, model, _ = start(settings, steps, extra=[counting_tool("w", SideEffect.WRITE, ran)])
    assert outcome.status == "done" and ran == []
    tool_msgs = [m for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert "cut by its length or time limit" in tool_msgs[0]["content"] and "Re-issue" in tool_msgs[0]["content"]


def test_tool_calls_counts_the_calls_that_ran_and_a_resume_counts_the_same(settings):
    ran = []
    steps = [{"tool_calls": [{"name": "w", "arguments": '{"pa'}], "finish_reason": "length"},  # cut: not run
             {"tool_calls": [{"name": "no_such_tool", "arguments": "{}"}]},
             {"tool_calls": [{"name": "update_working_checkpoint", "arguments": {"key_info": 3}}]},  # refused
             {"tool_calls": [tool_call("w")]}, {"content": "ok"}]
    outcome, _, run = start(settings, steps, extra=[counting_tool("w", SideEffect.WRITE, ran)])
    assert outcome.status == "done" and ran == ["w"] and outcome.tool_calls == 1
    assert run.state["tool_calls"] == 1 and Run.open(settings.runs_dir, run.id).history().tool_calls == 1


def test_building_the_loop_changes_nothing_and_start_opens_the_run(settings, tmp_path):
    from memory.hooks import RunMemory

    run = Run.create(settings.runs_dir, "the task", {})
    saved = (run.folder / "state.json").read_bytes()
    agent = Agent(settings=settings, model=ScriptedModel([{"content": "42"}]), dispatcher=Dispatcher([]), run=run,
                  ui=ScriptedTerminal(), interactive=False,
                  memory=RunMemory(settings, run_id=run.id, run_dir=run.folder))
    assert run.events() == [] and (run.folder / "state.json").read_bytes() == saved
    assert agent.context is None
    assert agent.start().status == "done"
    first = next(e for e in run.events() if e["type"] == "message")["message"]["content"]
    assert "\n\nthe task" in first and run.events()[0]["type"] == "message"  # the first message, recorded once


def test_three_empty_replies_end_the_run(settings):
    outcome, model, _ = start(settings, [{"content": ""}] * 3)
    assert (outcome.status, outcome.exit_code) == ("failed", 1)
    assert "3 unusable replies" in outcome.answer
    assert "empty" in model.requests[1]["messages"][-1]["content"]


def test_the_turn_limit_stops_with_exit_4(settings):
    settings.max_turns = 2
    steps = [{"tool_calls": [tool_call("update_working_checkpoint", key_info=f"n{i}")]} for i in range(2)]
    outcome, _, _ = start(settings, steps)
    assert (outcome.status, outcome.exit_code) == ("limit", 4)
    assert "--max-turns" in outcome.answer


def test_ask_user_pauses_in_autonomous_mode_and_an_answer_resumes(settings):
    steps = [{"tool_calls": [tool_call("ask_user", question="Which colour?", candidates=["red", "blue"])]}]
    outcome, _, run = start(settings, steps)
    assert (outcome.status, outcome.exit_code) == ("paused", 3) and "Which colour?" in outcome.answer
    again = Run.open(settings.runs_dir, run.id)
    outcome, model, _ = start(settings, [{"content": "painted"}], run=again, answer="2")
    assert outcome.status == "done"
    assert model.requests[0]["messages"][-1]["content"] == "The user answered: blue"


def test_a_write_interrupted_by_a_crash_is_not_run_twice_and_a_read_is_rerun(settings):
    ran = []
    run = Run.create(settings.runs_dir, "the task", {})
    run.append({"type": "message", "message": {"role": "user", "content": "the task"}})
    calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": "{}"}} for i, n in
             (("a", "w"), ("b", "r"), ("c", "w"))]
    run.append({"type": "message", "message": {"role": "assistant", "content": "", "tool_calls": calls}})
    run.append({"type": "call_start", "id": "a", "name": "w"})
    run.append({"type": "call_start", "id": "b", "name": "r"})
    extra = [counting_tool("w", SideEffect.WRITE, ran), counting_tool("r", SideEffect.READ_ONLY, ran)]
    outcome, model, _ = start(settings, [{"content": "fine"}], run=run, extra=extra)
    assert outcome.status == "done"
    assert ran == ["r", "w"]  # a: started, maybe done → not rerun; b: read-only → rerun; c: never started → run
    tools = {m["tool_call_id"]: m["content"] for m in model.requests[0]["messages"] if m["role"] == "tool"}
    assert "may or may not have taken effect" in tools["a"] and tools["b"] == "r ran" and tools["c"] == "w ran"


def test_reused_call_ids_are_made_unique(settings):
    step = {"tool_calls": [{"id": "call_0", "name": "update_working_checkpoint", "arguments": {"key_info": "k"}}]}
    outcome, model, _ = start(settings, [step, step, {"content": "ok"}])
    ids = [m["tool_call_id"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert outcome.status == "done" and len(ids) == len(set(ids)) == 2


def test_prompt_templates_refuse_undefined_variables():
    with pytest.raises(KeyError, match="workdir"):
        render("task.md", platform="x", date="y", task="z")


def test_ctrl_c_during_a_program_kills_it_records_the_result_and_stops_the_run(settings):
    main = threading.main_thread().ident
    timer = threading.Timer(1.0, lambda: signal.pthread_kill(main, signal.SIGINT))
    steps = [{"tool_calls": [tool_call("code_run", script="sleep 30", type="bash")]}]
    timer.start()
    try:
        outcome, _, run = start(settings, steps, extra=[code_run.SPEC])
    finally:
        timer.cancel()
    assert (outcome.status, outcome.exit_code) == ("interrupted", 130)
    (result,) = [e for e in run.events() if e["type"] == "result"]
    assert "interrupted by the user" in result["content"]


def test_the_token_limit_stops_with_exit_4(settings):
    settings.max_tokens = 400
    steps = [{"tool_calls": [tool_call("update_working_checkpoint", key_info="a")],
              "usage": {"prompt_tokens": 390, "completion_tokens": 20}}]
    outcome, model, _ = start(settings, steps)
    assert (outcome.status, outcome.exit_code, outcome.usage.total) == ("limit", 4, 410)
    assert "token limit" in outcome.answer and len(model.requests) == 1


def test_the_time_limit_stops_with_exit_4(settings):
    settings.max_time = 0.5
    steps = [{"tool_calls": [tool_call("code_run", script="sleep 0.6", type="bash")]}]
    outcome, model, _ = start(settings, steps, extra=[code_run.SPEC])
    assert (outcome.status, outcome.exit_code) == ("limit", 4) and "time limit" in outcome.answer
    assert len(model.requests) == 1


def test_unsafe_and_colliding_call_ids_are_replaced():
    calls = [ToolCall(id=i, name="f", arguments="{}") for i in ("../../pwn", "a/b", "call_2_1", "call_2_1", "x" * 65)]
    unique_ids(calls, {"call_2_0": {}}, 2)
    ids = [c.id for c in calls]
    assert len(set(ids)) == 5 and ids[2] == "call_2_1"
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", i) and i != "call_2_0" for i in ids)


def test_max_time_also_caps_a_running_program(settings):
    settings.max_time = 1
    steps = [{"tool_calls": [tool_call("code_run", script="sleep 30", type="bash", timeout=60)]}]
    outcome, _, run = start(settings, steps, extra=[code_run.SPEC])
    (result,) = [e for e in run.events() if e["type"] == "result"]
    assert result["details"]["killed"] == "timeout" and result["details"]["elapsed"] < 10
    assert (outcome.status, outcome.exit_code) == ("limit", 4)


def test_an_answer_maps_to_candidates_sent_in_quirky_forms():
    assert candidates_of(json.dumps(json.dumps({"question": "q", "candidates": ["red", "blue"]}))) == ["red", "blue"]
    assert candidates_of(json.dumps({"question": "q", "candidates": json.dumps(["red", "blue"])})) == ["red", "blue"]
    assert candidates_of("{not json") == []
    assert answer_result("1", ["4", "2", "1"]).content == "The user answered: 1"  # a candidate itself, not an index
    assert answer_result("2", ["red", "blue"]).content == "The user answered: blue"
