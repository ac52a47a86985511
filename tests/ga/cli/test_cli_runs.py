"""`runs show`, `runs rm`, `runs prune` and the line that ends a run, through the real CLI."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from tests.ga.cli.test_cli import ga, wait_for
from tests.scripted import ScriptedServer, tool_call


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def run_one(server, home, workspace, task: str = "a task", **env) -> dict:
    proc = ga([task, "--json"], server, home, workspace, **env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def age(folder, seconds: float) -> None:
    """Make a run look last active `seconds` ago: its state and every file in it."""
    then = time.time() - seconds
    state = json.loads((folder / "state.json").read_text())
    state["updated"] = state["created"] = then
    (folder / "state.json").write_text(json.dumps(state))
    for path in folder.rglob("*"):
        os.utime(path, (then, then))


def test_show_gives_task_status_usage_files_changed_and_outputs(home, workspace):
    (workspace / "old.txt").write_text("one\n")
    steps = [{"tool_calls": [tool_call("file_write", path="new.txt", content="x\n"),
                             tool_call("file_patch", path="old.txt", old_content="one", new_content="two")]},
             {"tool_calls": [tool_call("code_run", script="seq 1 40000", type="bash")]},
             {"tool_calls": [tool_call("file_read", path="missing.txt")]},
             {"content": "Wrote new.txt and patched old.txt.\nSecond line."}]
    with ScriptedServer(steps) as server:
        run_id = run_one(server, home, workspace, "change two files")["run_id"]
    shown = ga(["runs", "show", run_id[:17]], None, home, workspace)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"run       {run_id}" and lines[1] == "task      change two files"
    assert "status    done · not verified" in lines  # the last step failed
    assert f"where     {workspace} · scripted · default mode · sandboxed" in lines
    assert any(line.startswith("usage     4 turns · 4 requests") and "4 tool calls" in line for line in lines)
    assert "files     new.txt (new), old.txt" in lines
    assert "          and 1 code_run call(s), whose changes are not tracked" in lines
    assert "answer    Wrote new.txt and patched old.txt." in lines and "          Second line." in lines
    assert f"outputs   {home / 'runs' / run_id}/ (trajectory.jsonl, state.json)" in lines
    assert any("1 full output(s) in outputs/" in line for line in lines)
    as_json = json.loads(ga(["runs", "show", run_id, "--json"], None, home, workspace).stdout)
    assert [f["path"] for f in as_json["files_changed"]] == [str(workspace / "new.txt"), str(workspace / "old.txt")]
    assert as_json["scripts_run"] == 1 and len(as_json["outputs"]) == 1 and as_json["usage"]["requests"] == 4
    missing = ga(["runs", "show", "19990101"], None, home, workspace)
    assert missing.returncode == 2 and "No run '19990101'" in missing.stderr


def test_show_says_how_to_go_on_with_a_run_that_stopped(home, workspace):
    with ScriptedServer([{"tool_calls": [tool_call("file_read", path=".")]}]) as server:
        proc = ga(["look", "--max-turns", "1", "--json"], server, home, workspace)
    run_id = json.loads(proc.stdout)["run_id"]
    shown = ga(["runs", "show", run_id], None, home, workspace).stdout
    assert "status    limit" in shown and f"run.py --resume {run_id}" in shown
    assert "message   Reached the turn limit (1)" in shown and "files     none written" in shown


def test_rm_removes_finished_runs_and_never_a_running_one(home, workspace):
    with ScriptedServer([{"content": "one"}, {"content": "two"}, {"delay": 30, "content": "late"}]) as server:
        first = run_one(server, home, workspace)["run_id"]
        second = run_one(server, home, workspace)["run_id"]
        live = ga(["wait", "--detach"], server, home, workspace).stdout.strip()
        wait_for(lambda: len(server.requests) == 3)
        removed = ga(["runs", "rm", first, second], None, home, workspace)
        refused = ga(["runs", "rm", live], None, home, workspace)
        still = (home / "runs" / live).is_dir()
        os.kill(json.loads((home / "runs" / live / "state.json").read_text())["pid"], signal.SIGKILL)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.splitlines()[0].startswith(f"removed {first}  done")
    assert "removed 2 runs (" in removed.stderr
    assert not (home / "runs" / first).exists() and not (home / "runs" / second).exists()
    assert refused.returncode == 1 and f"kept {live} is in use by a ga process" in refused.stderr and still
    unknown = ga(["runs", "rm", live, "19990101"], None, home, workspace)
    assert unknown.returncode == 2 and "No run '19990101'" in unknown.stderr  # nothing removed when one is wrong


def test_prune_removes_runs_older_than_a_duration_and_says_what_it_removed(home, workspace):
    with ScriptedServer([{"content": "a"}, {"content": "b"}, {"content": "c"}, {"delay": 30, "content": "d"}]) \
            as server:
        old, failed_old, new = (run_one(server, home, workspace, f"task {i}")["run_id"] for i in range(3))
        live = ga(["wait", "--detach"], server, home, workspace).stdout.strip()
        wait_for(lambda: len(server.requests) == 4)
        for run_id in (old, failed_old, live):
            age(home / "runs" / run_id, 3 * 86400)
        state = json.loads((home / "runs" / failed_old / "state.json").read_text())
        (home / "runs" / failed_old / "state.json").write_text(json.dumps({**state, "status": "failed"}))
        dry = ga(["runs", "prune", "--older-than", "2d", "--dry-run"], None, home, workspace)
        only_failed = ga(["runs", "prune", "--older-than", "2d", "--status", "failed"], None, home, workspace)
        pruned = ga(["runs", "prune", "--older-than", "2d"], None, home, workspace)
        left = sorted(p.name for p in (home / "runs").iterdir())
        os.kill(json.loads((home / "runs" / live / "state.json").read_text())["pid"], signal.SIGKILL)
    assert dry.returncode == 0 and dry.stdout.count("would remove") == 2 and "would remove 2 runs" in dry.stderr
    assert only_failed.stdout.startswith(f"removed {failed_old}  failed") and "removed 1 run (" in only_failed.stderr
    assert pruned.stdout.startswith(f"removed {old}  done") and f"kept {live} is in use" in pruned.stderr
    assert left == sorted([new, live])
    nothing = ga(["runs", "prune", "--older-than", "30d"], None, home, workspace)
    assert nothing.returncode == 0 and "nothing removed" in nothing.stderr
    bad = ga(["runs", "prune", "--older-than", "soon"], None, home, workspace)
    assert bad.returncode == 2 and "--older-than 'soon' is not a duration" in bad.stderr


def test_a_run_ends_with_one_line_of_turns_tokens_cached_share_time_and_cost(home, workspace):
    usage = {"prompt_tokens": 2000, "completion_tokens": 100, "prompt_tokens_details": {"cached_tokens": 1500}}
    steps = [{"tool_calls": [tool_call("file_read", path=".")], "usage": {"prompt_tokens": 1000,
                                                                       "completion_tokens": 20}},
             {"content": "done", "usage": usage}]
    with ScriptedServer(steps) as server:
        proc = ga(["look"], server, home, workspace)
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("2 turns · 3,000 in (50% cached) / 120 out tokens · ") and last.endswith(" s"), last
    with ScriptedServer(steps) as server:
        priced = ga(["look"], server, home, workspace, GA_PRICE_IN="2", GA_PRICE_OUT="10", GA_PRICE_CACHED="1")
    # 1,500 uncached × $2 + 1,500 cached × $1 + 120 × $10, per million tokens
    assert priced.stderr.strip().splitlines()[-1].endswith(" · $0.0057"), priced.stderr
    with ScriptedServer(steps) as server:
        quiet = ga(["look", "-q"], server, home, workspace)
    assert "turns ·" not in quiet.stderr
    bad = ga(["look"], None, home, workspace, GA_PRICE_IN="-1")
    assert bad.returncode == 2 and "GA_PRICE_IN must be 0 (off) or more" in bad.stderr


def test_runs_begun_within_one_second_are_listed_newest_first(home, workspace):
    """Ids carry only the second and a random suffix: within a second, the states' creation times decide."""
    for suffix, created in (("000000", 2.5), ("ffffff", 2.0), ("777777", 3.0)):
        folder = home / "runs" / f"20261202-120000-{suffix}"
        folder.mkdir(parents=True)
        (folder / "state.json").write_text(json.dumps({"task": suffix, "status": "done", "created": created}))
    (home / "runs" / "20261202-115959-aaaaaa").mkdir()  # an earlier second, no state yet: not listed
    listed = json.loads(ga(["runs", "--json"], None, home, workspace).stdout)
    assert [r["task"] for r in listed] == ["777777", "000000", "ffffff"]
    newest_two = json.loads(ga(["runs", "--json", "-n", "2"], None, home, workspace).stdout)
    assert [r["task"] for r in newest_two] == ["777777", "000000"]
