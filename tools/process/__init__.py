"""Running a program for code_run: its own session, bounded time and output, tree killing (runner.py), and
the hints read from a failure's output (hints.py)."""
