"""Three-stage failure escalation and the guards: in-process with real tools, then through the real run.py."""

from __future__ import annotations

import json
import signal
from dataclasses import asdict

import pytest

from ga.agent import Agent
from ga.config import load_settings
from ga.errors import ConfigError
from ga.escalation import Escalation, State, gist
from ga.model.settings import settings_for
from ga.protocols import ToolCall
from ga.runs.folder import Run
from ga.tooling.dispatch import Dispatcher
from ga.tooling.spec import ToolResult
from tests.ga.cli.test_cli import events, ga, ga_background, only_run, wait_for
from tests.scripted import ScriptedModel, ScriptedServer, ScriptedTerminal, tool_call
from tools import ask_user, code_run, file_read, file_write

READ = [file_read.SPEC, file_write.SPEC, ask_user.SPEC]
SMALL = settings_for("local", local=True)


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


@pytest.fixture
def settings(tmp_path, workspace):
    (workspace / "here.txt").write_text("present\n")
    return load_settings(env={}, home=tmp_path / "home", workdir=workspace, model="m", autonomous=True)


def start(settings, steps, *, run=None, answer=None, interactive=False, answers=(), model_settings=None, extra=()):
    model, ui = ScriptedModel(steps), ScriptedTerminal(list(answers))
    run = run or Run.create(settings.runs_dir, "find the config file", {})
    agent = Agent(settings=settings, model=model, dispatcher=Dispatcher([*READ, *extra]), run=run, ui=ui,
                  interactive=interactive, answer=answer, model_settings=model_settings)
    return agent.start(), model, run, ui


def missing(i: int) -> dict:
    return {"tool_calls": [tool_call("file_read", path=f"missing{i}.txt")]}


def results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def stages(run: Run) -> list[int]:
    return [e["stage"] for e in run.events() if e["type"] == "stage"]


HERE = {"tool_calls": [tool_call("file_read", path="here.txt")]}
DONE = {"content": "all done"}


def test_one_failure_is_its_error_alone_and_a_success_resets(settings):
    outcome, model, run, ui = start(settings, [missing(1), HERE, DONE])
    assert outcome.status == "done"
    first = results(model.requests[1])[-1]
    assert first.startswith("No such file: missing1.txt") and "small, targeted fix" not in first
    assert "present" in results(model.requests[2])[-1] and "fix" not in results(model.requests[2])[-1]
    assert stages(run) == [1, 0]
    assert ui.notices == []  # an ordinary failure and its fix are not announced: the tool lines say it
    assert run.state["escalation"]["same"] == 1 and run.state["escalation"]["failures"] == 0


def test_the_third_failure_asks_for_a_change_of_approach_listing_what_was_tried(settings):
    outcome, model, run, _ = start(settings, [missing(1), missing(2), missing(3), DONE], model_settings=SMALL)
    assert outcome.status == "done"
    second, third = results(model.requests[3])[-2:]
    assert "small, targeted fix" in second and "stage 2" not in second
    assert "stage 2: 3 failures in a row" in third and "Probe the environment" in third and "SOPs" in third
    tried = third.split("Tried so far:\n")[1].splitlines()
    assert tried[0] == "- file_read path=missing1.txt → No such file: missing1.txt"
    assert len(tried) == 3 and "missing3.txt" in tried[2]
    stage_events = [e for e in run.events() if e["type"] == "stage"]
    assert stage_events[-1] == {"t": stage_events[-1]["t"], "type": "stage", "stage": 2,
                                "reason": "3 failures in a row"}


def test_repeating_a_failed_call_goes_to_stage_2_at_once(settings):
    outcome, model, run, _ = start(settings, [missing(1), missing(1), DONE])
    assert outcome.status == "done"
    assert "file_read repeated with the same arguments after it failed" in results(model.requests[2])[-1]
    assert stages(run) == [1, 2]


def test_a_success_in_between_resets_the_count(settings):
    steps = [missing(1), missing(2), HERE, missing(3), missing(4), DONE]
    outcome, model, run, _ = start(settings, steps)
    assert outcome.status == "done"
    assert all("stage 2" not in r for r in results(model.requests[-1]))
    assert stages(run) == [1, 0, 1]
    assert run.state["escalation"]["failures"] == 2


