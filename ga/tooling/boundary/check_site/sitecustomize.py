"""Loaded by every Python process of ga's --check (ga/tooling/boundary/check_env.py puts this folder on PYTHONPATH).

The workspace goes last on sys.path: its own modules still import, but none takes the place of the standard
library's or an installed package's (a pytest.py or unittest.py written by the run cannot answer for the real one).
Each file of the workspace Python opens or imports is noted in the report file, for the check's result. Then the
sitecustomize this one stands in front of, if any, runs as it would have."""

import os
import sys


def _chain(here: str) -> None:
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [p for p in sys.path if p != here])
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


def _source(path: str) -> str:
    """A cached module's source: x/__pycache__/m.cpython-311.pyc -> x/m.py."""
    folder, name = os.path.split(path)
    if os.path.basename(folder) == "__pycache__" and name.endswith(".pyc"):
        return os.path.join(os.path.dirname(folder), name.split(".", 1)[0] + ".py")
    return path


def _watch(workspace: str, report: str) -> None:
    prefix, seen = workspace.rstrip("/") + "/", set()

    def hook(event: str, args: tuple) -> None:
        if event != "open" or not args or not isinstance(args[0], str | bytes):
            return
        path = _source(os.path.abspath(os.fsdecode(args[0])))
        if path in seen or not path.startswith(prefix):
            return
        seen.add(path)
        try:
            with open(report, "a", encoding="utf-8", errors="surrogateescape") as f:
                f.write(path + "\n")
        except OSError:
            pass

    sys.addaudithook(hook)


def _setup() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    last = [p for p in os.environ.get("GA_CHECK_LAST", "").split(os.pathsep) if p]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    _chain(here)
    sys.path += [p for p in last if p not in sys.path]
    workspace, report = os.environ.get("GA_CHECK_WORKSPACE", ""), os.environ.get("GA_CHECK_REPORT", "")
    if workspace and report:
        _watch(workspace, report)


_setup()
