"""`pip install .` makes a `ga` command that works from any folder: the wheel holds every module and data file ga
reads, the installed ga runs a task, a background run and its hints without a checkout, and `python -m ga` is the
same program. The wheel is built offline from the checkout's files (the build backend is in requirements-dev.txt)
and installed into a virtualenv that borrows this environment's dependencies."""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.scripted import ScriptedServer, tool_call

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("ga", "tools", "memory", "sop")
"""What the wheel must hold, all of it: the packages ga runs from and the data beside their modules."""
NOT_SHIPPED = ("tests", "bench", "docs", ".ci")
"""The benchmark (`ga bench`) and the scripted model it drives ga with run from a checkout."""


def source_files() -> list[str]:
    """The checkout's files as a fresh clone has them: tracked, or new and not ignored."""
    try:
        listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
                                capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git cannot list the checkout's files")
    return [f for f in listed if (ROOT / f).is_file()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    try:
        from setuptools import __version__ as setuptools_version
    except ImportError:
        setuptools_version = "0"
    if tuple(int(p) for p in re.findall(r"\d+", setuptools_version)[:2]) < (70, 1):
        pytest.fail(f"setuptools {setuptools_version} cannot build the wheel: pip install -r requirements-dev.txt")
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in source_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "--disable-pip-version-check", "-w", str(out), str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("ga-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A virtualenv outside the checkout with the wheel installed (its dependencies seen from this environment)."""
    folder = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    # this environment's packages, whether it is a virtualenv itself (CI's .venv) or a system or pyenv Python
    # (--system-site-packages would see the base interpreter's, not a virtualenv's)
    (inner,) = (folder / "lib").glob("python*/site-packages")
    (inner / "borrowed.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(folder / "bin" / "python"), "install", "-q",
                           "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder


@pytest.fixture(scope="module")
def editable(tmp_path_factory) -> tuple[Path, Path]:
    """(a copy of the checkout, a virtualenv with it installed editable: `pip install -e .`, as the README's test
    command does), the installed packages mapped into the copy and nothing else of it on sys.path."""
    source, folder = tmp_path_factory.mktemp("checkout"), tmp_path_factory.mktemp("editable")
    for name in source_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    (inner,) = (folder / "lib").glob("python*/site-packages")
    (inner / "borrowed.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(folder / "bin" / "python"), "install", "-q",
                           "--no-deps", "--no-index", "--no-build-isolation", "--disable-pip-version-check", "-e",
                           str(source)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return source, folder


def installed_ga(venv: Path, args: list[str], cwd: Path, home: Path, server: ScriptedServer | None = None,
                 program: list[str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`ga ARGS` as a user of the installed package types it: the venv's bin first on PATH, in a folder of theirs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GA_", "PYTHON"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}", HOME=str(home),
               GA_HOME=str(home / ".ga"), GA_RETRY_BASE="0.01")
    if server is not None:
        env.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="test", GA_MODEL="scripted")
    return subprocess.run([*(program or ["ga"]), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, check=False)


def test_the_wheel_holds_every_module_and_data_file_ga_reads_and_nothing_else(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {f for f in source_files() if f.startswith(SHIPPED) and "__pycache__" not in f}
    assert wanted - names == set(), "missing from the wheel"
    assert {"ga/prompts/system.md", "ga/model/models.toml", "ga/local/nocrash.patch", "memory/rules.md",
            "tools/web/page_scan.js"} <= names
    assert any(n.startswith("sop/seeds/") and n.endswith("/SKILL.md") for n in names)
    assert not [n for n in names if n.startswith(NOT_SHIPPED) or n == "run.py"]
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "ga = ga.cli.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_ga_runs_a_task_from_any_folder_and_its_hints_say_ga(venv, tmp_path):
    folder, home = tmp_path / "project", tmp_path / "home"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n")
    helped = installed_ga(venv, ["--help"], folder, home)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: ga "), helped.stdout[:300]
    assert "`ga COMMAND --help`" in helped.stdout
    steps = [{"tool_calls": [tool_call("file_read", path="notes.txt")]}, {"content": "It says hello."}]
    with ScriptedServer(steps) as server:
        done = installed_ga(venv, ["what do the notes say?", "--json"], folder, home, server)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "It says hello."
    assert (home / ".ga" / "sop" / "web-scan-refs" / "SKILL.md").is_file()  # a seed SOP, from the package
    with ScriptedServer([{"tool_calls": [tool_call("file_read", path="notes.txt")]}]) as server:
        limited = installed_ga(venv, ["read the notes", "--max-turns", "1", "--no-learn"], folder, home, server)
    assert limited.returncode == 4, limited.stderr
    assert re.search(r"with:? ga --resume \S+", limited.stderr) and "run.py" not in limited.stderr, limited.stderr


def test_installed_ga_detaches_without_a_checkout_and_the_child_speaks_as_ga(venv, tmp_path):
    folder, home = tmp_path / "project", tmp_path / "home"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n")
    with ScriptedServer([{"tool_calls": [tool_call("file_read", path="notes.txt")]}]) as server:
        started = installed_ga(venv, ["read the notes", "--detach", "--max-turns", "1", "--no-learn"], folder, home,
                               server)
        assert started.returncode == 0, started.stderr
        run_id = started.stdout.strip()
        assert f"follow it with: ga tail {run_id}" in started.stderr
        followed = installed_ga(venv, ["tail", run_id], folder, home, timeout=120)
    assert followed.returncode == 4, followed.stdout + followed.stderr
    assert re.search(rf"with:? ga --resume {run_id}", followed.stdout), followed.stdout
    assert "run.py" not in followed.stdout and "-m ga" not in followed.stdout


def test_installed_ga_says_in_one_line_that_the_bench_runs_from_a_checkout(venv, tmp_path):
    proc = installed_ga(venv, ["bench", "bench/suites", "--agents", "oracle"], tmp_path, tmp_path / "home")
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert "runs from a checkout" in line and "docs/bench.md" in line and "Traceback" not in proc.stderr
    assert f"{venv}/bin/python" in line and "-m pip install -e . -r requirements-bench.txt" in line  # the venv's pip


def test_an_editable_install_runs_the_bench_and_its_scripted_upstream_from_the_checkout(editable, tmp_path):
    source, venv = editable
    out = tmp_path / "out"
    proc = installed_ga(venv, ["bench", str(source / "bench" / "suites" / "offline" / "fix-calc-bug"), "--agents", "ga",
                               "--upstream", "scripted", "--out", str(out), "--no-report"], tmp_path,
                        tmp_path / "home", timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["success"] is True and row["requests"] > 0, row


def test_python_dash_m_ga_is_the_same_program_and_ignores_a_project_tools_package(venv, tmp_path):
    """`python -m ga` puts the working folder on sys.path first; a project with its own tools/ must not break ga."""
    folder, home = tmp_path / "project", tmp_path / "home"
    for name in ("tools", "memory", "sop", "bench"):
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text("raise ImportError('the project\\'s own package was imported')\n")
    python = str(venv / "bin" / "python")
    with ScriptedServer([{"content": "Hi."}]) as server:
        proc = installed_ga(venv, ["-m", "ga", "Hello", "--json", "--no-learn"], folder, home, server,
                            program=[python])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "Hi."
    helped = installed_ga(venv, ["-m", "ga", "--help"], folder, home, program=[python])
    assert helped.stdout.startswith("usage: python -m ga "), helped.stdout[:200]  # PATH finds that python