def test_the_sixth_failure_asks_the_human_on_a_terminal_and_the_answer_resets(settings):
    steps = [missing(i) for i in range(1, 7)] + [missing(7), DONE]
    outcome, model, run, ui = start(settings, steps, interactive=True, answers=["the file is here.txt"],
                                    model_settings=SMALL)
    assert outcome.status == "done"
    (kind, question, _), = ui.asked
    assert kind == "ask" and "Goal: find the config file" in question and "missing6.txt" in question
    assert "Last error: No such file: missing6.txt" in question and question.count("\n- file_read") == 6
    after_six = model.requests[6]["messages"]
    assert "stage 3: 6 failures in a row" in after_six[-2]["content"]
    assert after_six[-1] == {"role": "user", "content": "The user, asked for help because the task was stuck, "
                                                        "answers: the file is here.txt"}
    assert "small, targeted fix" in results(model.requests[7])[-1]  # counting starts over
    assert stages(run) == [1, 2, 3, 0, 1]


def test_stage_2_that_changes_nothing_goes_to_stage_3(settings):
    steps = [missing(1), missing(2), missing(3), missing(1)]
    outcome, model, run, _ = start(settings, steps)
    assert (outcome.status, outcome.exit_code) == ("paused", 3)
    assert len(model.requests) == 4
    assert stages(run) == [1, 2, 3]
    assert [e["reason"] for e in run.events() if e["type"] == "stage"][-1].startswith("file_read repeated again")


def test_autonomous_sixth_failure_pauses_and_an_answer_resumes(settings):
    outcome, _, run, _ = start(settings, [missing(i) for i in range(1, 7)])
    assert (outcome.status, outcome.exit_code) == ("paused", 3)
    assert "I am stuck: 6 failed attempts in a row" in outcome.answer and "Goal: find the config file" in outcome.answer
    assert run.state["escalation"]["asking"]
    again = Run.open(settings.runs_dir, run.id)
    outcome, model, run, _ = start(settings, [DONE], run=again, answer="read here.txt")
    assert outcome.status == "done"
    assert model.requests[0]["messages"][-1]["content"].endswith("answers: read here.txt")
    assert run.state["escalation"] == asdict(State())


def test_resuming_a_stuck_run_without_an_answer_pauses_again(settings):
    _, _, run, _ = start(settings, [missing(i) for i in range(1, 7)])
    outcome, model, _, _ = start(settings, [], run=Run.open(settings.runs_dir, run.id))
    assert (outcome.status, outcome.exit_code) == ("paused", 3) and model.requests == []


def test_a_failing_call_batched_with_a_read_that_works_still_escalates(settings):
    batch = {"tool_calls": [tool_call("file_read", path="here.txt"),
                            tool_call("file_write", path="here.txt/x", content="x")]}
    outcome, model, run, _ = start(settings, [batch] * 8)  # the same call only: stage 3 at stage3_after + 2
    assert (outcome.status, outcome.exit_code) == ("paused", 3)  # stage 3 pauses the autonomous run
    assert stages(run) == [1, 2, 3]
    assert "Stop retrying" in results(model.requests[2])[-1]


def test_timings_do_not_make_identical_results_look_like_progress(tmp_path):
    settings = load_settings(env={}, home=tmp_path, workdir=tmp_path, model="m")
    escalation = Escalation(run=Run.create(tmp_path, "wait for the job", {}), settings=settings,
                            ui=ScriptedTerminal())
    call = ToolCall(id="c", name="code_run", arguments='{"script": "sleep 0.5; cat status"}')
    for took in ("0.51", "0.50", "0.52"):
        escalation.observe(call, ToolResult(content=f"[exit code 0 · {took} s]\nrunning"))
    assert escalation.state.same == 3


