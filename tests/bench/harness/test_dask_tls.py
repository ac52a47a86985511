"""The bench says what it trusts (`bench --help`), and reaches a Dask scheduler over TLS: a scheduler and a worker
started as the Dask docs start them (`--protocol tls` with a CA, a certificate and a key made by openssl), the bench
with `--executor tls://HOST:PORT` and the same files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bench.harness.conftest import ROOT, bench, copy_tasks, rows

distributed = pytest.importorskip("distributed") if not os.environ.get("CI") else __import__("distributed")


def test_bench_help_says_what_it_trusts(capsys):
    with pytest.raises(SystemExit):
        bench("--help")
    shown = " ".join(capsys.readouterr().out.split())
    assert "run on this machine as you, outside any sandbox" in shown and "run only suites you trust" in shown
    assert "neither encrypted nor authenticated" in shown and "tls://" in shown


def test_tls_needs_its_files(tmp_path, capsys):
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug")
    assert bench(suite, "--agents", "oracle", "--executor", "tls://127.0.0.1:9", "--out", tmp_path / "out",
                 "--no-report") == 2
    assert "needs --tls-ca-file, --tls-cert and --tls-key" in capsys.readouterr().err
    assert bench(suite, "--agents", "oracle", "--tls-cert", "x.pem", "--out", tmp_path / "out", "--no-report") == 2
    assert "give all three" in capsys.readouterr().err


def certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA and one certificate it signed for 127.0.0.1 (the scheduler, the worker and the client share it)."""
    ca, ca_key, cert, key = (folder / n for n in ("ca.pem", "ca.key", "node.pem", "node.key"))
    ext = folder / "san.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1\n")
    for command in (
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "1", "-subj",
         "/CN=bench-test-ca"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", folder / "node.csr", "-subj",
         "/CN=127.0.0.1"],
        ["x509", "-req", "-in", folder / "node.csr", "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
         "-days", "1", "-extfile", ext],
    ):
        subprocess.run(["openssl", *map(str, command)], check=True, capture_output=True, timeout=60)
    return ca, cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the certificates")
def test_a_scheduler_reached_over_tls_runs_the_trials(tmp_path):
    dask = shutil.which("dask") or str(Path(sys.executable).with_name("dask"))
    ca, cert, key = certificates(tmp_path)
    tls = ["--tls-ca-file", str(ca), "--tls-cert", str(cert), "--tls-key", str(key)]
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug", "csv-report")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    info = tmp_path / "scheduler.json"
    processes = [subprocess.Popen([dask, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", "0",
                                   "--scheduler-file", str(info), "--no-dashboard", *tls], env=env, cwd=tmp_path,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not info.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        assert address.startswith("tls://")
        processes.append(subprocess.Popen([dask, "worker", address, "--nworkers", "1", "--nthreads", "1",
                                           "--no-dashboard", *tls], env=env, cwd=tmp_path,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        out = tmp_path / "out"
        done = subprocess.run([sys.executable, str(ROOT / "run.py"), "bench", str(suite), "--agents", "oracle",
                               "--executor", address, *tls, "--out", str(out), "--no-report"],
                              env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
    found = rows(out)
    assert len(found) == 2 and all(r["success"] for r in found)
    assert os.getpid() not in {r["worker_pid"] for r in found}
