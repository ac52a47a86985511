"""The Dask executor: trials on a LocalCluster's worker processes, and on an existing cluster started as users start
one (`dask scheduler`, `dask worker`), results back in results.jsonl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from bench.harness import runner
from bench.harness.executors import DaskExecutor, make_executor
from bench.harness.tasks import load_suite
from bench.harness.trial import BenchConfig
from ga.errors import ConfigError
from tests.bench.harness.conftest import ROOT, copy_tasks, rows

distributed = pytest.importorskip("distributed") if not os.environ.get("CI") else __import__("distributed")


def test_two_trials_run_on_a_local_cluster(tmp_path):
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug", "csv-report")
    config = BenchConfig(out=tmp_path / "out")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        executor = DaskExecutor(client=client)
        runner.run(load_suite(suite), {"oracle": "oracle"}, 1, config, executor=executor)
        workers = set(client.run(os.getpid).values())
    found = rows(config.out)
    assert sorted(r["task"] for r in found) == ["csv-report", "fix-calc-bug"]
    assert all(r["success"] for r in found)
    assert {r["worker_pid"] for r in found} <= workers and os.getpid() not in {r["worker_pid"] for r in found}


def test_executor_specs():
    with pytest.raises(ConfigError, match="use local, dask://HOST:PORT or tls://HOST:PORT"):
        make_executor("ray://x", 1)
    with pytest.raises(ConfigError, match=r"No Dask scheduler at tcp://127\.0\.0\.1:9"):
        DaskExecutor("tcp://127.0.0.1:9", timeout=1)


def test_an_existing_scheduler_with_two_workers_shares_one_run(tmp_path):
    """What the README tells a user: a scheduler, workers that can import ga and reach the suite and --out folders
    (here the same machine; elsewhere the same paths), and `--executor dask://HOST:PORT` on the bench command."""
    dask = shutil.which("dask") or str(__import__("pathlib").Path(sys.executable).with_name("dask"))
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug", "csv-report", "csv-to-json", "web-table")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # a worker needs ga importable: a checkout or pip install .
    info = tmp_path / "scheduler.json"
    processes = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file",
                                   str(info), "--no-dashboard"], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not info.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        for name in ("one", "two"):
            processes.append(subprocess.Popen(
                [dask, "worker", address, "--name", name, "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        out = tmp_path / "out"
        done = subprocess.run([sys.executable, str(ROOT / "run.py"), "bench", str(suite), "--agents", "oracle",
                               "--executor", address.replace("tcp://", "dask://"), "--out", str(out), "--no-report"],
                              env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
    found = rows(out)
    assert len(found) == 4 and all(r["success"] for r in found)
    assert len({r["worker_pid"] for r in found}) == 2  # both workers took trials of the one run