def test_three_malformed_calls_end_the_run_and_a_good_call_resets_the_strikes(settings):
    bad = {"tool_calls": [{"name": "file_read", "arguments": '{"path": 3}'}]}
    outcome, model, run, _ = start(settings, [bad, bad, HERE, bad, bad, bad])
    assert (outcome.status, outcome.exit_code) == ("failed", 1)
    assert "3 unusable replies" in outcome.answer and "malformed arguments" in outcome.answer
    assert len(model.requests) == 6 and stages(run) == []  # strikes, not stages: they say nothing of the approach


def test_a_no_progress_loop_is_nudged_then_pauses_for_the_human(settings):
    outcome, model, run, ui = start(settings, [HERE] * 5)
    assert (outcome.status, outcome.exit_code) == ("paused", 3)
    assert "same result 5 times in a row" in outcome.answer and "file_read path=here.txt" in outcome.answer
    assert "no progress" in results(model.requests[3])[-1] and "no progress" not in results(model.requests[2])[-1]
    assert "If this result answers" not in results(model.requests[3])[-1]  # no question: its result answers nothing
    asked = Run.create(settings.runs_dir, "Which file holds the config?", {})
    _, model, _, _ = start(settings, [HERE] * 5, run=asked)
    assert results(model.requests[3])[-1].endswith("[If this result answers the task, reply without a tool call: state "
                                                   "the answer.]")  # a question whose run changed no file
    assert [e["kind"] for e in run.events() if e["type"] == "nudge"] == ["repeat"] and stages(run) == [3]
    assert any(n.startswith("no progress:") for n in ui.notices)


def test_polling_a_job_that_says_the_same_is_nudged_then_the_human_is_asked_never_failed(settings):
    (settings.workdir / "status").write_text("still running\n")
    poll = {"tool_calls": [tool_call("code_run", script="sleep 0.1; cat status", type="bash")]}
    outcome, model, run, ui = start(settings, [poll] * 5 + [DONE], interactive=True, extra=[code_run.SPEC],
                                    answers=["it takes an hour: check once more after sleep 3600"])
    assert outcome.status == "done"
    assert "no progress" in results(model.requests[3])[-1] and "still running" in results(model.requests[3])[-1]
    (_, question, _), = ui.asked
    assert question.startswith("I am stuck: the same call (code_run script=sleep 0.1; cat status type=bash) gave "
                               "the same result 5 times in a row.\nLast result: [exit code 0")
    assert model.requests[5]["messages"][-1]["content"].endswith("answers: it takes an hour: check once more after "
                                                                  "sleep 3600")
    assert stages(run) == [3, 0] and [e["kind"] for e in run.events() if e["type"] == "nudge"] == ["repeat"]
    outcome, _, run, _ = start(settings, [poll] * 5, extra=[code_run.SPEC])  # unattended: it pauses for the human
    assert (outcome.status, outcome.exit_code) == ("paused", 3) and "still running" in outcome.answer


def test_the_same_page_again_is_the_same_result_whatever_its_framing_nonce(settings):
    # web_scan frames each page with a new nonce: a model scanning one page over and over made no progress either
    scan = {"tool_calls": [tool_call("code_run", type="python", script=(
        "import secrets\nprint(f'[page content {secrets.token_hex(2)} of t1: text]\\nBlue Widget $18.75')"))]}
    outcome, model, _, _ = start(settings, [scan] * 5, extra=[code_run.SPEC])
    assert (outcome.status, outcome.exit_code) == ("paused", 3) and "same result 5 times" in outcome.answer
    assert "no progress" in results(model.requests[3])[-1]


def test_refusals_and_unknown_tools_count_as_failures(settings):
    steps = [{"tool_calls": [tool_call("file_read", path="/etc/passwd")]},
             {"tool_calls": [{"name": "no_such_tool", "arguments": "{}"}]}, missing(1), DONE]
    outcome, model, run, _ = start(settings, steps)
    assert outcome.status == "done" and stages(run) == [1, 2]
    assert "- file_read path=/etc/passwd → " in results(model.requests[3])[-1]
    assert "question" not in [e for e in run.events() if e["type"] == "stage"][-1]  # only stage 3 asks


