"""ga started by ga (a detached run, a scheduled one) from a workspace: nothing of that folder is imported in place of
the standard library's (a typing.py or json.py the run left there would run on the host)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ga import invocation
from ga.local import provision

SHADOWS = ("typing", "json", "pathlib", "argparse", "tomllib", "shlex", "subprocess", "zipfile", "email")


def _plant(folder, marker) -> None:
    (folder / "ga").mkdir()  # a project's own ga package, or one the run wrote
    for name in [*SHADOWS, "ga/__init__", "ga/__main__"]:
        (folder / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write('{name}\\n')\n")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python's safe path (-P) came in 3.11")
@pytest.mark.parametrize("checkout", [True, False])
def test_a_ga_started_by_ga_imports_nothing_from_its_working_folder(tmp_path, monkeypatch, checkout):
    workspace, marker = tmp_path / "ws", tmp_path / "PWNED"
    workspace.mkdir()
    _plant(workspace, marker)
    if not checkout:  # an installed ga: `python -m ga`
        monkeypatch.setattr(invocation, "RUN_PY", tmp_path / "no-run.py")
    done = subprocess.run([*invocation.ga_command(), "--help"], cwd=workspace, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), marker.read_text()


def test_pip_run_by_local_provisioning_imports_nothing_from_the_workspace(tmp_path, monkeypatch):
    workspace, marker = tmp_path / "ws", tmp_path / "PWNED"
    workspace.mkdir()
    _plant(workspace, marker)
    monkeypatch.chdir(workspace)
    cache = provision.Cache(root=tmp_path / "cache", pip_args=["--no-index", "--find-links", str(tmp_path)])
    cache.root.mkdir()
    with pytest.raises(provision.ProvisionError):
        provision._pip_download(cache, "no-such-package-here==1.0")
    assert not marker.exists(), marker.read_text()
