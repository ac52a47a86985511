"""Learning through the CLI: scripted server over HTTP, real run.py subprocesses, real files under GA_HOME."""

from __future__ import annotations

import json
import select

from ga.testing.script import ScriptedServer, tool_call
from sop.library import SEEDS, skill_files
from sop.skill import read
from tests.ga.cli.test_cli import ga, ga_background, only_run, wait_for
from tests.memory.helpers import (
    JSON_REPLY,
    REWORDED_REPLY,
    SOP_REPLY,
    csv_run,
    first_user_message,
    listed,
    memory_events,
    run_ga,
    sop_names,
)

TASK = "write a script that summarises data.csv"
SEED_NAMES = sorted(p.parent.name for p in skill_files(SEEDS))


def test_a_successful_multistep_run_leaves_one_valid_sop_and_a_refreshed_index(home, workspace):
    proc, server = run_ga([*csv_run(), {"content": SOP_REPLY.format(name="csv-summary-script", extra="")}],
                          home, workspace, TASK)
    server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Done: 2 rows."
    assert sop_names(home) == sorted([*SEED_NAMES, "csv-summary-script"])
    skill = read(home / "sop/csv-summary-script/SKILL.md")
    assert skill.metadata["source"] == "distilled" and skill.metadata["status"] == "ok"
    run_id = next((home / "runs").iterdir()).name
    assert skill.metadata["runs"] == run_id  # provenance
    assert "csv" in skill.metadata["keywords"]
    assert "- csv-summary-script" in (home / "memory/index.md").read_text().splitlines()
    assert f"saved new SOP csv-summary-script → {home / 'sop/csv-summary-script/SKILL.md'}" in proc.stderr
    # the distillation request: no tools, the compacted run and the task in it, after the run's own requests
    distill = server.requests[-1]
    assert "tools" not in distill
    assert TASK in distill["messages"][1]["content"] and "code_run" in distill["messages"][1]["content"]
    assert (home / f"memory/archive/{run_id}.md").read_text().startswith(f"Run {run_id}")


def test_the_distillation_request_is_counted_in_the_runs_usage(home, workspace):
    proc, server = run_ga([*csv_run(), {"content": "NOTHING"}], home, workspace, TASK, "--json")
    server.assert_complete()
    told = json.loads(proc.stdout)["usage"]  # printed when the run ended, before ga learned from it
    assert told["requests"] == len(csv_run())
    (run,) = (home / "runs").iterdir()
    usage = json.loads((run / "state.json").read_text())["usage"]  # `runs` shows the whole spend
    assert usage["requests"] == len(server.requests) == len(csv_run()) + 1  # what a metering proxy counts
    with ScriptedServer([]) as idle:
        again = ga(["--resume", run.name, "--json"], idle, home, workspace, GA_LEARN="")
    assert not idle.requests and json.loads(again.stdout)["usage"] == usage  # the finished run, told again


def test_a_kill_9_while_ga_learns_keeps_the_json_object_and_the_outbox(home, workspace):
    steps = [*csv_run(), {"content": "NOTHING", "delay": 60}]  # the distillation is answered late
    with ScriptedServer(steps) as server:
        proc = ga_background([TASK, "--json"], server, home, workspace, GA_LEARN="")
        try:
            wait_for(lambda: len(server.requests) == len(csv_run()) + 1)  # ga is learning from the run
            ready, _, _ = select.select([proc.stdout], [], [], 20)
            line = proc.stdout.readline() if ready else ""
        finally:
            proc.kill()  # kill -9 while the distillation request is still waiting for its answer
            proc.wait(timeout=10)
    assert line, "the --json object was not printed before learning"
    told = json.loads(line)
    assert told["status"] == "done" and told["answer"] == "Done: 2 rows."
    run = only_run(home)
    assert json.loads((run / "outbox/result.json").read_text())["status"] == "done"
    assert json.loads((run / "state.json").read_text())["status"] == "done"


def test_a_second_similar_task_lists_the_sop_in_its_first_request_and_an_unrelated_one_lists_none(home, workspace):
    run_ga([*csv_run(), {"content": SOP_REPLY.format(name="csv-summary-script", extra="")}], home, workspace, TASK)
    proc, server = run_ga([{"content": "ok"}], home, workspace, "summarize the columns of sales.csv")
    assert proc.returncode == 0, proc.stderr
    assert first_user_message(server) == "summarize the columns of sales.csv"
    system = listed(server)  # listed at the end of the system prompt, after the parts every run shares
    assert "[Memory: SOPs" in system and f"- csv-summary-script ({home / 'sop/csv-summary-script/SKILL.md'})" in system
    assert system.index("[Memory: SOPs") > system.index("Memory index")  # after the L1 index
    proc, server = run_ga([{"content": "Hi!"}], home, workspace, "Hello")
    assert first_user_message(server) == "Hello" and "[Memory: SOPs" not in listed(server)


