"""The environment of the user's --check: no workspace module may stand in for the tools that judge the work.

code_run puts the working folder first on PYTHONPATH, so the model's scripts import the workspace's modules first.
For the check that would let a pytest.py or unittest.py the run wrote answer for the real one (`verified: true`
forged). The check runs instead with Python's safe path (PYTHONSAFEPATH=1: neither the script's folder nor the
working folder goes first on sys.path), without the workspace on PYTHONPATH, and with check_site/sitecustomize.py,
which puts the workspace (and the user's PYTHONPATH entries inside it) last on sys.path and notes each workspace
file Python opens or imports, for the check's result (ga/check.py keeps those the run made or changed)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

SITE = Path(__file__).resolve().parent / "check_site"
MAX_REPORTED = 200


@dataclass(kw_only=True)
class CheckWatch:
    env: dict[str, str]
    shown: list[Path] = field(default_factory=list)
    """What the sandbox must show read-only (the sitecustomize)."""
    writable: list[Path] = field(default_factory=list)
    """What the sandbox must show writable (the report)."""
    report: Path | None = None

    def imported(self) -> list[str]:
        """The workspace files the check's Python processes opened or imported, as they noted them."""
        if self.report is None:
            return []
        try:
            lines = self.report.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []
        return list(dict.fromkeys(line for line in lines if line.startswith("/")))[:MAX_REPORTED]


def check_env(env: dict[str, str], workspace: Path, report: Path) -> dict[str, str]:
    """`env` for the check: the workspace off PYTHONPATH (put last on sys.path instead), safe path, the watch."""
    entries = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    inside = [p for p in entries if _inside(p, workspace)]
    kept = [p for p in entries if p not in inside]
    return {**env, "PYTHONPATH": os.pathsep.join([str(SITE), *kept]), "PYTHONSAFEPATH": "1",
            "GA_CHECK_LAST": os.pathsep.join([*(str(Path(p).resolve()) for p in inside), str(workspace)]),
            "GA_CHECK_WORKSPACE": str(workspace), "GA_CHECK_REPORT": str(report)}


def _inside(entry: str, workspace: Path) -> bool:
    """A PYTHONPATH entry in the workspace (a relative one is taken from the working folder, the workspace)."""
    path = Path(os.path.abspath(workspace / entry))
    return path == workspace or path.is_relative_to(workspace)


@contextmanager
def watched(check: bool, env: dict[str, str], workspace: Path) -> Iterator[CheckWatch]:
    """For the check: its environment and its report file (removed after); otherwise `env` as it is."""
    if not check:
        yield CheckWatch(env=env)
        return
    fd, name = tempfile.mkstemp(prefix="ga-check-imports-", suffix=".txt")
    os.close(fd)
    report = Path(name)
    try:
        yield CheckWatch(env=check_env(env, workspace, report), shown=[SITE], writable=[report], report=report)
    finally:
        report.unlink(missing_ok=True)
