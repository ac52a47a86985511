"""What a real model's replies need before they run: calls written as text, debris, doubtful answers, caps."""

from __future__ import annotations

import json

import pytest

from ga.config import load_settings
from ga.model.settings import settings_for
from ga.model.text_calls import is_debris, text_calls
from ga.prompts import first_message, system_prompt
from ga.reply import asks_back, claimed_change, not_an_answer
from ga.tooling.dispatch import MAX_CALLS_PER_REPLY
from memory.hooks import RunMemory
from tests.ga.cli.test_cli import events
from tests.ga.test_agent import start
from tools import load_tools

KNOWN = {"file_read", "update_working_checkpoint"}
SMALL = settings_for("local", local=True)
CALL = '{"name": "file_read", "arguments": {"path": "a.txt"}}'


@pytest.fixture
def settings(tmp_path, workspace):
    return load_settings(env={}, home=tmp_path / "home", workdir=workspace, model="m", autonomous=True)


@pytest.mark.parametrize("text", [
    f"```json\n{CALL}\n```",
    f"```\n{CALL}```",
    f"<tool_call>\n{CALL}\n</tool_call>",
    f"  {CALL}\n",
    '{"name": "file_read", "parameters": {"path": "a.txt"}}',
    '{"type": "function", "function": {"name": "file_read", "arguments": "{\\"path\\": \\"a.txt\\"}"}}',
    '<function=file_read>{"path": "a.txt"}</function>',
])
def test_a_call_written_as_text_is_read_in_every_shape(text):
    (call,) = text_calls(text, KNOWN)
    assert (call.name, json.loads(call.arguments)) == ("file_read", {"path": "a.txt"})


def test_several_text_calls_and_a_list_of_them():
    two = f"<tool_call>{CALL}</tool_call>\n<tool_call>{CALL}</tool_call>"
    assert [c.name for c in text_calls(two, KNOWN)] == ["file_read", "file_read"]
    assert len(text_calls(f"[{CALL}, {CALL}]", KNOWN)) == 2
    # JSON strings holding fences and closing tags are not cut short
    tricky = '```json\n{"name": "file_read", "arguments": {"path": "```</tool_call>"}}\n```'
    assert json.loads(text_calls(tricky, KNOWN)[0].arguments) == {"path": "```</tool_call>"}


@pytest.mark.parametrize("text", [
    f"I will read it now:\n```json\n{CALL}\n```",  # prose around it: an explanation, not a call
    f"```json\n{CALL}\n```\nThen I will patch it.",
    '```json\n{"name": "rm_rf", "arguments": {}}\n```',  # not a known tool
    '```json\n{"name": "file_read", "arguments": {"path": "a.txt"}, "extra": 1}\n```',
    '```json\n{"name": "file_read", "arguments": {"path": \n```',
    '{"name": "Ada", "age": 3}',
    "The answer is 42.",
])
def test_text_that_is_not_exactly_calls_is_left_alone(text):
    assert text_calls(text, KNOWN) == []


def test_debris_is_only_brackets_and_empty_tags():
    assert all(is_debris(t) for t in ["{", "{}\n\n{{}", "<tools></tools>", " <tool_response></tool_response>\n", ""])
    assert not is_debris("{x}") and not is_debris("Done")


def test_with_small_model_settings_a_reply_made_of_a_text_call_runs_it_and_says_so(settings):
    call = json.dumps({"name": "update_working_checkpoint", "arguments": {"key_info": "k1"}})
    steps = [{"content": f"```json\n{call}\n```"}, {"content": "The checkpoint now holds k1."}]
    outcome, model, run = start(settings, steps, model_settings=SMALL)
    assert outcome.status == "done" and run.state["tool_state"]["checkpoint"] == "k1"
    (notice,) = [e for e in run.events() if e.get("kind") == "text_calls"]
    assert notice["calls"] == 1 and "```json" in notice["text"]
    sent = model.requests[1]["messages"]
    assert sent[2]["content"] == "" and sent[2]["tool_calls"][0]["function"]["name"] == "update_working_checkpoint"
    outcome, model, run = start(settings, steps[:1])  # by default: an answer that quotes a call
    assert outcome.answer == steps[0]["content"] and "checkpoint" not in run.state["tool_state"]


def test_with_small_model_settings_debris_beside_real_calls_is_not_kept(settings):
    step = {"content": "{}\n\n{{}", "tool_calls": [{"name": "update_working_checkpoint",
                                                    "arguments": {"key_info": "k"}}]}
    _, model, run = start(settings, [step, {"content": "Noted it."}], model_settings=SMALL)
    assert model.requests[1]["messages"][2]["content"] == ""
    assert [e["text"] for e in run.events() if e.get("kind") == "debris"] == ["{}\n\n{{}"]
    _, model, run = start(settings, [step, {"content": "Noted it."}])  # by default: sent back as it came
    assert model.requests[1]["messages"][2]["content"] == "{}\n\n{{}"


