"""Job files and slot arithmetic: intervals, cron in local time, missed slots, TOML written and read back."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest
from dateutil.tz import tzlocal

from ga.errors import ConfigError
from ga.jobs.job import History, Job, load_job, load_jobs, parse_every, save_job


def at(*args: int) -> float:
    return datetime(*args, tzinfo=tzlocal()).timestamp()


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("15m", 900), ("6h", 21600), ("1d", 86400), ("2.5", 2.5),
                                               (30, 30), ("10 min", 600)])
def test_intervals(text, seconds):
    assert parse_every(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "-5m", "5 weeks", "soon", True])
def test_bad_intervals_are_refused(text):
    with pytest.raises(ConfigError, match="is not an interval"):
        parse_every(text)


def test_an_interval_job_catches_up_with_one_slot():
    job = Job(name="j", task="t", workdir=Path("/"), every=3600)
    base = at(2026, 1, 1, 0, 0)
    assert job.next_after(base) == base + 3600
    assert job.catch_up(base, base + 5.5 * 3600) == (base + 5 * 3600, 4)
    assert job.catch_up(base, base + 3600) == (base + 3600, 0)


def test_a_cron_job_catches_up_with_the_latest_slot_in_local_time():
    job = Job(name="j", task="t", workdir=Path("/"), cron="0 3 * * *")
    assert job.next_after(at(2026, 1, 1, 3, 0)) == at(2026, 1, 2, 3, 0)
    assert job.catch_up(at(2026, 1, 1, 3, 0), at(2026, 1, 5, 12, 0)) == (at(2026, 1, 5, 3, 0), 3)
    assert job.catch_up(at(2026, 1, 1, 3, 0), at(2026, 1, 2, 3, 0)) == (at(2026, 1, 2, 3, 0), 0)  # exactly on it


def test_a_job_is_written_as_toml_and_reads_back(tmp_path):
    task = 'Say "hi"\nthen \\ leave \x7f — ünïcode'
    job = Job(name="nightly", task=task, workdir=tmp_path, cron="0 3 * * *", max_turns=5, max_time=60.5,
              model="m", enabled=False)
    path = save_job(tmp_path / "schedule", job)
    assert load_job(path) == job
    assert 'cron = "0 3 * * *"' in path.read_text() and "enabled = false" in path.read_text()


@pytest.mark.parametrize(("text", "error"), [
    ('task = "x"\nworkdir = "/"\n', "exactly one of cron"),
    ('task = "x"\nworkdir = "/"\ncron = "0 3 * *"\nevery = "1h"\n', "exactly one of cron"),
    ('task = "x"\nworkdir = "/"\ncron = "61 * * * *"\n', "not a valid cron expression"),
    ('task = "x"\nworkdir = "/"\ncron = "0 0 30 2 *"\n', "never fires: no date matches it"),
    ('task = "x"\nworkdir = "/"\ncron = "0 0 31 4,6 *"\n', "never fires: no date matches it"),
    ('task = "x"\nworkdir = "/"\nevery = "1h"\nmax_time = nan\n', "max_time must be a number"),
    ('task = "x"\nworkdir = "/"\nevery = "1h"\nmax_time = inf\n', "max_time must be a number"),
    ('task = ""\nworkdir = "/"\nevery = "1h"\n', "task is missing"),
    ('task = "x"\nworkdir = "rel"\nevery = "1h"\n', "workdir must be an absolute path"),
    ('task = "x"\nworkdir = "/"\nevery = "1h"\nmax_turns = "5"\n', "max_turns has the wrong type"),
    ('task = "x"\nworkdir = "/"\nevery = "1h"\nretries = 3\n', "unknown field(s) retries"),
    ('task = "x\nworkdir', "not valid TOML"),
])
def test_a_bad_job_file_is_named_with_what_is_wrong(tmp_path, text, error):
    (tmp_path / "bad.toml").write_text(text)
    (tmp_path / "good.toml").write_text('task = "x"\nworkdir = "/"\nevery = "1h"\n')
    jobs, errors = load_jobs(tmp_path)
    assert [j.name for j in jobs] == ["good"]
    assert len(errors) == 1 and str(tmp_path / "bad.toml") in errors[0] and error in errors[0]


def test_history_reads_only_its_tail_and_finds_the_last_run(tmp_path):
    history = History(tmp_path)
    history.append("j", {"event": "fired", "slot": 1.0, "run_id": "old"})
    with open(tmp_path / "history" / "j.jsonl", "a") as f:
        f.write('{"event": "padding", "x": "' + "y" * 70_000 + '"}\n')
    history.append("j", {"event": "fired", "slot": 2.0, "run_id": "r1"})
    history.append("j", {"event": "ended", "run_id": "r1", "status": "done", "tokens": 5})
    with open(tmp_path / "history" / "j.jsonl", "a") as f:
        f.write('{"event": "fir')  # a line torn by a kill
    fired, ended = history.last_run("j")
    assert history.last_slot("j") == 2.0 and fired["run_id"] == "r1" and ended["status"] == "done"


def test_cron_follows_local_time_across_a_daylight_saving_change(monkeypatch):
    if not Path("/usr/share/zoneinfo/Europe/Berlin").exists():
        pytest.skip("no tzdata")
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        job = Job(name="j", task="t", workdir=Path("/"), cron="0 3 * * *")
        spring = job.next_after(at(2026, 3, 28, 3, 0))
        assert datetime.fromtimestamp(spring).hour == 3 and spring - at(2026, 3, 28, 3, 0) == 23 * 3600
    finally:
        monkeypatch.undo()
        time.tzset()
