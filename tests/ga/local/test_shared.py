"""One server per model and cache folder, shared and kept warm: found through its lock files, stopped by the last run
out (keep-alive 0), after its idle time, or now (`models stop`); never two, never an orphan, kill -9 included. The
server is the stand-in; the keeper, the locks and the processes are real."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from ga.local import prefix, shared
from ga.local.server import ServerError, ServerOptions
from ga.local.server_folder import folder_of
from ga.local.shared import DEFAULT_KEEP_ALIVE, attach, keep_alive, status, stop
from tests.ga.local.stand_ins import ROOT, alive, ready_cache
from tools.guard import sandbox, sandbox_probe

OPTIONS = ServerOptions(threads=1)
TOOLS = [{"type": "function", "function": {"name": "file_read", "parameters": {"type": "object"}}}]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GA_STUB_SCRIPT", json.dumps([{"content": f"reply {i}"} for i in range(5)]))
    cache = ready_cache(tmp_path / "cache")
    yield cache
    stop(cache)  # whatever a failed test left running


def gone(*pids: int, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(map(alive, pids))


def chat(lease, user: str, tools=TOOLS) -> dict:
    body = {"messages": [{"role": "system", "content": "You are ga."}, {"role": "user", "content": user}],
            "tools": tools}
    request = urllib.request.Request(lease.url + "/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json", "Authorization": f"Bearer {lease.key}"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


def test_keep_alive_reads_durations_as_ollama_does():
    assert keep_alive({}) == DEFAULT_KEEP_ALIVE == 300
    values = {"0": 0, "90": 90, "90s": 90, "5m": 300, "1.5h": 5400, "-1": math.inf, "-1m": math.inf}
    for raw, seconds in values.items():
        assert keep_alive({"GA_LOCAL_KEEP_ALIVE": raw}) == seconds, raw
    with pytest.raises(ServerError, match="GA_LOCAL_KEEP_ALIVE='soon'"):
        keep_alive({"GA_LOCAL_KEEP_ALIVE": "soon"})


def test_consecutive_runs_share_one_warm_server_until_models_stop(cache):
    first = attach(cache, OPTIONS, 60)
    assert first.started and first.key and chat(first, "hi")["choices"]
    first.release()
    state = status(cache)
    assert state is not None and not state["in_use"] and alive(state["server"])
    second = attach(cache, OPTIONS, 60)
    assert not second.started and second.state["server"] == first.state["server"] and second.key == first.key
    assert status(cache)["in_use"]
    second.release()
    stopped = stop(cache)
    assert stopped["server"] == state["server"] and not stopped["in_use"]
    assert gone(state["server"], state["keeper"], within=0) and status(cache) is None
    assert not folder_of(cache).key.exists() and stop(cache) is None


def test_the_server_demands_a_key_read_from_a_0600_file_and_shown_nowhere(cache):
    lease = attach(cache, OPTIONS, 60)
    try:
        key_file = folder_of(cache).key
        assert os.stat(key_file).st_mode & 0o777 == 0o600 and key_file.read_text().strip() == lease.key
        assert len(lease.key) >= 32  # random per server, not guessable
        for wrong in (None, "", "not-" + lease.key):
            headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {wrong}"} if wrong else {})
            request = urllib.request.Request(lease.url + "/chat/completions", b'{"messages": []}', headers)
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 401, wrong
        assert chat(lease, "hi")["choices"]  # with the key
        with open(f"/proc/{lease.state['server']}/cmdline", "rb") as f:
            command = f.read().decode().split("\0")
        assert command[command.index("--api-key-file") + 1] == str(key_file) and "--api-key" not in command
        assert lease.key not in " ".join(command) and lease.key not in folder_of(cache).log.read_text()
    finally:
        lease.release()

def test_the_run_does_its_own_work_while_a_server_starts(cache, monkeypatch):
    monkeypatch.setenv("GA_STUB_LOAD", "1")
    seen = []
    lease = attach(cache, OPTIONS, 60, meanwhile=lambda: seen.append(status(cache)))
    assert seen == [None] and status(cache) is not None  # it ran while the server loaded, then the server was ready
    lease.release()
    attach(cache, OPTIONS, 60, meanwhile=lambda: seen.append("warm")).release()
    assert seen == [None]  # a warm server: nothing to overlap


def test_with_keep_alive_0_the_last_run_out_stops_the_server(cache):
    one, two = attach(cache, OPTIONS, 0), attach(cache, OPTIONS, 0)
    assert two.state["server"] == one.state["server"]
    one.release()
    assert alive(one.state["server"])  # the other run still uses it
    two.release()
    assert gone(one.state["server"], one.state["keeper"], within=0)  # stopped before release() returned


def test_an_idle_server_stops_after_its_keep_alive(cache):
    lease = attach(cache, OPTIONS, 1)
    lease.release()
    assert alive(lease.state["server"])
    assert gone(lease.state["server"], lease.state["keeper"])
    assert "stopping the server: idle for 1 s" in folder_of(cache).log.read_text()


def test_a_keeper_too_busy_to_stop_in_time_is_killed_with_its_server(cache, monkeypatch):
    monkeypatch.setenv("GA_STUB_BUSY", "30")  # saving the prefix would wait this long
    monkeypatch.setattr(shared, "STOP_WAIT", 1.0)
    lease = attach(cache, OPTIONS, 60)
    chat(lease, "hi")
    lease.release()
    started = time.monotonic()
    assert stop(cache)["server"] == lease.state["server"]
    assert time.monotonic() - started < 10
    assert gone(lease.state["server"], lease.state["keeper"]) and status(cache) is None


def holder(cache, keep: float) -> subprocess.Popen:
    """A run in another process: it takes the server, says its pids, and sleeps."""
    program = (f"import sys, json; sys.path.insert(0, {str(ROOT)!r})\n"
               "from pathlib import Path\nfrom ga.local.provision import Cache\n"
               "from ga.local.server import ServerOptions\nfrom ga.local.shared import attach\n"
               f"lease = attach(Cache(root=Path({str(cache.root)!r})), ServerOptions(threads=1), {keep})\n"
               "print(json.dumps(lease.state), flush=True)\nimport time; time.sleep(120)\n")
    return subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)


def test_a_run_killed_with_9_leaves_no_server_behind(cache):
    run = holder(cache, 0)
    state = json.loads(run.stdout.readline())
    assert alive(state["server"])
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    assert gone(state["server"], state["keeper"])


def test_a_killed_keeper_takes_its_server_along_and_the_next_run_starts_anew(cache):
    lease = attach(cache, OPTIONS, 60)
    os.kill(lease.state["keeper"], signal.SIGKILL)
    assert gone(lease.state["server"])
    lease.release()
    assert status(cache) is None  # its state file is stale: no keeper holds it
    again = attach(cache, OPTIONS, 0)
    assert again.started and again.state["server"] != lease.state["server"] and chat(again, "hi")["choices"]
    again.release()


def test_runs_that_start_together_get_one_server(cache):
    runs = [holder(cache, 0) for _ in range(3)]
    states = [json.loads(run.stdout.readline()) for run in runs]
    assert len({s["server"] for s in states}) == 1 and len({s["keeper"] for s in states}) == 1
    for run in runs:
        run.kill()
        run.wait()
    assert gone(states[0]["server"], states[0]["keeper"])


def test_new_settings_replace_an_idle_server_but_never_start_a_second(cache):
    other = ServerOptions(threads=1, extra=("--poll", "0"))
    busy = attach(cache, OPTIONS, 60)
    shared = attach(cache, other, 60)  # in use: taken as it is
    assert shared.state["server"] == busy.state["server"] and shared.state["options"]["extra"] == []
    busy.release()
    shared.release()
    fresh = attach(cache, other, 60)  # idle: restarted with the new settings
    assert fresh.started and fresh.state["options"]["extra"] == ["--poll", "0"]
    assert gone(busy.state["server"], within=0)
    fresh.release()


def test_the_prefix_is_saved_when_the_server_stops_and_restored_into_the_next(cache):
    lease = attach(cache, OPTIONS, 0)
    assert lease.state["prefix_tokens"] == 0
    first = chat(lease, "first task")
    assert first["timings"]["cache_n"] == 0
    lease.release()
    (saved,) = prefix.folder(cache).glob("*.bin")
    text = saved.read_text()  # the stand-in saves its cached prompt as text: the system turn with the tools, no more
    assert saved.name.startswith(cache.model.sha256[:16]) and text.startswith("<|im_start|>system\nYou are ga.")
    assert "file_read" in text and "first task" not in text and "<|im_end|>" not in text
    lease = attach(cache, OPTIONS, 0)
    assert lease.state["prefix_tokens"] == len(saved.read_text())
    second = chat(lease, "another task")
    assert second["timings"]["cache_n"] == len(saved.read_text())  # only the task was evaluated
    lease.release()
    assert list(prefix.folder(cache).glob("*.bin")) == [saved]  # the same prefix: not saved again


def test_a_prefix_without_tool_schemas_is_not_kept(cache):
    lease = attach(cache, OPTIONS, 0)
    chat(lease, "a distillation-like request", tools=None)
    lease.release()
    assert not list(prefix.folder(cache).glob("*.bin"))


PROBE = """import os, urllib.error, urllib.request
try:
    urllib.request.urlopen("{url}/slots", timeout=5)
    print("answered")
