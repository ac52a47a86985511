#!/usr/bin/env python3
"""ga command line: python run.py "task" [options]. See python run.py --help."""

import os
import sys

# The checkout is the workspace of many runs: it goes after the standard library and site-packages, so a json.py
# or rich.py a task leaves at its top is never imported by ga in place of the real one.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE] + [_HERE]


def _without_dependencies(error: ModuleNotFoundError) -> int:
    """A Python without ga's dependencies (`python3 run.py` outside the venv): how to run it, not a traceback."""
    venv = os.path.join(_HERE, ".venv", "bin", "python")
    fix = (f"run it with the venv's Python: {os.path.relpath(venv)} {sys.argv[0]} ..." if os.path.exists(venv) else
           f"install them first: python3 -m venv .venv && .venv/bin/pip install -e {os.path.relpath(_HERE)}")
    print(f"ga: this Python ({sys.executable}) lacks a module ga needs ({error.name!r}); "
          f"{fix}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        from ga.cli.main import main

        sys.exit(main())
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] in ("ga", "tools", "memory", "sop", "bench"):
            raise  # ga's own code is broken: that needs the traceback
        sys.exit(_without_dependencies(e))
