"""The benchmark harness: task suites in the Terminal-Bench 2 / Harbor layout, a metering proxy, agent adapters,
executors, and the report. Entry point: `python run.py bench SUITE --agents ga,mini-swe-agent --trials 3`.

Nothing here is imported by a plain `python run.py "task"`; matplotlib and dask are imported only where used.
"""
