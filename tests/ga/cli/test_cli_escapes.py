"""Text a model, a program or a skill wrote is shown on the terminal, never obeyed: `runs`, `runs show`, `tail` and
`memory list/show/search` print no escape sequence (OSC 52 writes the clipboard, CSI 2J clears the screen), through
the real run.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.ga.cli.test_cli import RUN_PY, ga, ga_env, only_run, wait_for
from tests.scripted import ScriptedServer

HOSTILE = "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[H\x9b31m\u202e"
"""OSC 52 (set the clipboard), clear the screen, home the cursor, an 8-bit CSI, a bidi override."""


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def obeyable(text: str) -> list[str]:
    return [c for c in ("\x1b", "\x9b", "\x07", "\u202e") if c in text]


def test_runs_show_and_the_listing_print_no_escape_sequences(home, workspace):
    with ScriptedServer([{"content": f"the answer {HOSTILE} end"}]) as server:
        assert ga([f"the task {HOSTILE} end", "--no-sandbox"], server, home, workspace).returncode == 0
    run_id = only_run(home).name
    for args in (["runs", "show", run_id], ["runs", "show", run_id, "--json"], ["runs"], ["runs", "--json"]):
        shown = ga(args, None, home, workspace)
        assert shown.returncode == 0, shown.stderr
        assert "the task" in shown.stdout and not obeyable(shown.stdout), (args, shown.stdout)
    as_json = json.loads(ga(["runs", "show", run_id, "--json"], None, home, workspace).stdout)
    assert as_json["answer"] == f"the answer {HOSTILE} end"  # the data is whole; only its display is escaped


def test_tail_prints_no_escape_sequences_from_the_trajectory_or_a_background_log(home, workspace):
    with ScriptedServer([{"content": f"said {HOSTILE}"}, {"content": "in the background"}]) as server:
        assert ga(["first", "--no-sandbox"], server, home, workspace).returncode == 0
        first = only_run(home).name
        followed = ga(["tail", first], None, home, workspace)
        assert "said" in followed.stdout and not obeyable(followed.stdout), followed.stdout
        detached = ga(["second", "--detach", "--no-sandbox"], server, home, workspace)
        run_id = detached.stdout.strip()
        folder = home / "runs" / run_id
        wait_for(lambda: json.loads((folder / "state.json").read_text())["status"] != "running")
    with open(folder / "output.log", "a") as log:  # what anything that can write the run folder may add
        log.write(f"planted {HOSTILE}\n")
    tailed = subprocess.run([sys.executable, RUN_PY, "tail", run_id], env=ga_env(None, home), cwd=workspace,
                            capture_output=True, text=True, timeout=60, check=False)
    assert "planted" in tailed.stdout and not obeyable(tailed.stdout), tailed.stdout


def test_memory_list_show_and_search_print_no_escape_sequences(home, workspace):
    folder = home / "sop" / "deploy-site"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(  # YAML's own escapes put ESC and BEL into the description
        '---\nname: deploy-site\ndescription: "Deploy the static site \\e]52;c;cm0gLXJmIH4=\\a\\e[2J with rsync"\n'
        f"---\nSteps: build, then rsync. {HOSTILE}\n")
    for args in (["list"], ["list", "--json"], ["show", "deploy-site"], ["search", "deploy the static site"],
                 ["search", "deploy the static site", "--json"]):
        shown = ga(["memory", *args], None, home, workspace, GA_LEARN="")
        assert shown.returncode == 0, shown.stderr
        assert "eploy" in shown.stdout and not obeyable(shown.stdout), (args, shown.stdout)
