"""The local server's life: a free port, healthy before use, stopped at the end, and never outliving ga."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from ga.local.server import LocalServer, ServerError
from tests.ga.local.stand_ins import ROOT, alive, ready_cache


def test_starts_healthy_serves_and_stops(tmp_path, monkeypatch):
    monkeypatch.setenv("GA_STUB_SCRIPT", json.dumps([{"content": "hi"}]))
    cache = ready_cache(tmp_path / "cache")
    server = LocalServer(cache, tmp_path / "server.log", threads=1)
    with server as url:
        pid = server.proc.pid
        with urllib.request.urlopen(url.removesuffix("/v1") + "/health", timeout=5) as reply:
            assert reply.status == 200
        args = (tmp_path / "server.log").read_text()
        assert f"--port {server.port}" in args and "--temp 0" in args and "-c 32768" in args and "--jinja" in args
    assert not alive(pid)


def test_a_server_that_exits_while_starting_shows_its_log(tmp_path, monkeypatch):
    monkeypatch.setenv("GA_STUB_FAIL", "1")
    server = LocalServer(ready_cache(tmp_path / "cache"), tmp_path / "server.log")
    with pytest.raises(ServerError, match="exited with code 1") as err:
        server.start()
    assert "failed to load model" in str(err.value)


def test_a_server_that_never_gets_healthy_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv("GA_STUB_LOAD", "30")
    server = LocalServer(ready_cache(tmp_path / "cache"), tmp_path / "server.log")
    with pytest.raises(ServerError, match="not ready within 1 s"):
        server.start(timeout=1)
    assert server.proc is None


def test_the_server_dies_with_ga_even_on_kill_9(tmp_path):
    cache_root = tmp_path / "cache"
    ready_cache(cache_root)
    program = (f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
               "from pathlib import Path\nfrom ga.local.provision import Cache\n"
               "from ga.local.server import LocalServer\n"
               f"s = LocalServer(Cache(root=Path({str(cache_root)!r})), Path({str(tmp_path / 'log')!r}))\n"
               "s.start(); print(s.proc.pid, flush=True)\nimport time; time.sleep(60)\n")
    ga = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    server_pid = int(ga.stdout.readline())
    assert alive(server_pid)
    os.kill(ga.pid, signal.SIGKILL)
    ga.wait()
    deadline = time.monotonic() + 10
    while alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(server_pid)
