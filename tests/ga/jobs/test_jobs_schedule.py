"""The scheduler through the real CLI: jobs added and listed, due and missed slots fired once, running jobs skipped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ga.cli.test_cli import RUN_PY, ga, ga_env, wait_for
from tests.scripted import ScriptedServer


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def history(home: Path, job: str) -> list[dict]:
    path = home / "schedule" / "history" / f"{job}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def set_last_slot(home: Path, job: str, slot: float) -> None:
    """As if the job's last slot was at `slot` (history is plain JSON lines)."""
    path = home / "schedule" / "history" / f"{job}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps({"t": slot, "job": job, "event": "seen", "slot": slot}) + "\n")


def fired(home: Path, job: str) -> list[dict]:
    return [r for r in history(home, job) if r["event"] == "fired"]


def runs(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "runs").iterdir()) if (home / "runs").exists() else []


def add(home: Path, workspace: Path, *args: str) -> subprocess.CompletedProcess:
    proc = ga(["schedule", "add", *args, "--workdir", str(workspace)], None, home, workspace)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_add_list_disable_and_rm(home, workspace):
    add(home, workspace, "nightly", "tidy the notes", "--cron", "0 3 * * *", "--max-turns", "5")
    add(home, workspace, "often", "check", "--every", "15m")
    listed = json.loads(ga(["schedule", "list", "--json"], None, home, workspace).stdout)
    table = ga(["schedule", "list"], None, home, workspace).stdout
    disabled = ga(["schedule", "disable", "often"], None, home, workspace)
    removed = ga(["schedule", "rm", "nightly"], None, home, workspace)
    after = json.loads(ga(["schedule", "list", "--json"], None, home, workspace).stdout)
    text = (home / "schedule" / "often.toml").read_text()
    assert [(r["name"], r["when"], r["last"]) for r in listed] == [("nightly", "0 3 * * *", None),
                                                                  ("often", "every 15m", None)]
    assert listed[1]["next"] > time.time() + 14 * 60 and "nightly" in table and "every 15m" in table
    assert disabled.returncode == 0 and "enabled = false" in text and 'every = "15m"' in text
    assert removed.returncode == 0 and [r["name"] for r in after] == ["often"] and after[0]["next"] is None


@pytest.mark.parametrize(("args", "error"), [
    (["x", "t", "--cron", "61 * * * *"], "not a valid cron expression"),
    (["x", "t", "--cron", "0 0 30 2 *"], "never fires: no date matches it (such as 30 February)"),
    (["x", "t", "--every", "soon"], "is not an interval"),
    (["../x", "t", "--every", "1h"], "Job name '../x'"),
    (["x", "t", "--every", "1h", "--cron", "* * * * *"], "not allowed with argument"),
    (["x", "t"], "one of the arguments --cron --every is required"),
])
def test_a_bad_job_is_refused_with_what_is_wrong(home, workspace, args, error):
    proc = ga(["schedule", "add", *args], None, home, workspace)
    assert proc.returncode == 2 and error in proc.stderr and "Traceback" not in proc.stderr
    assert not list((home / "schedule").glob("*.toml")) if (home / "schedule").exists() else True


