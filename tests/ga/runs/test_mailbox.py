"""The mailbox in-process: answers, messages and stops are acted on exactly once, also across a crash."""

from __future__ import annotations

import json
import os
import time

import pytest

from ga.agent import Agent
from ga.config import load_settings
from ga.runs.folder import Run
from ga.runs.mailbox import MAX_CHARS, MESSAGE, post
from ga.tooling.dispatch import Dispatcher
from tests.scripted import ScriptedModel, ScriptedTerminal, tool_call
from tools import ask_user, update_working_checkpoint


@pytest.fixture
def settings(tmp_path, workspace):
    return load_settings(env={}, home=tmp_path / "home", workdir=workspace, model="m", autonomous=True)


def start(settings, steps, run):
    model = ScriptedModel(steps)
    dispatcher = Dispatcher([update_working_checkpoint.SPEC, ask_user.SPEC])
    agent = Agent(settings=settings, model=model, dispatcher=dispatcher, run=run, ui=ScriptedTerminal(),
                  interactive=False)
    return agent.start(), model


def trajectory(run: Run) -> list[dict]:
    return [json.loads(line) for line in (run.folder / "trajectory.jsonl").read_text().splitlines()]


def inbox_files(run: Run, where: str = "") -> list[str]:
    folder = run.folder / "inbox" / where
    return sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def test_an_answer_in_the_inbox_answers_the_paused_question_once(settings):
    run = Run.create(settings.runs_dir, "pick", {})
    ask = {"tool_calls": [tool_call("ask_user", question="Which?", candidates=["a", "b"])]}
    paused, _ = start(settings, [ask], run)
    mail = post(run.folder, "answer", "2\n")
    done, model = start(settings, [ask, {"content": "picked"}], Run.open(settings.runs_dir, run.id))
    again, model2 = start(settings, [{"content": "still picked"}], Run.open(settings.runs_dir, run.id))
    assert paused.status == "paused" and paused.question == {"question": "Which?", "candidates": ["a", "b"]}
    assert done.status == again.status == "paused"  # it asked again; the one answer was used once
    assert model.requests[0]["messages"][-1]["content"] == "The user answered: b"
    results = [e for e in trajectory(run) if e["type"] == "result"]
    assert [r["details"].get("mail") for r in results] == [mail.name]  # a pause records no result
    assert inbox_files(run) == [] and inbox_files(run, "done") == [mail.name]
    assert model2.requests == []  # the second question is still waiting; nothing was sent


def test_a_message_whose_effect_was_recorded_before_a_crash_is_not_delivered_again(settings):
    run = Run.create(settings.runs_dir, "task", {})
    run.append({"type": "message", "message": {"role": "user", "content": "task"}})
    mail = post(run.folder, "message", "hello")
    # the state a kill leaves between recording the message and moving its file away
    run.append({"type": "message", "message": {"role": "user", "content": MESSAGE.format(text="hello")},
                "mail": mail.name})
    outcome, model = start(settings, [{"content": "ok"}], Run.open(settings.runs_dir, run.id))
    sent = [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"]
    assert outcome.status == "done" and sent == ["task", MESSAGE.format(text="hello")]
    assert inbox_files(run) == [] and inbox_files(run, "done") == [mail.name]


def test_messages_are_delivered_in_name_order_at_the_turn_boundary(settings):
    run = Run.create(settings.runs_dir, "task", {})
    steps = [{"tool_calls": [tool_call("update_working_checkpoint", key_info="x")]}, {"content": "ok"}]
    first = post(run.folder, "message", "first")
    second = post(run.folder, "message", "x" * (MAX_CHARS + 10))
    outcome, model = start(settings, steps, run)
    users = [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"]
    assert users[0].endswith("\n\ntask") and users[1] == "The user adds: first"  # as --answer would add it
    assert users[2].startswith(MESSAGE.format(text="x" * 10)) and users[2].endswith(
        f"[… 10 more characters in {second.name}]")
    assert outcome.status == "done" and inbox_files(run, "done") == sorted([first.name, second.name])


def test_a_stop_request_ends_the_run_and_one_from_before_the_process_started_is_ignored(settings):
    run = Run.create(settings.runs_dir, "task", {})
    stale = post(run.folder, "stop")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    steps = [{"tool_calls": [tool_call("update_working_checkpoint", key_info="x")]}, {"content": "never"}]
    model = ScriptedModel(steps)
    agent = Agent(settings=settings, model=model, dispatcher=Dispatcher([update_working_checkpoint.SPEC]), run=run,
                  ui=ScriptedTerminal(), interactive=False)
    original = agent.on_result

    def stop_after_first_result(call, result):  # as `stop RUN_ID` would, while the tool runs
        post(run.folder, "stop")
        original(call, result)

    agent.on_result = stop_after_first_result
    outcome = agent.start()
    mails = [e for e in trajectory(run) if e["type"] == "mail"]
    assert outcome.status == "interrupted" and outcome.exit_code == 130 and "Stopped on request" in outcome.answer
    assert len(model.requests) == 1 and [e.get("ignored", "") != "" for e in mails] == [True, False]


def test_a_file_of_unknown_kind_is_set_aside_with_a_notice(settings):
    run = Run.create(settings.runs_dir, "task", {})
    (run.folder / "inbox").mkdir()
    (run.folder / "inbox" / "note.txt").write_text("hi")
    outcome, _ = start(settings, [{"content": "ok"}], run)
    notices = [e["text"] for e in trajectory(run) if e["type"] == "notice"]
    assert outcome.status == "done" and inbox_files(run, "rejected") == ["note.txt"]
    assert notices == ["inbox file note.txt ignored: name it NAME.answer, NAME.message or NAME.stop"]


def test_links_folders_and_fifos_in_the_inbox_are_moved_aside_and_a_huge_message_is_read_in_part(settings, tmp_path):
    run = Run.create(settings.runs_dir, "task", {})
    inbox = run.folder / "inbox"
    inbox.mkdir()
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY MATERIAL\n")
    (inbox / "1-link.message").symlink_to(secret)
    (inbox / "2-folder.message").mkdir()
    os.mkfifo(inbox / "3-pipe.answer")
    with open(inbox / "4-huge.message", "wb") as f:
        f.write(b"start ")
        f.truncate(1 << 30)  # sparse: 1 GiB that costs no disk
    steps = [{"tool_calls": [tool_call("update_working_checkpoint", key_info="x")]}, {"content": "ok"}]
    outcome, model = start(settings, steps, run)
    users = [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"]
    assert outcome.status == "done" and len(users) == 2 and "PRIVATE KEY" not in json.dumps(model.requests)
    assert users[1].startswith("The user adds: start") and "1,073,741,824 bytes in all" in users[1]
    assert len(users[1]) < MAX_CHARS + 200
    assert sorted(p.name for p in (inbox / "rejected").iterdir()) == ["1-link.message", "2-folder.message",
                                                                    "3-pipe.answer"]
    assert sorted(p.name for p in inbox.iterdir()) == ["done", "rejected"] and secret.read_text()
    notices = [e["text"] for e in trajectory(run) if e["type"] == "notice"]
    assert sum("only a regular file is a message" in n for n in notices) == 3
