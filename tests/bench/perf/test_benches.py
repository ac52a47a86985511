"""The benchmark scripts still run against the code they measure (their figures are read by people, not asserted:
a script that crashes or reports FAIL after a change is what this catches). Each runs a small slice here; the whole
runs are for measuring, by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = sorted(p.stem for p in (ROOT / "bench" / "perf").glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("argv", [["bench/perf/context_bench.py", "--no-stress"],
                                  ["bench/perf/core_bench.py", "--turns", "30"],
                                  ["bench/perf/memory_bench.py", "--part", "dev", "--only", "retrieval"]])
def test_a_benchmark_runs_to_its_end(argv, tmp_path):
    proc = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GA_HOME": str(tmp_path / "ga")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "FAIL" not in proc.stdout, proc.stdout[-2000:]


def test_every_benchmark_script_imports_what_it_measures():
    """A module moved or renamed breaks the scripts no test runs: each is imported (its main() not called)."""
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module('bench.perf.' + name)"
    proc = subprocess.run([sys.executable, "-c", code, *SCRIPTS], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
