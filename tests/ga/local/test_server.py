"""The llama-server process: a port it binds itself, a key it demands, healthy before use, stopped at the end, never
outliving its parent; the settings it is started with."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from ga.local.server import LocalServer, ServerError, ServerOptions, default_threads, idle_cores, physical_cores
from tests.ga.local.stand_ins import ROOT, alive, ready_cache


def key_file(tmp_path, key="k3y-for-this-server"):
    path = tmp_path / "key"
    path.write_text(key + "\n")
    return path


def get(url: str, key: str | None = None) -> int:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as reply:
            return reply.status
    except urllib.error.HTTPError as err:
        return err.code


def test_starts_on_a_port_it_binds_itself_demands_its_key_and_stops(tmp_path, monkeypatch):
    monkeypatch.setenv("GA_STUB_SCRIPT", json.dumps([{"content": "hi"}]))
    cache = ready_cache(tmp_path / "cache")
    server = LocalServer(cache, tmp_path / "server.log", key_file=key_file(tmp_path), options=ServerOptions(threads=1))
    with server as url:
        pid = server.proc.pid
        assert server.port and url == f"http://127.0.0.1:{server.port}/v1"
        assert get(server.root_url + "/health") == 200  # public, as llama-server's is
        assert get(url + "/slots") == 401 and get(url.removesuffix("/v1") + "/slots", "wrong") == 401
        assert get(server.root_url + "/slots", "k3y-for-this-server") == 200
        args = (tmp_path / "server.log").read_text()
        assert "--port 0 " in args and f"--api-key-file {tmp_path / 'key'}" in args
        assert "k3y-for-this-server" not in args  # the key is in no command line
        assert "--temp 0" in args and "-c 32768" in args and "--jinja" in args and "-t 1" in args
    assert not alive(pid)


def test_the_settings_reach_the_command_and_extra_flags_win():
    options = ServerOptions(threads=3, context=8192, batch=512, ubatch=256, flash_attn=True, cache_reuse=128,
                            warmup=False, extra=("-c", "4096", "--poll", "0"))
    flags = options.flags(32768)
    assert flags[:13] == ["-c", "8192", "-t", "3", "-b", "512", "-ub", "256", "--cache-reuse", "128", "-fa",
                          "--no-warmup", "-c"] and flags[-2:] == ["--poll", "0"]
    assert "--no-warmup" not in ServerOptions().flags(32768)
    assert options.window(32768) == 4096 and ServerOptions().window(32768) == 32768
    assert 1 <= int(ServerOptions().flags(32768)[3]) <= physical_cores()  # a thread per core left idle


def test_a_server_that_exits_while_starting_shows_its_log(tmp_path, monkeypatch):
    monkeypatch.setenv("GA_STUB_FAIL", "1")
    server = LocalServer(ready_cache(tmp_path / "cache"), tmp_path / "server.log", key_file=key_file(tmp_path))
    with pytest.raises(ServerError, match="exited with code 1") as err:
        server.start()
    assert "failed to load model" in str(err.value)


def test_a_server_that_never_gets_healthy_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv("GA_STUB_LOAD", "30")
    server = LocalServer(ready_cache(tmp_path / "cache"), tmp_path / "server.log", key_file=key_file(tmp_path))
    with pytest.raises(ServerError, match="not ready within 1 s"):
        server.start(timeout=1)
    assert server.proc is None


def test_the_server_dies_with_its_parent_even_on_kill_9(tmp_path):
    cache_root = tmp_path / "cache"
    ready_cache(cache_root)
    program = (f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
               "from pathlib import Path\nfrom ga.local.provision import Cache\n"
               "from ga.local.server import LocalServer\n"
               f"s = LocalServer(Cache(root=Path({str(cache_root)!r})), Path({str(tmp_path / 'log')!r}), "
               f"key_file=Path({str(key_file(tmp_path))!r}))\n"
               "s.start(); print(s.proc.pid, flush=True)\nimport time; time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    server_pid = int(parent.stdout.readline())
    assert alive(server_pid)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(server_pid)


def test_busy_cores_get_no_thread_of_their_own_unless_the_work_is_ours():
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        time.sleep(0.5)
        busy = idle_cores(1.0)
        assert busy < 0.75 and default_threads() == 1
        assert idle_cores(1.0, spare=tuple(s.pid for s in spinners)) > busy  # a run importing while its server starts
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