def test_the_scheduler_fires_a_due_job_exactly_once_and_records_its_end(home, workspace):
    add(home, workspace, "hourly", "say hi", "--every", "1h")
    set_last_slot(home, "hourly", time.time() - 3600 - 5)  # due five seconds ago
    with ScriptedServer([{"content": "hi there"}]) as server:
        daemon = subprocess.Popen([sys.executable, RUN_PY, "schedule", "run", "--tick", "0.2"], cwd=workspace,
                                  env=ga_env(server, home), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            wait_for(lambda: any(r["event"] == "ended" for r in history(home, "hourly")), timeout=60)
            time.sleep(1.5)  # more ticks: a second firing would show now
            second = ga(["schedule", "run", "--once"], server, home, workspace)
        finally:
            daemon.send_signal(signal.SIGTERM)
            out, _ = daemon.communicate(timeout=20)
        server.assert_complete()
    (run_id,) = runs(home)
    records = history(home, "hourly")
    ended = [r for r in records if r["event"] == "ended"]
    assert [r["run_id"] for r in fired(home, "hourly")] == [run_id]
    assert ended == [{**ended[0], "run_id": run_id, "status": "done"}] and ended[0]["tokens"] > 0
    assert json.loads((home / "runs" / run_id / "state.json").read_text())["workdir"] == str(workspace)
    assert second.returncode == 2 and "Another scheduler already serves" in second.stderr
    assert daemon.returncode == 0 and f"fired run {run_id}" in out and "scheduler stopped" in out
    listed = json.loads(ga(["schedule", "list", "--json"], None, home, workspace).stdout)
    assert listed[0]["last"]["run_id"] == run_id and listed[0]["last"]["status"] == "done"


def test_missed_slots_fire_once_not_once_each(home, workspace):
    add(home, workspace, "nightly", "catch up", "--cron", "0 * * * *")
    set_last_slot(home, "nightly", time.time() - 5 * 3600 - 60)  # the daemon was down for five hours and more
    with ScriptedServer([{"content": "caught up"}]) as server:
        first = ga(["schedule", "run", "--once"], server, home, workspace)
        again = ga(["schedule", "run", "--once"], server, home, workspace)
        (run_id,) = runs(home)
        wait_for(lambda: json.loads((home / "runs" / run_id / "state.json").read_text())["status"] == "done")
    (record,) = fired(home, "nightly")
    assert first.returncode == 0 and again.returncode == 0
    assert record["missed"] in (4, 5) and record["slot"] > time.time() - 3600  # the latest slot stands for them all
    assert "stands in for" in first.stdout


def test_a_job_whose_last_run_is_still_running_is_not_started_again(home, workspace):
    add(home, workspace, "slow", "take long", "--every", "1h")
    set_last_slot(home, "slow", time.time() - 3600 - 5)
    log = home.parent / "notified.jsonl"
    with ScriptedServer([{"delay": 30, "content": "late"}]) as server:
        first = subprocess.Popen([sys.executable, RUN_PY, "schedule", "run", "--once"], cwd=workspace,
                                 env=ga_env(server, home, GA_NOTIFY=f"cat >> {log}"), stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)  # it waits for the run it fired
        wait_for(lambda: len(server.requests) == 1)  # its run is busy
        (run_id,) = runs(home)
        set_last_slot(home, "slow", time.time() - 3600 - 5)  # and the job is due again
        skipping = ga(["schedule", "run", "--once"], server, home, workspace)
        os.kill(json.loads((home / "runs" / run_id / "state.json").read_text())["pid"], signal.SIGKILL)
        settled, _ = first.communicate(timeout=60)
        wait_for(log.exists)
    skipped = [r for r in history(home, "slow") if r["event"] == "skipped"]
    ended = [r for r in history(home, "slow") if r["event"] == "ended"]
    assert runs(home) == [run_id] and len(fired(home, "slow")) == 1
    assert len(skipped) == 1 and run_id in skipped[0]["reason"] and "still running" in skipping.stdout
    # a killed run cannot say it ended: the scheduler records it, and notifies
    assert [(r["run_id"], r["status"]) for r in ended] == [(run_id, "crashed")] and "crashed" in settled
    assert first.returncode == 1 and skipping.returncode == 0  # --once: 1 when a run it fired did not end done
    event = json.loads(log.read_text())
    assert (event["event"], event["run_id"], event["status"], event["exit_code"]) == ("end", run_id, "crashed", 1)


def test_a_broken_job_file_is_reported_and_the_others_still_fire(home, workspace):
    add(home, workspace, "good", "fine", "--every", "1h")
    set_last_slot(home, "good", time.time() - 3600 - 5)
    (home / "schedule" / "broken.toml").write_text("task = \n")
    with ScriptedServer([{"content": "fine"}]) as server:
        proc = ga(["schedule", "run", "--once"], server, home, workspace)
        wait_for(lambda: len(server.requests) == 1)
    assert proc.returncode == 0 and "skipping a job file" in proc.stdout and "broken.toml" in proc.stdout
    assert len(fired(home, "good")) == 1


def test_a_job_that_never_fires_or_fails_is_reported_and_the_others_still_fire(home, workspace):
    add(home, workspace, "good", "fine", "--every", "1h")
    set_last_slot(home, "good", time.time() - 3600 - 5)
    (home / "schedule" / "feb30.toml").write_text(f'task = "x"\nworkdir = "{workspace}"\ncron = "0 0 30 2 *"\n')
    (home / "schedule" / "odd.toml").write_text(f'task = "x"\nworkdir = "{workspace}"\nevery = "1h"\n')
    (home / "schedule" / "history" / "odd.jsonl").mkdir()  # its history cannot be read
    listed = ga(["schedule", "list"], None, home, workspace)
    assert listed.returncode == 0 and "good" in listed.stdout and "Traceback" not in listed.stderr
    assert "feb30.toml: cron = '0 0 30 2 *' never fires" in listed.stderr
    assert "odd.toml: IsADirectoryError" in listed.stderr
    with ScriptedServer([{"content": "fine"}]) as server:
        proc = ga(["schedule", "run", "--once"], server, home, workspace)
        wait_for(lambda: len(server.requests) == 1)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "feb30.toml: cron = '0 0 30 2 *' never fires" in proc.stdout
    assert "odd: skipped, it failed: IsADirectoryError" in proc.stdout
    assert len(fired(home, "good")) == 1
