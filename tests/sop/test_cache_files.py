"""GA_HOME/cache holds what ga can rebuild (the SOPs' tokens); what is planted there in place of a cache file (a
FIFO, a link, a device) is no cache: the run goes on, never waits on it. Through the real run.py."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.ga.cli.test_cli import RUN_PY, ga_env
from tests.scripted import ScriptedServer


def test_a_fifo_in_the_cache_does_not_hang_a_run(home, workspace):
    skill = home / "sop" / "deploy-site"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy-site\ndescription: Deploy the static site with rsync to the "
                                    "web server.\n---\nBuild, then rsync the public folder.\n")
    cache = home / "cache"
    cache.mkdir()
    os.mkfifo(cache / "sop-tokens.json")  # nobody ever writes into it: opening it for reading waits forever
    with ScriptedServer([{"content": "deployed"}]) as server:
        proc = subprocess.run([sys.executable, RUN_PY, "deploy the static site with rsync", "--no-sandbox"],
                              cwd=workspace, env=ga_env(server, home), capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, check=False)
        listed = "deploy-site" in str(server.requests[0]["messages"]) if server.requests else False
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert listed  # the SOP is still found: its tokens are simply computed again
    assert (cache / "sop-tokens.json").is_file()  # a real cache file took its place


def test_fifos_in_place_of_the_memory_files_do_not_hang_a_run(home, workspace):
    memory = home / "memory"
    memory.mkdir(parents=True)
    for name in ("facts.md", "index.md"):  # read at every run's start and end
        os.mkfifo(memory / name)
    with ScriptedServer([{"content": "deployed"}]) as server:
        proc = subprocess.run([sys.executable, RUN_PY, "deploy the static site with rsync", "--no-sandbox"],
                              cwd=workspace, env=ga_env(server, home), capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "deployed" in proc.stdout