def test_the_question_is_recorded_with_the_stage_3_event(settings):
    _, _, run, _ = start(settings, [missing(i) for i in range(1, 7)])
    event = [e for e in run.events() if e["type"] == "stage"][-1]
    assert event["stage"] == 3 and event["question"] == run.state["escalation"]["asking"]


def test_an_error_gist_is_its_first_sentence_or_a_program_s_last_line():
    assert gist("No such file: a.txt. List a folder.") == "No such file: a.txt"
    run_output = "[exit code 1 · 0.05 s]\nTraceback...\nModuleNotFoundError: No module named 'x'\nhint: install it"
    assert gist(run_output) == "[exit code 1 · 0.05 s] ModuleNotFoundError: No module named 'x'"
    assert gist("x" * 200, 10) == "xxxxxxxxx…" and gist("") == "(no message)"


def test_thresholds_come_from_the_environment(tmp_path, workspace):
    env = {"GA_STAGE2_AFTER": "2", "GA_STAGE3_AFTER": "4", "GA_STRIKES": "5", "GA_REPEAT_STOP": "0"}
    s = load_settings(env=env, home=tmp_path, workdir=workspace)
    assert (s.stage2_after, s.stage3_after, s.strikes, s.repeat_nudge, s.repeat_stop) == (2, 4, 5, 3, 0)
    with pytest.raises(ConfigError, match="GA_STAGE3_AFTER"):
        load_settings(env={"GA_STAGE2_AFTER": "6"}, home=tmp_path, workdir=workspace)
    with pytest.raises(ConfigError, match="GA_STRIKES"):
        load_settings(env={"GA_STRIKES": "-1"}, home=tmp_path, workdir=workspace)


def test_lower_thresholds_escalate_sooner(settings):
    settings.stage2_after, settings.stage3_after = 2, 3
    outcome, _, run, _ = start(settings, [missing(1), missing(2), missing(3)])
    assert outcome.status == "paused" and stages(run) == [1, 2, 3]


# Through the real run.py: subprocesses, HTTP, kill -9.

def fails(*names: str) -> list[dict]:
    return [{"tool_calls": [tool_call("file_read", path=f"{n}.txt")]} for n in names]


def test_cli_six_failures_pause_with_exit_3_and_the_answer_resumes(home, workspace):
    (workspace / "real.txt").write_text("the config\n")
    steps = [*fails("a", "b", "c", "d", "e", "f"), *fails("real"), {"content": "found it"}]
    with ScriptedServer(steps) as server:
        paused = ga(["find the config", "--json"], server, home, workspace,
                    GA_MODEL_SETTINGS="small:action_format=tools")
        run_id = json.loads(paused.stdout)["run_id"]
        resumed = ga(["--resume", run_id, "--answer", "it is real.txt"], server, home, workspace)
        server.assert_complete()
    assert paused.returncode == 3, paused.stderr
    for line in ("escalation stage 2 (3 failures in a row): the model is told to stop retrying",
                 "escalation stage 3 (6 failures in a row): asking the human", "I am stuck", "--answer"):
        assert line in paused.stderr
    assert "stage 1" not in paused.stderr
    tool = [results(r)[-1] for r in server.requests[1:7]]
    assert "small, targeted fix" in tool[0] and "stage 2" in tool[2] and "still" not in tool[2].lower()
    assert "Stage 2, 4 failures in a row" in tool[3] and "stage 3" in tool[5]
    assert resumed.returncode == 0 and resumed.stdout.strip() == "found it"
    assert server.requests[6]["messages"][-1]["content"].endswith("answers: it is real.txt")
    assert "escalation over: the user answered" in resumed.stderr


def test_cli_the_stage_survives_kill_9_and_resume(home, workspace):
    steps = [*fails("a", "b", "c"), {"delay": 30, "content": "never delivered"}, *fails("d", "e", "f")]
    with ScriptedServer(steps) as server:
        proc = ga_background(["find the config"], server, home, workspace)
        wait_for(lambda: len(server.requests) == 4)  # three failures recorded, the fourth request in flight
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        state = json.loads((only_run(home) / "state.json").read_text())
        resumed = ga(["--resume", only_run(home).name], server, home, workspace)
        server.assert_complete()
    assert state["escalation"]["stage"] == 2 and state["escalation"]["failures"] == 3
    assert resumed.returncode == 3, resumed.stderr
    assert "Stage 2, 4 failures in a row" in results(server.requests[5])[-1]
    assert "escalation stage 3 (6 failures in a row)" in resumed.stderr
    assert [e["stage"] for e in events(only_run(home), "stage")] == [1, 2, 3]


