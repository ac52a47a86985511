"""The Dask executor: trials on a LocalCluster's worker processes, results back in results.jsonl."""

from __future__ import annotations

import os

import pytest

from ga.bench import runner
from ga.bench.executors import DaskExecutor, make_executor
from ga.bench.tasks import load_suite
from ga.bench.trial import BenchConfig
from ga.errors import ConfigError
from tests.bench.conftest import copy_tasks, rows

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
    with pytest.raises(ConfigError, match="use local or dask://HOST:PORT"):
        make_executor("ray://x", 1)
    with pytest.raises(ConfigError, match=r"No Dask scheduler at tcp://127\.0\.0\.1:9"):
        DaskExecutor("tcp://127.0.0.1:9", timeout=1)
