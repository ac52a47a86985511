"""Deferred tools through the real CLI: the rarely needed tools' schemas are not sent until the run needs them."""

from __future__ import annotations

import json

from tests.ga.cli.test_cli import ga
from tests.scripted.script import ScriptedServer, tool_call

FIVE = {"file_read", "file_patch", "file_write", "code_run", "ask_user"}


def sent(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


def test_a_plain_task_sends_five_schemas_and_names_the_other_four_in_one_line(tmp_path, workspace):
    with ScriptedServer([{"content": "Hello!"}]) as server:
        proc = ga(["Hello", "--json"], server, tmp_path / "home", workspace)
    assert proc.returncode == 0, proc.stderr
    (request,) = server.requests
    assert sent(request) == FIVE
    assert "web_scan (read a web page)" in request["messages"][0]["content"]


def test_a_call_to_a_deferred_tool_runs_and_its_schema_stays_from_then_on(tmp_path, workspace):
    steps = [{"tool_calls": [tool_call("update_working_checkpoint", key_info="goal: x")]},
             {"tool_calls": [tool_call("file_read", path="missing.txt")]}, {"content": "No such file."}]
    with ScriptedServer(steps) as server:
        proc = ga(["note the goal", "--json"], server, tmp_path / "home", workspace)
    assert proc.returncode == 0 and json.loads(proc.stdout)["tool_calls"] >= 1, proc.stderr
    assert [len(sent(r)) for r in server.requests] == [5, 6, 6]
    assert "checkpoint" in json.dumps(server.requests[1]["messages"])


def test_a_url_in_the_task_or_a_result_sends_the_web_tools(tmp_path, workspace):
    with ScriptedServer([{"content": "It is a page."}]) as server:
        ga(["What is on http://127.0.0.1:9/x.html ?", "--json"], server, tmp_path / "home", workspace)
    assert sent(server.requests[0]) == FIVE | {"web_scan", "web_execute_js"}
    (workspace / "links.md").write_text("See https://example.org/docs for more.\n")
    steps = [{"tool_calls": [tool_call("file_read", path="links.md")]}, {"content": "It links the docs."}]
    with ScriptedServer(steps) as server:
        ga(["What does links.md link to?", "--json"], server, tmp_path / "home2", workspace)
    assert sent(server.requests[0]) == FIVE and sent(server.requests[1]) == FIVE | {"web_scan", "web_execute_js"}
    with ScriptedServer([{"content": "Hello!"}]) as server:
        ga(["Hello", "--json"], server, tmp_path / "home3", workspace, GA_MODEL_SETTINGS="default:defer_tools=false")
    assert len(sent(server.requests[0])) == 9 and "web_scan (read" not in server.requests[0]["messages"][0]["content"]
