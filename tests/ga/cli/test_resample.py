"""A reply that repeats the last turn's calls exactly is asked again, warmer (ModelSettings.resample_temperatures),
through the real CLI, client and scripted server: the repeat never reaches the history or the tools."""

from __future__ import annotations

import json

from tests.ga.cli.test_cli import events, ga, only_run
from tests.scripted.script import ScriptedServer, tool_call

SMALL = {"GA_MODEL_SETTINGS": "small:action_format=bash,resample_temperatures=0.7/1.0"}
RUN = "```bash\npython3 reverse.py list.txt\n```"


def test_a_repeated_failing_step_is_asked_again_warmer_and_the_repeat_is_dropped(tmp_path, workspace):
    home = tmp_path / "home"
    (workspace / "list.txt").write_text("a\nb\n")
    write = ("```bash\nprintf 'import sys\\nprint(*reversed(open(sys.argv[1]).read().split()), sep=chr(10))\\n'"
             " > reverse.py\n```")
    steps = [{"content": RUN}, {"content": RUN}, {"content": write}, {"content": RUN},
             {"content": "reverse.py prints the lines last first: b, a."}]
    with ScriptedServer(steps) as server:
        proc = ga(["Write reverse.py that prints a file's lines in reverse", "--json"], server, home, workspace,
                  **SMALL)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    _, repeated, warmer, ran, last = server.requests
    assert "temperature" not in repeated and warmer["temperature"] == 0.7 and "seed" in warmer
    assert warmer["messages"] == repeated["messages"]  # the same request, sampled warmer
    assert "temperature" not in ran and "temperature" not in last  # the write was no repeat: the run goes on as ever
    said = [m["content"] for m in last["messages"] if m["role"] == "assistant"]
    assert said.count(RUN) == 2, said  # the first try and the final run; the repeat is gone
    assert len(events(only_run(home), "call_start")) == 3
    assert [e["requests"] for e in events(only_run(home), "notice") if e.get("kind") == "resampled"] == [1]
    assert json.loads(proc.stdout)["usage"]["requests"] == 5  # the dropped reply's tokens are counted


def test_when_every_warmer_reply_repeats_too_the_last_one_runs(tmp_path, workspace):
    home = tmp_path / "home"
    steps = [{"content": RUN}, {"content": RUN}, {"content": RUN}, {"content": RUN}, {"content": "It cannot run."}]
    with ScriptedServer(steps) as server:
        proc = ga(["run reverse.py", "--json"], server, home, workspace, **SMALL)
        server.assert_complete()
    temperatures = [r.get("temperature") for r in server.requests]
    assert temperatures == [None, None, 0.7, 1.0, None], temperatures
    assert len(events(only_run(home), "call_start")) == 2 and proc.returncode in (0, 1), proc.stderr


def test_a_capable_model_s_repeat_is_sent_as_it_came(tmp_path, workspace):
    """No resampling without the setting: a model that polls on purpose (the same call twice) is left alone."""
    home = tmp_path / "home"
    (workspace / "log.txt").write_text("starting\n")
    read = {"tool_calls": [tool_call("file_read", path="log.txt")]}
    steps = [read, read, {"content": "The log says starting."}]
    with ScriptedServer(steps) as server:
        proc = ga(["read log.txt twice", "--json"], server, home, workspace)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert not any("temperature" in r for r in server.requests)
