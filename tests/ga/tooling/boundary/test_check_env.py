"""The user's --check runs with no workspace module standing in for pytest or the standard library, still imports the
workspace's own modules, and reports the workspace files it imported; in and out of the real sandbox."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from tests.tools.code_runs import run
from tools.guard import sandbox_probe

FAKE = "import sys\nprint('FAKE: 1 passed')\nsys.exit(0)\n"
SANDBOX = [False, pytest.param(True, marks=pytest.mark.skipif(bool(sandbox_probe.problem()), reason="no bubblewrap"))]


def _check(make_ctx, boxed: bool):
    return dataclasses.replace(make_ctx(sandbox=boxed), check=True)


@pytest.mark.parametrize("boxed", SANDBOX)
def test_a_workspace_pytest_or_unittest_cannot_answer_for_the_real_one(make_ctx, workspace, boxed):
    (workspace / "pytest.py").write_text(FAKE)
    (workspace / "unittest.py").write_text(FAKE)
    (workspace / "test_app.py").write_text("import unittest\n\nclass T(unittest.TestCase):\n    def test_app(self):\n"
                                           "        self.assertEqual(1 + 1, 3)\n")
    ctx = _check(make_ctx, boxed)
    for command in (f"{sys.executable} -m pytest -q test_app.py", f"{sys.executable} -m unittest test_app",
                    f"{sys.executable} -c 'import pytest, sys; sys.exit(pytest.main([\"-q\", \"test_app.py\"]))'"):
        result = run(ctx, command, type="bash")
        assert "FAKE" not in result.content, (command, result.content)
        assert result.is_error, (command, result.content)


@pytest.mark.parametrize("boxed", SANDBOX)
def test_the_workspace_s_modules_still_import_and_what_the_check_imported_is_reported(make_ctx, workspace, boxed):
    (workspace / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (workspace / "tests").mkdir()
    (workspace / "tests/test_app.py").write_text("from app import add\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    (workspace / "notes.txt").write_text("never read\n")
    result = run(_check(make_ctx, boxed), f"{sys.executable} -m pytest -q -p no:cacheprovider tests", type="bash")
    assert not result.is_error and "1 passed" in result.content, result.content
    imported = result.details["imported"]
    assert str(workspace / "app.py") in imported and str(workspace / "tests/test_app.py") in imported
    assert str(workspace / "notes.txt") not in imported


def test_the_model_s_own_scripts_still_find_the_workspace_first(make_ctx, workspace):
    (workspace / "calendar.py").write_text("WHO = 'workspace'\n")  # a task's module named like the stdlib's
    result = run(make_ctx(), "import calendar; print(getattr(calendar, 'WHO', 'stdlib'))")
    assert "workspace" in result.content and "imported" not in result.details
