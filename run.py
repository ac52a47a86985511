#!/usr/bin/env python3
"""ga command line: python run.py "task" [options]. See python run.py --help."""

import os
import sys

# The checkout is the workspace of many runs: it goes after the standard library and site-packages, so a json.py
# or rich.py a task leaves at its top is never imported by ga in place of the real one.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE] + [_HERE]

from ga.cli.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
