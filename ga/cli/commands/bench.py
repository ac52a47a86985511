"""ga bench ...: the benchmark harness (bench/harness/), which runs from a checkout of ga (neither it nor the scripted
model in tests/ is in the installed package)."""

from __future__ import annotations

import importlib
import sys

from ga.invocation import RUN_PY


def main(argv: list[str]) -> int:
    checkout = RUN_PY.parent
    if not (checkout / "bench" / "harness" / "cli.py").is_file():
        print("ga: `ga bench` runs from a checkout of ga's source (bench/ is not installed): in a clone of it, "
              f"`{sys.executable} -m pip install -e . -r requirements-bench.txt`, then `ga bench ...` (docs/bench.md)",
              file=sys.stderr)
        return 2
    if str(checkout) not in sys.path:  # an editable install maps ga's own packages only, not bench/ or tests/
        sys.path.insert(0, str(checkout))
    return importlib.import_module("bench.harness.cli").main(argv)  # by name: ga builds on no bench module