except urllib.error.HTTPError as e:
    print("refused", e.code)
except OSError as e:
    print("unreachable")
print("key visible:", os.path.exists({key!r}))
"""


@pytest.mark.skipif(bool(sandbox_probe.problem()), reason="needs a working bubblewrap")
def test_sandboxed_code_cannot_reach_the_server_nor_read_its_key(cache, tmp_path):
    lease = attach(cache, OPTIONS, 0)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    probe = PROBE.format(url=lease.url.removesuffix("/v1"), key=str(folder_of(cache).key))
    outputs = []
    for network in (False, True):  # the default, then GA_SANDBOX_NET=1
        layout = sandbox.Layout(workspace=workspace, ga_home=tmp_path / "home", network=network)
        command = sandbox.wrap([sys.executable, "-c", probe], layout=layout, cwd=workspace, read_only=[])
        outputs.append(subprocess.run(command, capture_output=True, text=True, timeout=60, check=False).stdout)
    lease.release()
    assert outputs[0].split("\n")[:2] == ["unreachable", "key visible: False"]  # its own network namespace
    assert outputs[1].split("\n")[:2] == ["refused 401", "key visible: False"]  # the host's: the key is missing


def test_a_saved_prefix_is_kept_apart_for_each_kv_layout(cache):
    same = {prefix.tag(cache, ServerOptions(**o)) for o in ({}, {"threads": 1, "batch": 512}, {"extra": ("-t", "1")})}
    other = {prefix.tag(cache, ServerOptions(**o)) for o in
             ({"flash_attn": True}, {"extra": ("-ctk", "q8_0")}, {"extra": ("-fa", "-t", "1")})}
    assert len(same) == 1 and len(other) == 3 and not same & other
    fa_and_threads, fa = ServerOptions(extra=("-fa", "-t", "1")), ServerOptions(extra=("-fa",))
    assert prefix.tag(cache, fa_and_threads) == prefix.tag(cache, fa)
