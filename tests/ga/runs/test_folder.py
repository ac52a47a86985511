"""Run folders: torn lines, ordering, missing runs, one process per run."""

from __future__ import annotations

import os

import pytest

from ga.errors import ConfigError
from ga.runs.folder import Run


def test_a_line_torn_by_a_kill_is_ignored(tmp_path):
    run = Run.create(tmp_path, "task", {})
    run.append({"type": "message", "message": {"role": "user", "content": "task"}})
    with open(run.folder / "trajectory.jsonl", "a") as f:
        f.write('{"type": "message", "message": {"role": "assis')
    assert [m["content"] for m in Run.open(tmp_path, run.id).history().messages] == ["task"]


def test_appends_after_a_torn_line_are_not_lost(tmp_path):
    run = Run.create(tmp_path, "task", {})
    run.append({"type": "message", "message": {"role": "user", "content": "task"}})
    with open(run.folder / "trajectory.jsonl", "a") as f:
        f.write('{"type": "message", "message": {"role": "assis')
    resumed = Run.open(tmp_path, run.id)
    resumed.append({"type": "message", "message": {"role": "user", "content": "later"}})
    resumed.append({"type": "message", "message": {"role": "user", "content": "later still"}})
    contents = [m["content"] for m in Run.open(tmp_path, run.id).history().messages]
    assert contents == ["task", "later", "later still"]


def test_a_run_is_driven_by_one_process_at_a_time(tmp_path):
    run = Run.create(tmp_path, "task", {})
    run.lock()
    with pytest.raises(ConfigError, match=rf"in use by another ga process \(pid {os.getpid()}\)"):
        Run.open(tmp_path, run.id).lock()
    run.unlock()
    again = Run.open(tmp_path, run.id)
    again.lock()
    again.unlock()


def test_an_unusable_home_is_a_configuration_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="Set GA_HOME to a writable folder"):
        Run.create(tmp_path / "file" / "runs", "task", {})


def test_results_follow_their_calls_in_the_order_asked(tmp_path):
    run = Run.create(tmp_path, "task", {})
    calls = [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in "ab"]
    run.append(
        {
            "type": "message",
            "message": {"role": "assistant", "content": "", "tool_calls": calls},
            "usage": {"requests": 1, "prompt_tokens": 10, "completion_tokens": 2},
        }
    )
    run.append({"type": "result", "id": "b", "name": "f", "content": "B"})
    run.append({"type": "result", "id": "a", "name": "f", "content": "A"})
    history = run.history()
    assert [m.get("tool_call_id") for m in history.messages] == [None, "a", "b"]
    assert (history.usage.prompt_tokens, history.tool_calls) == (10, 2)


def test_opening_a_missing_run_names_recent_ones(tmp_path):
    Run.create(tmp_path, "task", {})
    with pytest.raises(ConfigError, match=r"No run 'nope'.*recent runs: 2"):
        Run.open(tmp_path, "nope")
    with pytest.raises(ConfigError):
        Run.open(tmp_path, "../etc")
