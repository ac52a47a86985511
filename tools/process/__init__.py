"""Running a program for code_run: its own session, bounded time and output, tree killing (runner.py), and
the hints read from a failure's output (hints.py)."""

MAX_TIMEOUT = 600
DEFAULT_TIMEOUT = 60
"""code_run's time limits (seconds): its parameters' bounds, and its hints."""