@pytest.mark.parametrize("reply", [" impossible", "<tool_response></tool_response>",
                                   "[Escalation stage 2: stop retrying. Probe the environment (what exists)"])
def test_with_small_model_settings_a_reply_that_is_not_an_answer_gets_one_nudge(settings, reply):
    fail = {"tool_calls": [{"name": "no_such_tool", "arguments": {}}]}
    outcome, model, _ = start(settings, [fail, {"content": reply}, {"content": reply}], model_settings=SMALL)
    debris = reply.startswith("<")  # no text at all: never an answer, however often it comes
    assert (outcome.status, outcome.answer.startswith("The model gave no answer") if debris else outcome.answer) == \
        (("failed", True) if debris else ("done", reply))  # the second time it counts
    nudges = [m["content"] for m in model.requests[2]["messages"] if m["role"] == "user"][1:]
    assert len(nudges) == 1 and nudges[0].startswith("Your reply has no tool call, so it would end the task, but")
    model.assert_complete()
    outcome, model, _ = start(settings, [fail, {"content": reply}])  # by default: the answer (or none), at once
    assert (outcome.status, len(model.requests)) == ("failed" if debris else "done", 2)
    assert outcome.answer.startswith("The model gave no answer") if debris else outcome.answer == reply


def test_a_short_answer_after_success_or_without_calls_is_an_answer():
    assert not_an_answer("42") is None and not_an_answer("Done") is None
    assert not_an_answer("Done", after_failure=True) == "it is only 'Done'"
    assert not_an_answer("I created hello.txt containing Hello, world.", after_failure=True) is None


def test_a_null_value_for_an_answer_is_doubted_even_after_success(settings):
    for null in ("None", "null", "`None`", "undefined."):
        assert not_an_answer(null) == f"it is only {null!r}, a null value rather than an answer"
    assert not_an_answer("None of the files changed.") is None and not_an_answer("It returns None.") is None
    ok = {"tool_calls": [{"name": "update_working_checkpoint", "arguments": {"key_info": "k"}}]}
    # a 1.5B model's turns after a working call: an empty reply, then the repr of its empty reply
    outcome, model, _ = start(settings, [ok, {"content": ""}, {"content": "None"}, {"content": "None"}],
                              model_settings=SMALL)
    assert (outcome.status, outcome.exit_code) == ("failed", 1)  # the second time it ends the run: no answer
    assert outcome.answer.startswith("The model gave no answer (it was only 'None')")
    nudges = [m["content"] for m in model.requests[3]["messages"] if m["role"] == "user"][1:]
    assert nudges[0].startswith("Your reply was empty") and nudges[1].startswith("Your reply has no tool call")
    assert "a null value rather than an answer" in nudges[1] and len(nudges) == 2
    model.assert_complete()
    outcome, _, _ = start(settings, [ok, {"content": "None"}])  # for every model: no answer, at once
    assert (outcome.status, outcome.exit_code) == ("failed", 1) and "it was only 'None'" in outcome.answer


def test_a_reply_that_only_announces_a_step_after_a_failure_is_doubted():
    promise = "To fix the issue, I will create a new file with file_write. Here's the updated command:"
    assert not_an_answer(promise, after_failure=True) == "it says what you will do next, but calls no tool to do it"
    assert not_an_answer("Let me know if you need anything else.", after_failure=False) is None  # after success
    assert not_an_answer("The file could not be created: the disk is full.", after_failure=True) is None


def test_an_answer_that_only_asks_back_is_a_question_and_one_with_a_result_is_an_answer():
    lost = ("I'm sorry, but I need more information to assist you. Could you please provide me with the necessary "
            "details or instructions?")  # a 1.5B model's reply to the empty-reply nudge
    assert asks_back(lost) and asks_back("What would you like me to do with report.md?")
    assert asks_back("To continue, please provide the next steps or ask a new question.")
    assert not asks_back("I wrote report.md with five regions. Could you use it for the review?")
    assert not asks_back("app.py has 11 lines.") and not_an_answer(lost) is None


def test_an_answer_claiming_a_change_is_read_as_one_unless_negated():
    assert claimed_change("I have saved the sum into total.txt.") == "saved"
    assert claimed_change("The port 8437 has been written to port.txt") == "written"
    assert claimed_change("Nothing was written: the file is read-only.") == ""
    assert claimed_change("I could not find the file, so it was not updated.") == ""
    assert claimed_change("app.py has 11 lines.") == ""


def test_a_content_filter_stop_is_named_and_its_calls_are_not_run(settings):
    filtered = {"content": "I can", "finish_reason": "content_filter",
                "tool_calls": [{"name": "update_working_checkpoint", "arguments": {"key_info": "half"}}]}
    outcome, model, run = start(settings, [filtered, {"content": "", "finish_reason": "content_filter"},
                                           {"content": "", "finish_reason": "content_filter"}])
    assert outcome.status == "failed" and "content filter" in outcome.answer and "empty" not in outcome.answer
    assert "checkpoint" not in run.state["tool_state"]
    told = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert told[0].startswith("Your reply was stopped by the server's content filter")