def test_cli_three_empty_replies_exit_1(home, workspace):
    with ScriptedServer([{"content": ""}] * 3) as server:
        proc = ga(["anything"], server, home, workspace)
    assert proc.returncode == 1 and "3 unusable replies" in proc.stderr and "empty" in proc.stderr


def test_cli_three_malformed_calls_exit_1(home, workspace):
    bad = {"tool_calls": [{"name": "file_read", "arguments": '{"path": "a.txt",'}]}
    with ScriptedServer([bad] * 3) as server:
        proc = ga(["anything", "--json"], server, home, workspace)
    assert proc.returncode == 1 and json.loads(proc.stdout)["status"] == "failed"
    assert "malformed arguments" in proc.stderr


def test_cli_a_no_progress_loop_pauses_with_exit_3(home, workspace):
    (workspace / "a.txt").write_text("same\n")
    with ScriptedServer(fails("a") * 5) as server:
        proc = ga(["anything"], server, home, workspace, GA_REPEAT_NUDGE="2", GA_REPEAT_STOP="4")
    assert proc.returncode == 3 and "same result 4 times in a row" in proc.stderr
    assert len(server.requests) == 4 and "no progress" in results(server.requests[2])[-1]


def test_cli_a_failing_program_counts_and_its_error_line_is_listed(home, workspace):
    run_it = {"tool_calls": [tool_call("code_run", script="import nosuchmod", type="python")]}
    with ScriptedServer([run_it, run_it, {"content": "cannot do it"}]) as server:
        proc = ga(["use nosuchmod"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    stage_2 = results(server.requests[2])[-1]
    assert "code_run repeated with the same arguments after it failed" in stage_2
    assert "ModuleNotFoundError: No module named 'nosuchmod'" in stage_2.split("Tried so far:")[1]
    assert "as a Python script" not in stage_2  # it is one


def test_stage_2_after_a_shell_command_failed_again_names_a_python_script_in_the_runs_own_format(home, workspace):
    # a 1.5B model sent one failing sed or awk line eight times; told this, it wrote the step in Python
    (workspace / "r.txt").write_text("1\n2\n")
    awk = {"tool_calls": [tool_call("code_run", script="awk 'BEGIN {r = function(x) {return x}}' r.txt", type="bash")]}
    with ScriptedServer([awk, awk, {"content": "cannot do it"}]) as server:
        proc = ga(["Average r.txt"], server, home, workspace)
    assert proc.returncode == 0, proc.stderr
    stage_2 = results(server.requests[2])[-1]
    assert "then switch to a different approach. The same command sent again fails the same way: do the step another " \
           'way, e.g. as a Python script (code_run type="python"). Tried so far:' in stage_2, stage_2


def test_stage_2_after_failing_patches_names_the_whole_rewrite_of_that_file(settings, workspace):
    from tools import file_patch

    (workspace / "conf.ini").write_text("port = 80\n")

    def bad(i: int) -> dict:
        return {"tool_calls": [tool_call("file_patch", path="conf.ini", old_content=f"port={i}", new_content="x")]}

    outcome, model, _, _ = start(settings, [bad(1), bad(2), bad(3), DONE], extra=[file_patch.SPEC],
                                 model_settings=SMALL)
    assert outcome.status == "done"
    third = results(model.requests[3])[-1]
    assert "stage 2" in third and ("For conf.ini, which your patches did not fit: read it whole with file_read, "
                                   "then send the whole corrected file with file_write.") in third
    # other failures get no such line
    outcome, model, _, _ = start(settings, [missing(1), missing(2), missing(3), DONE], model_settings=SMALL)
    assert "stage 2" in results(model.requests[3])[-1] and "whole corrected" not in results(model.requests[3])[-1]
