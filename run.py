#!/usr/bin/env python3
"""ga command line: python run.py "task" [options]. See python run.py --help."""

import sys

from ga.cli import main

if __name__ == "__main__":
    sys.exit(main())