def test_calls_past_the_cap_are_not_run_and_the_model_is_told(settings):
    calls = [{"name": "update_working_checkpoint", "arguments": {"key_info": f"k{i}"}} for i in range(100)]
    _, model, run = start(settings, [{"tool_calls": calls}, {"content": "Capped, fine."}])
    results = [e for e in run.events() if e["type"] == "result"]
    assert len(results) == MAX_CALLS_PER_REPLY and run.state["tool_state"]["checkpoint"] == "k31"
    last = model.requests[1]["messages"]
    assert len(last[2]["tool_calls"]) == MAX_CALLS_PER_REPLY
    assert last[-1]["role"] == "user" and last[-1]["content"].startswith(
        "Only the first 32 of your 100 tool calls were run; the other 68 were not. Call again for those still "
        "needed, at most 32 per reply.")


def test_the_prompt_prefix_is_the_same_for_every_workspace(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one, two = (load_settings(env={}, home=tmp_path, workdir=tmp_path / n, model="m") for n in "ab")
    schemas = json.dumps([s.schema() for s in load_tools()])
    memories = [RunMemory(s, run_id="r", run_dir=tmp_path) for s in (one, two)]
    assert system_prompt(memories[0]) + schemas == system_prompt(memories[1]) + schemas
    assert str(tmp_path / "a") not in system_prompt(memories[0])
    assert first_message(one, "task").startswith(f"Workspace {tmp_path / 'a'} (")


def test_the_schemas_show_what_the_validator_enforces():
    shown = {s.name: s.schema()["function"]["parameters"] for s in load_tools()}
    assert shown["file_read"]["properties"]["start"] == {"type": "integer", "minimum": 0, "default": 1}
    assert shown["file_read"]["properties"]["count"] == {"type": "integer", "minimum": 1, "maximum": 1000,
                                                         "default": 200}  # the default said, as the tool applies it
    assert shown["code_run"]["properties"]["timeout"]["minimum"] == 1
    assert shown["ask_user"]["properties"]["question"]["minLength"] == 1
    assert all("additionalProperties" not in p for p in shown.values())


def test_start_0_reads_from_the_first_line(make_ctx, workspace):
    from ga.protocols import ToolCall
    from ga.tooling.dispatch import Dispatcher

    (workspace / "a.txt").write_text("one\ntwo\n")
    (result,) = Dispatcher(load_tools()).dispatch(
        [ToolCall(id="c", name="file_read", arguments='{"path": "a.txt", "start": 0}')], make_ctx())
    assert not result.is_error and result.content.startswith("1|one\n2|two")  # the schema allows 0: no repair


def test_cli_a_small_models_text_call_is_run(tmp_path, workspace):
    from tests.ga.cli.test_cli import ga, only_run
    from tests.scripted import ScriptedServer

    call = json.dumps({"name": "file_write", "arguments": {"path": "hello.txt", "content": "Hello"}})
    with ScriptedServer([{"content": f"<tool_call>\n{call}\n</tool_call>"}, {"content": "Wrote hello.txt."}]) as s:
        proc = ga(["write hello", "--model", "qwen2.5-coder-1.5b-instruct"], s, tmp_path / "home", workspace)
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "hello.txt").read_text() == "Hello"
    assert [e["kind"] for e in events(only_run(tmp_path / "home"), "notice")] == ["text_calls"]


def test_cli_a_capable_models_answer_that_quotes_a_call_is_never_run(tmp_path, workspace):
    from tests.ga.cli.test_cli import ga, only_run
    from tests.scripted import ScriptedServer

    call = json.dumps({"name": "file_write", "arguments": {"path": "config.json", "content": '{"debug": true}'}})
    answer = f"```json\n{call}\n```"  # asked how to turn debugging on, the model shows the call it would make
    with ScriptedServer([{"content": answer}]) as server:
        proc = ga(["how would you turn debugging on?", "--json", "--model", "gpt-4o"], server, tmp_path / "home",
                  workspace)
        server.assert_complete()
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 and out["answer"] == answer and out["tool_calls"] == 0, proc.stderr
    assert not (workspace / "config.json").exists() and out["model_settings"] == "default"
    assert events(only_run(tmp_path / "home"), "notice") == []


def test_an_answer_that_only_repeats_the_not_run_note_is_no_answer():
    from ga.escalation import ECHOES

    assert "repeats ga's own instructions" in not_an_answer("A one-line summary of the result and nothing else.",
                                                            echoes=ECHOES)
    assert not_an_answer("The task is done.", echoes=ECHOES) is None  # short and plain: an answer
    assert not_an_answer("Done: high.txt holds 8.", echoes=ECHOES) is None
