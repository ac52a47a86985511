"""ga bench ...: the benchmark harness (bench/harness/), which runs from a checkout of ga: it is not in the installed
package, and neither is the scripted model its `ga:taught` arm and `--upstream scripted` drive ga with (tests/)."""

from __future__ import annotations

import importlib
import sys

from ga.invocation import RUN_PY


def main(argv: list[str]) -> int:
    checkout = RUN_PY.parent
    if not (checkout / "bench" / "harness" / "cli.py").is_file():
        print("ga: `ga bench` runs from a checkout of ga's source (bench/ is not installed): in a clone of it, "
              f"`{_pip()} install -e . -r requirements-bench.txt`, then `ga bench ...` (docs/bench.md)",
              file=sys.stderr)
        return 2
    if str(checkout) not in sys.path:  # an editable install maps ga's own packages only, not bench/ or tests/
        sys.path.insert(0, str(checkout))
    # by name, as main.py's COMMANDS are: the harness is the checkout's, beside ga, not a room ga builds on
    return importlib.import_module("bench.harness.cli").main(argv)


def _pip() -> str:
    """The pip of the Python ga runs on (its virtualenv's): the one a bare `pip` may not be."""
    return f"{sys.executable} -m pip"