def test_the_sop_keeps_the_distillers_keywords_and_the_users_own_words_for_the_next_task(home, workspace):
    reply = SOP_REPLY.format(name="csv-summary-script", extra="").replace(
        "\n---\n## When", "\nkeywords: spreadsheet totals, 报表\n---\n## When", 1)
    proc, _ = run_ga([*csv_run(), {"content": reply}], home, workspace, "用 Python 汇总 data.csv 每一列")
    assert proc.returncode == 0, proc.stderr
    keywords = read(home / "sop/csv-summary-script/SKILL.md").metadata["keywords"]
    assert keywords.split(", ")[:6] == ["python", "汇总", "data", "csv", "每一列", "spreadsheet totals"]
    assert "报表" in keywords
    _, server = run_ga([{"content": "ok"}], home, workspace, "把 sales.csv 做成报表")  # csv alone is too little
    assert str(home / "sop/csv-summary-script/SKILL.md") in listed(server)


def test_the_same_family_distilled_ten_times_leaves_one_sop_and_one_index_line(home, workspace):
    names = ["csv-summary-script", "summarize-csv-file", "csv-summary", "csv-report-script", "summarise-csv",
             "UPDATE: csv-summary-script\n", "csv-column-totals", "csv-summary-script", "quick-csv-summary",
             "csv-stats-script"]
    for i, name in enumerate(names):
        update = name.startswith("UPDATE")
        template = REWORDED_REPLY if i % 2 else SOP_REPLY  # the same procedure in other words
        reply = (name + template.format(name="csv-summary-script", extra=f" (round {i})") if update
                 else template.format(name=name, extra=f" (round {i})"))
        proc, _ = run_ga([*csv_run(), {"content": reply}], home, workspace, f"{TASK} (file {i})")
        assert proc.returncode == 0, proc.stderr
    assert sop_names(home) == sorted([*SEED_NAMES, "csv-summary-script"])
    skill = read(home / "sop/csv-summary-script/SKILL.md")
    assert "(round 9)" in skill.body
    assert len(skill.metadata["runs"].split(",")) == 10
    index = (home / "memory/index.md").read_text()
    assert index.count("csv") == 1


def test_two_concurrent_distillations_leave_valid_files(home, workspace):
    replies = [SOP_REPLY.format(name="csv-summary-script", extra=""), JSON_REPLY]
    servers = [ScriptedServer([*csv_run(), {"content": r, "delay": 1.0}]).start() for r in replies]
    try:
        procs = [ga_background([f"{TASK} {i}"], s, home, workspace, GA_LEARN="") for i, s in enumerate(servers)]
        outs = [p.communicate(timeout=60) for p in procs]
    finally:
        for s in servers:
            s.close()
    assert [p.returncode for p in procs] == [0, 0], outs
    assert {"csv-summary-script", "json-to-csv"} <= set(sop_names(home))
    for name in ("csv-summary-script", "json-to-csv"):
        read(home / f"sop/{name}/SKILL.md")  # parses: not torn, not interleaved
    index = (home / "memory/index.md").read_text()
    assert "- csv-summary-script" in index and "- json-to-csv" in index
    assert not list(home.rglob("*.tmp"))


def test_a_distillation_that_errors_or_times_out_leaves_the_run_done(home, workspace):
    proc, _ = run_ga([*csv_run(), {"fault": "500"}], home, workspace, TASK, "--json", "-v")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "done"
    assert "distillation gave nothing usable" in proc.stderr and "the run is done" in proc.stderr
    late = {"content": SOP_REPLY.format(name="late", extra=""), "delay": 600}
    with ScriptedServer([*csv_run(), late]) as server:
        # had it waited for the reply, the process would outlive the 120 s limit and the test would fail
        proc = ga([TASK, "--json", "-v"], server, home, workspace, timeout=120, GA_LEARN="", GA_DISTILL_TIMEOUT="1")
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "done"
    assert "no reply within 1 s" in proc.stderr
    assert sop_names(home) == SEED_NAMES


def test_junk_from_the_distiller_is_refused_and_nothing_is_written(home, workspace):
    proc, _ = run_ga([*csv_run(), {"content": "Sure! Here is what I learned: the script worked."}],
                     home, workspace, TASK, "-v")
    assert proc.returncode == 0
    assert "neither NOTHING nor an SOP" in proc.stderr
    proc, _ = run_ga([*csv_run(), {"content": "NOTHING"}], home, workspace, TASK)
    assert "nothing new worth an SOP" not in proc.stderr  # a decision that changed nothing: shown with -v only
    proc, _ = run_ga([*csv_run(), {"content": "NOTHING"}], home, workspace, TASK, "-v")
    assert "nothing new worth an SOP" in proc.stderr
    assert sop_names(home) == SEED_NAMES


