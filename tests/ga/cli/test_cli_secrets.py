"""No way out of ga carries the API key: a server error that repeats the Authorization header reaches --json,
--jsonl, stderr, outbox/result.json and the GA_NOTIFY payload without it."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys

import pytest

from tests.ga.cli.test_cli import RUN_PY, ga_env, only_run, wait_for
from tests.scripted import ScriptedServer


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


@pytest.mark.parametrize("output", [["--json"], ["--jsonl"], []], ids=["json", "jsonl", "plain"])
def test_a_server_error_echoing_the_key_leaves_by_no_way_out(home, workspace, tmp_path, output):
    key = f"k3y-{secrets.token_hex(16)}"  # not shaped like a known key: only its value can give it away
    notified = tmp_path / "notify.json"
    with ScriptedServer([{"fault": "echo_auth"}]) as server:
        env = {**ga_env(server, home, GA_NOTIFY=f"cat > {notified}"), "OPENAI_API_KEY": key}
        proc = subprocess.run([sys.executable, RUN_PY, "say hi", *output], cwd=workspace, env=env, text=True,
                              capture_output=True, timeout=60, stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "Invalid header: Authorization: Bearer [REDACTED]" in proc.stdout + proc.stderr  # the error is told
    wait_for(lambda: notified.exists() and notified.read_text().endswith("}"))
    folder = only_run(home)
    result = (folder / "outbox/result.json").read_text()
    assert json.loads(result)["status"] == "failed" and json.loads(notified.read_text())["status"] == "failed"
    for name, text in (("stdout", proc.stdout), ("stderr", proc.stderr), ("outbox/result.json", result),
                       ("GA_NOTIFY", notified.read_text()), ("state.json", (folder / "state.json").read_text()),
                       ("trajectory", (folder / "trajectory.jsonl").read_text())):
        assert key not in text, name
