"""Start-up stays light, and the SDK's import overlaps it. A task that calls no tool imports neither jsonschema, nor
the embedded model's machinery, nor the Markdown renderer when stdout is not a terminal, nor what retrieval and the
command policy need (numpy, scipy, bm25s, tree-sitter) when no SOP is looked for and no command checked; `--help`
imports none of the run's modules; the SDK's import starts on its thread before the flags are read (ga/cli/warm.py),
and never for a command that starts no run. Import lists, not timings (bench/perf/startup_bench.py measures those)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ga.cli import compose
from ga.local import endpoint
from tests.ga.cli.test_cli import RUN_PY, ga_env
from tests.scripted import ScriptedServer


def imported(args: list[str], server, home, cwd, *, at_sdk_start: bool = False) -> set[str]:
    """The modules `python run.py ARGS` has imported when it exits (`at_sdk_start`: when the thread that imports
    the SDK started, ga/cli/warm.py; an empty set when it never did)."""
    listing = home.parent / "modules.txt"
    which = "seen['start']" if at_sdk_start else "sys.modules"
    program = ("import atexit, runpy, sys, threading\n"
               "seen = {'start': set()}\n"
               "original = threading.Thread.start\n"
               "def start(self):\n"
               "    if self.name == 'ga-import-sdk': seen['start'] = set(sys.modules)\n"
               "    original(self)\n"
               "threading.Thread.start = start\n"
               f"atexit.register(lambda: open({str(listing)!r}, 'w').write('\\n'.join({which})))\n"
               f"sys.argv, sys.path[0] = [{RUN_PY!r}, *sys.argv[1:]], {str(Path(RUN_PY).parent)!r}\n"
               f"runpy.run_path({RUN_PY!r}, run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-c", program, *args], cwd=cwd, env=ga_env(server, home),
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return set(filter(None, listing.read_text().splitlines()))


def test_a_task_without_tool_calls_leaves_the_heavy_optional_modules_alone(tmp_path, workspace):
    with ScriptedServer([{"content": "Hello! How can I help?"}]) as server:
        modules = imported(["Hello"], server, tmp_path / "home", workspace)
    assert "ga.model.client" in modules and "tools.file_read" in modules  # the run itself did happen
    assert not {m for m in modules if m.split(".")[0] in ("jsonschema", "numpy", "scipy", "bm25s", "bracex")
                or m.startswith(("ga.local", "tree_sitter")) or m in ("rich.markdown", "markdown_it")}
    # code_run's machinery (the policy, the sandbox's wrapping, the runner) and the SDK's typed model list neither
    assert not {m for m in modules if m in ("tools.process.execute", "tools.process.runner", "tools.guard.approval",
                                            "openai.resources.models")}


def test_help_imports_no_module_of_a_run(tmp_path, workspace):
    modules = imported(["--help"], None, tmp_path / "home", workspace)
    assert not {m for m in modules if m.split(".")[0] in ("openai", "tools", "memory", "sop", "rich", "jsonschema")
                or m.startswith(("ga.model", "ga.runs", "ga.agent"))}


def test_the_embedded_models_name_is_the_same_in_both_places():
    assert compose.LOCAL == endpoint.LOCAL == "local"


def test_the_sdk_import_starts_before_the_run_is_set_up(tmp_path, workspace):
    with ScriptedServer([{"content": "Hello!"}]) as server:
        at_start = imported(["Hello"], server, tmp_path / "home", workspace, at_sdk_start=True)
    assert "ga.cli.main" in at_start and "openai" not in at_start
    assert not {m for m in at_start if m.startswith(("ga.cli.compose", "ga.runs", "ga.config", "tools", "memory",
                                                      "sop", "rich"))}  # flags, config, run folder: all after it


@pytest.mark.parametrize("args", [["runs"], ["config"], ["version"], ["help"], ["--version"], ["completion"]])
def test_commands_that_start_no_run_never_import_the_sdk(tmp_path, workspace, args):
    assert not imported(args, None, tmp_path / "home", workspace, at_sdk_start=True)
    assert "openai" not in imported(args, None, tmp_path / "home", workspace)
