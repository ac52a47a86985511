"""Telling a live run from a crashed one (real processes), the heartbeat, and runs written before either existed."""

from __future__ import annotations

import json
import os
import subprocess
import time

from ga.cli.commands.runs import describe
from ga.runs import liveness
from ga.runs.folder import Run
from tests.scripted import ScriptedTerminal


def test_the_recorded_process_is_alive_only_while_it_runs_as_itself():
    child = subprocess.Popen(["sleep", "30"])
    try:
        state = {"pid": child.pid, "pid_started": liveness.started(child.pid)}
        assert liveness.process_alive(state)
        assert not liveness.process_alive({**state, "pid_started": state["pid_started"] - 60})  # a reused pid
        child.kill()
        time.sleep(0.2)
        assert not liveness.process_alive(state)  # a zombie not yet reaped is gone too
    finally:
        child.wait()
    assert not liveness.process_alive(state)


def test_a_run_from_before_pids_were_recorded_is_judged_by_its_lock(tmp_path):
    run = Run.create(tmp_path, "old task", {})
    run.append({"type": "message", "message": {"role": "user", "content": "old task"}})
    run.append({"type": "message", "message": {"role": "assistant", "content": "", "tool_calls": []},
                "usage": {"requests": 1, "prompt_tokens": 100, "completion_tokens": 7}})
    old = {k: v for k, v in run.state.items() if k not in ("pid", "pid_started")}
    (run.folder / "state.json").write_text(json.dumps(old))
    (run.folder / "lock").write_text("12345")
    row = describe(run.folder, old, time.time(), 900)
    assert (row["status"], row["turns"], row["tokens"]) == ("crashed", 1, 107)
    holder = Run.open(tmp_path, run.id)
    holder.lock()
    try:
        assert liveness.effective_status(run.folder, old) == "running"
    finally:
        holder.unlock()


def test_progress_calls_touch_the_heartbeat_and_everything_else_passes_through(tmp_path):
    ui = ScriptedTerminal(["yes"])
    beat = liveness.Heartbeat(ui, tmp_path)
    path = tmp_path / liveness.HEARTBEAT
    os.utime(path, (0, 0))
    time.sleep(liveness.BEAT_EVERY)
    beat.live("output")
    assert path.stat().st_mtime > 1e9 and ui.live_output == ["output"]
    os.utime(path, (0, 0))
    beat.notice("soon after")  # within a second of the last beat: not written again
    assert path.stat().st_mtime == 0 and ui.notices == ["soon after"]
    assert beat.ask("Go?", []) == "yes" and path.stat().st_mtime == 0  # waiting for a human is not progress
    assert not hasattr(beat, "no_such_method")  # a method the wrapped sink lacks is lacking here too


def test_a_stalled_run_is_one_without_progress_for_the_given_time(tmp_path):
    run = Run.create(tmp_path, "task", {})
    run.append({"type": "message", "message": {"role": "user", "content": "task"}})
    assert liveness.stalled_for(run.folder, run.state, 60) is None
    later = time.time() + 120
    assert liveness.stalled_for(run.folder, run.state, 60, now=later) >= 119
    (run.folder / liveness.HEARTBEAT).touch()
    os.utime(run.folder / liveness.HEARTBEAT, (later - 5, later - 5))
    assert liveness.stalled_for(run.folder, run.state, 60, now=later) is None
