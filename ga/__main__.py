"""python -m ga: the same as the `ga` command and `python run.py`."""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # `-m` puts the working folder first on sys.path, where a project's own tools/, memory/ or bench/ package would
    # shadow ga's; it stays only when it is the folder ga itself was found in (a checkout).
    if sys.path and Path(sys.path[0] or ".").resolve() != Path(__file__).resolve().parents[1]:
        del sys.path[0]
    from ga.cli.main import main

    sys.exit(main())