def test_a_run_called_done_after_its_last_tool_call_failed_is_not_distilled(home, workspace):
    failing = {"tool_calls": [tool_call("code_run", script="raise SystemExit('summarize.py: no column b')")]}
    steps = [*csv_run()[:2], failing, failing, {"content": "Fixed: run summarize.py again."}]
    proc, server = run_ga(steps, home, workspace, TASK, "-v")
    server.assert_complete()  # no distillation request
    assert proc.returncode == 0 and "the run's last tool call failed: nothing verified to distil" in proc.stderr
    assert sop_names(home) == SEED_NAMES


def test_a_run_whose_answer_stood_only_after_a_doubt_is_not_distilled(home, workspace):
    lost = "I'm sorry, but I need more information. Could you please provide me with the necessary details?"
    steps = [*csv_run()[:3], {"content": lost}, {"content": lost}]  # the second one counts as the answer
    proc, server = run_ga(steps, home, workspace, TASK, "-v", GA_MODEL_SETTINGS="small")  # a capable model: no doubt
    server.assert_complete()  # no distillation request
    assert proc.returncode == 0 and "after ga doubted it: nothing verified to distil" in proc.stderr
    assert server.requests[4]["messages"][-1]["content"].startswith("Your reply has no tool call")
    assert sop_names(home) == SEED_NAMES


def test_no_learn_writes_no_memory_and_makes_no_distillation_request(home, workspace):
    proc, server = run_ga(csv_run(), home, workspace, TASK, "--no-learn")
    server.assert_complete()  # no fifth request
    assert proc.returncode == 0
    assert not (home / "memory/archive").exists()
    proc, server = run_ga(csv_run(), home, workspace, TASK, GA_LEARN="0")
    server.assert_complete()


def test_a_run_that_followed_an_sop_without_trouble_bumps_its_ledger_instead_of_distilling(home, workspace):
    run_ga([*csv_run(), {"content": SOP_REPLY.format(name="csv-summary-script", extra="")}], home, workspace, TASK)
    path = str(home / "sop/csv-summary-script/SKILL.md")
    steps = [{"tool_calls": [tool_call("file_read", path=path)]}, *csv_run()]
    proc, server = run_ga(steps, home, workspace, "tally the ledger rows of data.csv", "-v")
    server.assert_complete()  # no distillation request
    assert "followed SOP csv-summary-script without trouble" in proc.stderr
    meta = read(home / "sop/csv-summary-script/SKILL.md").metadata
    assert (meta["uses"], meta["successes"], meta["failures"]) == ("1", "1", "0") and meta["last_success"]
    assert {"tally", "ledger", "rows"} <= set(meta["keywords"].split(", "))  # how this user asked for it
    _, server = run_ga([{"content": "ok"}], home, workspace, "tally the ledger")  # shares no word with the SOP
    assert "csv-summary-script" in server.requests[0]["messages"][0]["content"]


def test_an_sop_that_failed_twice_in_a_row_is_flagged_then_archived_with_a_pointer(home, workspace):
    run_ga([*csv_run(), {"content": SOP_REPLY.format(name="csv-summary-script", extra="")}], home, workspace, TASK)
    path = home / "sop/csv-summary-script/SKILL.md"
    failing = [{"tool_calls": [tool_call("file_read", path=str(path))]},
               {"tool_calls": [tool_call("code_run", script="raise SystemExit(3)")]}]
    for _ in range(2):
        proc, _ = run_ga(failing, home, workspace, TASK, "--max-turns", "2")
        assert proc.returncode == 4, proc.stderr
    assert read(path).metadata["status"] == "flagged"
    assert "failed twice in a row" in proc.stderr
    assert "- csv-summary-script (flagged" in (home / "memory/index.md").read_text()
    _, server = run_ga([{"content": "ok"}], home, workspace, TASK)
    assert "[flagged: failed twice in a row" in listed(server)
    for _ in range(2):
        run_ga(failing, home, workspace, TASK, "--max-turns", "2")
    archived = home / "sop/.archived/csv-summary-script/SKILL.md"
    assert not path.exists() and read(archived).metadata["status"] == "archived"  # moved, never deleted
    assert "Archived after repeated failures" in (home / "memory/index.md").read_text()
    _, server = run_ga([{"content": "ok"}], home, workspace, TASK)
    assert f"({path})" not in listed(server)


def test_memory_events_record_what_was_learned(home, workspace):
    run_ga([*csv_run(), {"content": SOP_REPLY.format(name="csv-summary-script", extra="")}], home, workspace, TASK)
    (event,) = memory_events(home)
    assert event["distilled"]["name"] == "csv-summary-script" and event["distilled"]["action"] == "created"
