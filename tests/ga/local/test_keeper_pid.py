"""`models stop` kills the keeper only when it knows it is the keeper: a pid written into the server's state.json
(edited, or left by a keeper whose pid went to another program) is checked against the process holding the keeper's
lock, never SIGKILLed on its word. The keeper, its locks and the processes are real; the server is the stand-in."""

from __future__ import annotations

import json
import subprocess

from ga.local import shared
from ga.local.holder import lock_holder
from ga.local.server_folder import folder_of
from ga.local.shared import attach, status, stop
from tests.ga.local.stand_ins import alive
from tests.ga.local.test_shared import OPTIONS, cache, chat, gone  # noqa: F401 (cache is a fixture)


def test_a_pid_written_into_state_json_is_not_killed_the_keeper_is(cache, monkeypatch):  # noqa: F811
    monkeypatch.setenv("GA_STUB_BUSY", "30")  # saving the prefix would wait this long: the keeper must be killed
    monkeypatch.setattr(shared, "STOP_WAIT", 1.0)
    lease = attach(cache, OPTIONS, 60)
    chat(lease, "hi")
    lease.release()
    folder = folder_of(cache)
    assert lock_holder(folder.alive) == lease.state["keeper"]
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        state = json.loads(folder.state.read_text())
        folder.state.write_text(json.dumps({**state, "keeper": bystander.pid}))
        stop(cache)
        assert alive(bystander.pid), "models stop killed a process that is not the keeper"
        assert gone(lease.state["server"], lease.state["keeper"]) and status(cache) is None
    finally:
        bystander.kill()
        bystander.wait()
