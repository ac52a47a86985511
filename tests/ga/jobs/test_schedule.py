"""Schedules as crontab entries, through the real CLI and the real `crontab`: an entry installed beside the user's own
lines (never touching them), listed and removed; the entry's command, run as cron runs it, runs the job. The user's
crontab is restored after each test."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from ga.jobs import cron
from tests.conftest import THEIRS
from tests.ga.cli.test_cli import ga, wait_for
from tests.scripted import ScriptedServer, tool_call


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def as_cron_runs(line: str, user_home: Path) -> subprocess.CompletedProcess:
    """The command of a crontab line run as cron runs it: /bin/sh, cron's bare environment, `\\%` read as `%`."""
    command = re.sub(r"^(@\w+|(\S+\s+){5})", "", line).replace("\\%", "%")
    env = {"HOME": str(user_home), "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "LOGNAME": "root"}
    return subprocess.run(["/bin/sh", "-c", command], env=env, capture_output=True, text=True, timeout=60, check=False)


def test_add_installs_an_entry_whose_command_runs_the_job_and_rm_leaves_the_other_lines(home, workspace, crontab,
                                                                                        tmp_path):
    steps = [{"tool_calls": [tool_call("file_write", path="done.txt", content="ok\n")]}, {"content": "Done."}]
    task = "Write done.txt (100% sure)"
    with ScriptedServer(steps) as server:
        added = ga(["schedule", "add", "nightly", task, "--every", "6h", "--workdir", str(workspace), "--max-turns",
                    "5", "--check", "test -f done.txt"], server, home, workspace)
        assert added.returncode == 0, added.stderr
        table = crontab()
        assert table.startswith(THEIRS), table
        (line,) = [line for line in table.splitlines() if line.endswith("# ga-schedule:nightly")]
        assert line.startswith("0 */6 * * * ") and "--detach" in line and "100\\% sure" in line
        assert "--max-turns 5 --check 'test -f done.txt'" in line and f"--workdir {workspace}" in line
        assert "OPENAI_API_KEY" not in line and not re.search(r"=test\b", line)  # never the key (ga_env's "test")
        listed = json.loads(ga(["schedule", "list", "--json"], None, home, workspace).stdout)
        assert [(r["name"], r["when"], r["task"], r["workdir"]) for r in listed] == [
            ("nightly", "0 */6 * * *", task, str(workspace))]

        fired = as_cron_runs(line, tmp_path)
        assert fired.returncode == 0, fired.stdout + fired.stderr
        wait_for(lambda: any(json.loads(p.read_text()).get("status") == "done"
                             for p in (home / "runs").glob("*/state.json")), timeout=60)
    (state,) = [json.loads(p.read_text()) for p in (home / "runs").glob("*/state.json")]
    assert state["task"] == task and state["verified"] is True
    assert (workspace / "done.txt").read_text() == "ok\n"
    assert re.search(r"\d{8}-\d{6}-\w+", (home / "schedule" / "nightly.log").read_text())  # the run id, logged

    removed = ga(["schedule", "rm", "nightly"], None, home, workspace)
    assert removed.returncode == 0 and crontab() == THEIRS, removed.stderr
    again = ga(["schedule", "rm", "nightly"], None, home, workspace)
    assert again.returncode == 2 and "No job 'nightly'" in again.stderr


@pytest.mark.parametrize(("args", "error"), [
    (["x", "t", "--every", "7m"], "cron fires evenly only every N minutes dividing an hour"),
    (["x", "t", "--every", "soon"], "cron fires evenly"),
    (["x", "t", "--at", "25:00"], "give a time of day as HH:MM"),
    (["x", "t", "--cron", "61 * * * *"], "is not a cron schedule"),
    (["x", "t", "--cron", "0 3 * *"], "is not a cron schedule"),
    (["../x", "t", "--every", "1h"], "Job name '../x'"),
    (["x", "line one\nline two", "--every", "1h"], "one line each"),
    (["x", "t" * 1000, "--every", "1h"], "more than cron takes"),
    (["x", "t", "--every", "1h", "--cron", "* * * * *"], "not allowed with argument"),
    (["x", "t"], "one of the arguments --every --at --cron is required"),
])
def test_a_bad_job_is_refused_with_what_is_wrong_and_the_crontab_kept(home, workspace, crontab, args, error):
    proc = ga(["schedule", "add", *args], None, home, workspace)
    assert proc.returncode == 2 and error in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert crontab() == THEIRS


def test_a_job_of_the_same_name_is_replaced_only_with_force(home, workspace, crontab):
    assert ga(["schedule", "add", "j", "first", "--at", "03:30"], None, home, workspace).returncode == 0
    refused = ga(["schedule", "add", "j", "second", "--at", "04:00"], None, home, workspace)
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert ga(["schedule", "add", "j", "second", "--at", "04:00", "--force"], None, home, workspace).returncode == 0
    assert [(e.name, e.when, e.row()["task"]) for e in cron.entries(crontab())] == [("j", "0 4 * * *", "second")]


def test_without_crontab_the_entry_and_a_systemd_timer_are_printed_and_nothing_is_installed(home, workspace, tmp_path):
    proc = ga(["schedule", "add", "wk", "weekly report", "--cron", "30 8 * * 1-5"], None, home, workspace,
              PATH=str(tmp_path))
    assert proc.returncode == 1 and "crontab is not installed" in proc.stderr, proc.stderr
    assert "30 8 * * 1-5 GA_HOME=" in proc.stdout and "# ga-schedule:wk" in proc.stdout
    assert "OnCalendar=Mon..Fri *-*-* 8:30:00" in proc.stdout and "ExecStart=/usr/bin/env " in proc.stdout
    assert '"weekly report"' in proc.stdout and "KillMode=process" in proc.stdout


@pytest.mark.parametrize(("schedule", "calendar"), [
    ("*/15 * * * *", "*-*-* *:0/15:00"), ("0 */6 * * *", "*-*-* 0/6:0:00"), ("30 3 1 * *", "*-*-1 3:30:00"),
    ("0 9 * * 0,6", "Sun,Sat *-*-* 9:0:00"), ("0 9 * * sat", "Sat *-*-* 9:0:00"),
])
def test_the_systemd_calendar_of_a_cron_schedule(schedule, calendar):
    assert cron.on_calendar(schedule) == calendar
