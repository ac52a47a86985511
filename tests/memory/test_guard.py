"""Secrets never reach memory; memory is written only after start_long_term_update; a crash keeps the old file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memory.guard import harvest, scrub
from sop.skill import read
from tests.ga.cli.test_cli import wait_for
from tests.memory.helpers import SOP_REPLY, TASK, csv_run, payments, run_ga, sum_run
from tests.scripted import tool_call

API_KEY = "sk-test-abcdefghijklmnop123456"
PASSWORD = "hunter2hunter2"
TOKEN = "tok_9f8e7d6c5b4a"


def _memory_text(home: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for root in (home / "sop", home / "memory")
                     for p in root.rglob("*") if p.is_file())


def test_secrets_in_the_trajectory_never_reach_memory_files(home, workspace):
    # names the model reads in full (a DB_PASSWORD= or SERVICE_TOKEN= line is redacted before it), so only memory's
    # guard, which hunts every value seen in the run, stands between them and memory
    (workspace / "config.env").write_text(f"DB_CREDENTIALS={PASSWORD}\nSERVICE_API_KEY={TOKEN}\nUSER=alice\n")
    sop_path = home / "sop/db-login/SKILL.md"
    explicit = [
        {"tool_calls": [tool_call("file_read", path="config.env")]},
        {"tool_calls": [tool_call("code_run", script="print('connected')")]},
        {"tool_calls": [tool_call("start_long_term_update")]},
        {"tool_calls": [tool_call("file_write", path=str(home / "memory/facts.md"),
                                  content=f"- the database user is alice, password {PASSWORD}\n")]},
        {"tool_calls": [tool_call("file_write", path=str(sop_path), content=(
            "---\nname: db-login\ndescription: Log in to the app database with the credentials in config.env.\n"
            f"---\n## Steps\n1. Read config.env.\n2. Connect with token {TOKEN} and key {API_KEY}.\n"))]},
        {"content": "Connected."},
    ]
    proc, server = run_ga(explicit, home, workspace, "connect to the database", OPENAI_API_KEY=API_KEY)
    assert proc.returncode == 0, proc.stderr
    server.assert_complete()  # the run saved its own SOP: no distillation
    assert "secret value(s) redacted" in server.requests[4]["messages"][-1]["content"]
    payments(workspace)
    steps = [{"tool_calls": [tool_call("code_run", script="print(open('config.env').read())")]}, *sum_run()]
    proc, server = run_ga(steps, home, workspace, TASK, OPENAI_API_KEY=API_KEY)
    assert proc.returncode == 0, proc.stderr
    assert "learnt script" in proc.stderr
    text = _memory_text(home)  # SKILL.md files, learnt scripts, facts, archives
    for secret in (PASSWORD, TOKEN, API_KEY):
        assert secret not in text
    assert read(sop_path).metadata["source"] == "model"  # provenance stamped on the model's own SOP
    assert "[run " in (home / "memory/facts.md").read_text()


def test_memory_is_not_writable_before_start_long_term_update_and_a_trivial_run_is_refused(home, workspace):
    steps = [{"tool_calls": [tool_call("file_write", path=str(home / "memory/facts.md"), content="- x\n")]},
             {"tool_calls": [tool_call("start_long_term_update")]},
             {"content": "Nothing was saved."}]
    proc, server = run_ga(steps, home, workspace, "remember x")
    assert proc.returncode == 0
    results = [m["content"] for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert "Refused to write" in results[0]
    assert "Nothing to save yet: this run has made 0 successful tool call(s)" in results[1]
    assert not (home / "memory/facts.md").exists()


def test_start_long_term_update_returns_the_rules_the_index_and_the_closest_sops(home, workspace):
    steps = [*csv_run()[:3], {"tool_calls": [tool_call("start_long_term_update")]}, {"content": "ok"}]
    _, server = run_ga(steps, home, workspace, "install the missing pandas module", "--no-learn")
    result = server.requests[4]["messages"][-1]["content"]
    assert "read-only in this run" in result
    _proc, server = run_ga(steps, home, workspace, "install the missing pandas module")
    result = server.requests[4]["messages"][-1]["content"]
    assert result.startswith("Memory rules")
    assert "Never store secrets" in result and "- install-missing-package" in result
    assert f"{home}/sop/install-missing-package/SKILL.md" in result.split("SOPs closest to this task")[1]


def test_a_crash_mid_write_leaves_the_old_file_intact(home, tmp_path):
    target = home / "sop/csv-summary-script/SKILL.md"
    target.parent.mkdir(parents=True)
    old = SOP_REPLY.format(name="csv-summary-script", extra="")
    target.write_text(old)
    writer = subprocess.Popen([sys.executable, "-c", (
        "import sys; from pathlib import Path; from sop.store import write_text\n"
        "write_text(Path(sys.argv[1]), 'x' * 400_000_000)"), str(target)],
        cwd=Path(__file__).resolve().parents[2])
    try:
        wait_for(lambda: any(p.stat().st_size > 1_000_000 for p in target.parent.glob(".SKILL.md.*.tmp")), 60)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    assert target.read_text() == old
    assert read(target).name == "csv-summary-script"


def test_stale_temp_files_of_a_crash_are_cleared_by_the_next_write(home):
    from sop.store import STALE_TEMP_AGE, write_text

    target = home / "memory/facts.md"
    target.parent.mkdir(parents=True)
    leftover = target.parent / ".facts.md.abc.tmp"
    leftover.write_text("half")
    os.utime(leftover, (time.time() - STALE_TEMP_AGE - 1,) * 2)
    write_text(target, "- fact\n")
    assert not leftover.exists() and target.read_text() == "- fact\n"


def test_scrub_removes_assignments_and_values_seen_elsewhere_but_keeps_placeholders():
    dump = f'DB_PASSWORD="{PASSWORD}" API_TOKEN={TOKEN} password = os.environ["DB_PASS"] token: $TOKEN'
    secrets = tuple(harvest(dump))
    assert set(secrets) == {PASSWORD, TOKEN}
    clean = scrub(dump + f"\nthe password is {PASSWORD}", secrets)
    assert PASSWORD not in clean and TOKEN not in clean
    assert 'os.environ["DB_PASS"]' in clean and "$TOKEN" in clean


def test_harvest_and_scrub_on_long_tokens_and_repeated_keywords():
    # each of these stalled the guard for minutes (a 16,000-character token: 124 s), after the run had ended
    assert harvest("a" * 200_000) == set() and harvest("token" * 40_000) == set()
    assert harvest("auth" * 40_000 + "=" + "v" * 40) == {"v" * 40}
    assert harvest("token" + " " * 200_000 + "x") == set()
    assert harvest("x" * 100_000 + " api_key: abcdef123 " + "y" * 100_000) == {"abcdef123"}
    long_value = "Q" * 300_000
    assert scrub(f"token={long_value} again {long_value}", (long_value,)) == "token=[REDACTED] again [REDACTED]"


def test_thousands_of_harvested_values_are_all_scrubbed():
    dump = "".join(f"password=v{i:09d}\n" for i in range(50_000))
    secrets = tuple(sorted(harvest(dump), key=len, reverse=True))
    assert len(secrets) == 50_000
    elsewhere = "".join(f"seen v{i:09d}\n" for i in range(50_000))
    assert scrub(dump + elsewhere, secrets) == "password=[REDACTED]\n" * 50_000 + "seen [REDACTED]\n" * 50_000


def test_writing_the_index_after_start_long_term_update_is_told_not_a_crash(home, workspace):
    index = home / "memory/index.md"
    steps = [{"tool_calls": [tool_call("file_write", path="a.txt", content="x")]},
             {"tool_calls": [tool_call("file_read", path="a.txt")]},
             {"tool_calls": [tool_call("start_long_term_update")]},
             {"tool_calls": [tool_call("file_write", path=str(index), content="- my own index\n")]},
             {"content": "done"}, {"content": "NOTHING"}]
    proc, server = run_ga(steps, home, workspace, "write things")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    told = server.requests[4]["messages"][-1]["content"]
    assert "memory/index.md is rebuilt by ga from the SOPs" in told
    assert not index.exists() or "my own index" not in index.read_text()
