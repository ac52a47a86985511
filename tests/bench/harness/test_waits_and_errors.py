"""The bench without silent waits or misplaced blame: --upstream checked before any trial, `bench install` saying what
it does and why it failed, harness errors counted apart (and run again), a report table that fits a 1280-px window,
and a summary table on the terminal."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from bench.harness import cli_agent, report
from tests.bench.harness.conftest import bench, copy_tasks, rows

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_upstream_that_cannot_serve_is_refused_before_any_trial(tmp_path, capsys):
    suite = copy_tasks(tmp_path / "suite", "csv-report")
    out = tmp_path / "out"
    started = time.monotonic()
    code = bench(suite, "--agents", "ga", "--model", "m", "--upstream", f"http://127.0.0.1:{_free_port()}/v1",
                 "--out", out)
    said = capsys.readouterr().err
    assert code == 2 and "cannot be reached" in said and "No trial was run" in said
    assert time.monotonic() - started < 30 and not rows(out) and not (out / "trials").exists()
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)  # a web server
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        code = bench(suite, "--agents", "ga", "--model", "m", "--upstream",
                     f"http://127.0.0.1:{web.server_address[1]}/", "--out", out)
    finally:
        web.shutdown()
        web.server_close()
    said = capsys.readouterr().err
    assert code == 2 and "answered HTTP 404" in said and "most end in /v1" in said and not rows(out)


def _agent(folder: Path, install: list[str]) -> Path:
    path = folder / "fake-agent.toml"
    lines = ", ".join('"' + line.replace("\\", "\\\\").replace('"', '\\"') + '"' for line in install)
    path.write_text(f'name = "fake-agent"\ninstall = [{lines}]\ncommand = ["${{prefix}}/bin/fake-agent"]\n'
                    'version_command = ["${prefix}/bin/fake-agent"]\n')
    return path


def test_bench_install_says_it_is_at_work_why_it_failed_and_that_it_succeeded(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GA_BENCH_AGENTS", str(tmp_path / "agents"))
    monkeypatch.setattr(cli_agent, "HEARTBEAT", 0.3)
    failing = _agent(tmp_path, ["sleep 1; echo 'npm ERR! code E404' >&2; echo 'npm ERR! 404 Not Found' >&2; exit 1"])
    assert bench("install", failing) == 1
    said = capsys.readouterr().err
    assert "still at work" in said and "install step failed (exit 1)" in said
    assert "npm ERR! 404 Not Found" in said and str(tmp_path / "agents" / "fake-agent" / "install.log") in said
    working = _agent(tmp_path, ["mkdir -p ${prefix}/bin",
                                "printf '#!/bin/sh\\necho fake-agent 1.2.3\\n' > ${prefix}/bin/fake-agent",
                                "chmod +x ${prefix}/bin/fake-agent"])
    assert bench("install", working) == 0
    said = capsys.readouterr().err
    assert f"fake-agent: installed (fake-agent 1.2.3) in {tmp_path / 'agents' / 'fake-agent'}" in said


def test_a_harness_error_is_no_failure_of_the_agent_and_runs_again(tmp_path, capsys):
    suite = copy_tasks(tmp_path / "suite", "csv-report")
    toml = suite / "csv-report" / "task.toml"
    toml.write_text(toml.read_text() + '\n[environment]\nsetup = "echo the fixture server is down; exit 3"\n')
    out = tmp_path / "out"
    assert bench(suite, "--agents", "oracle", "--out", out) == 0
    said = capsys.readouterr().err
    (row,) = rows(out)
    assert row["error"].startswith("task setup failed") and "harness error: oracle · csv-report" in said
    assert "✗" not in said
    summary = json.loads((out / "summary.json").read_text())
    assert summary["agents"] == {} and [e["task"] for e in summary["harness_errors"]["oracle"]] == ["csv-report"]
    page = (out / "report.html").read_text()
    assert "Harness errors (not counted above" in page and "task setup failed" in page
    table = said[said.index("agent "):]
    assert table.splitlines()[1].split() == ["oracle", "—", "—", "—", "—", "1"]  # the terminal's summary
    toml.write_text(toml.read_text().replace("exit 3", "true"))  # the fixture is back: the trial runs again
    assert bench(suite, "--agents", "oracle", "--out", out) == 0
    (row,) = rows(out)
    assert row["success"] and not row["error"]
    assert "1/1 (100%)" in capsys.readouterr().err


def _rows() -> list[dict]:
    """A results file as wide as a real three-agent, three-trial run makes it: long names and versions, every split."""
    made = []
    agents = {"ga": "0.1.0+62b6a266ab, 0.1.0+ee920b352c", "mini-swe-agent": "mini-swe-agent 2.4.6",
              "mini-swe-agent-text": "mini-swe-agent 2.4.6"}
    for i, task in enumerate(["append-done-line", "count-error-lines", "fix-first-n", "lead-from-page",
                              "port-from-config", "web-table", "invoices-r1"]):
        for agent, version in agents.items():
            for trial in (1, 2, 3):
                success = (i + trial) % 3 == 0 and agent != "mini-swe-agent"
                made.append({"task": task, "agent": agent, "trial": trial, "success": success,
                             "input_tokens": 123_456 * (trial + 1), "cached_tokens": 98_765, "output_tokens": 12_345,
                             "requests": 17, "tool_calls": 11, "wall_s": 308.8, "claimed_done": True,
                             "agent_version": version, "model": "qwen2.5-coder-1.5b", "acted": True,
                             "split": "test" if i % 2 else "dev", "tier": "small" if i < 5 else "standard",
                             "family": "invoices" if task.startswith("invoices") else "", "round": 1,
                             "error": "harness error: KeyError: 'x'" if (agent, trial, i) == ("ga", 3, 2) else ""})
    return made


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="needs Chromium (apt-get install chromium)")
def test_the_report_fits_a_1280_pixel_window(tmp_path):
    from playwright.sync_api import sync_playwright

    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    page_file = report.write(tmp_path, ["ga", "mini-swe-agent", "mini-swe-agent-text"], title="small-test")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM or "/usr/bin/chromium")
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(page_file.as_uri())
        width = page.evaluate("document.documentElement.scrollWidth")
        edges = page.evaluate("[...document.querySelectorAll('table')].map(t => t.getBoundingClientRect().right)")
        header = page.locator("#summary tr").first.inner_text()
        browser.close()
    assert width <= 1280 and len(edges) >= 5 and max(edges) <= 1280, (width, edges)
    assert "pass^k (k = 1, 2, 3)" in header and "harness errors" in header
