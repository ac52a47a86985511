"""HOME in the sandbox, with the real bubblewrap: start-up files stay read-only and histories hidden whatever the
workspace, a PATH entry shows itself and not a whole folder of HOME, and a program's own words about the sandbox get
nothing run outside it. HOMEs are made under /var/tmp (the sandbox's /tmp is private)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from tests.tools.code_runs import run
from tools.guard import sandbox_probe

needs_bwrap = pytest.mark.skipif(bool(sandbox_probe.problem()), reason="bubblewrap missing or not permitted here")


@pytest.fixture
def home(monkeypatch):
    folder = Path(tempfile.mkdtemp(prefix="ga-home-test-", dir="/var/tmp"))
    monkeypatch.setenv("HOME", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _fill(home: Path) -> None:
    files = {".bashrc": "# BASHRC\n", ".profile": "PROFILE-READABLE\n", ".bash_history": "mysql -pHISTORY-CANARY\n",
             ".config/rclone/rclone.conf": "pass = RCLONE-CANARY\n", ".config/autostart/keep.desktop": "[Desktop]\n",
             ".local/bin/keep": "#!/bin/sh\n", "dotfiles/vimrc": "set nu\n", "project/notes.txt": "mine\n"}
    for name, text in files.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    (home / ".vimrc").symlink_to("dotfiles/vimrc")
    (home / ".home").symlink_to(home)  # a link to HOME itself: HOME stays writable


@needs_bwrap
def test_start_up_files_stay_as_they_were_and_histories_hidden_when_the_workspace_is_home(make_ctx, home):
    _fill(home)
    script = ("echo 'touch PWNED' >> .bashrc; echo 'touch PWNED' > .bash_profile; echo x > .config/autostart/x.desktop;"
              " echo x > .local/bin/git; rm -f .vimrc; echo 'touch PWNED' > .vimrc; echo '!touch PWNED' >> "
              "dotfiles/vimrc; mkdir -p bin && echo x > bin/ls; cat .profile .bash_history .config/rclone/rclone.conf; "
              "echo new > made.txt; echo more >> project/notes.txt")
    result = run(make_ctx(sandbox=True, workdir=home), script, type="bash")
    assert "PROFILE-READABLE" in result.content and "CANARY" not in result.content, result.content
    assert (home / ".bashrc").read_text() == "# BASHRC\n" and not (home / ".bash_profile").exists()
    assert (home / ".bash_profile.disabled-by-ga").exists() and ".bash_profile" in result.content
    assert os.listdir(home / ".config/autostart") == ["keep.desktop"] and not (home / ".local/bin/git").exists()
    assert os.readlink(home / ".vimrc") == "dotfiles/vimrc" and (home / "dotfiles/vimrc").read_text() == "set nu\n"
    assert not (home / "bin").exists()
    assert (home / "made.txt").read_text() == "new\n" and (home / "project/notes.txt").read_text() == "mine\nmore\n"


@needs_bwrap
def test_a_folder_named_inside_a_dot_folder_stays_writable(make_ctx, home):
    _fill(home)
    cache = home / ".cache/pip"
    cache.mkdir(parents=True)
    script = "echo x > .cache/pip/wheel && echo x > .cache/other; echo x > .config/new.conf"
    result = run(make_ctx(sandbox=True, workdir=home, allow_paths=[cache]), script, type="bash")
    assert (cache / "wheel").read_text() == "x\n", result.content
    assert not (home / ".cache/other").exists() and not (home / ".config/new.conf").exists()


@needs_bwrap
def test_a_path_entry_under_dot_config_shows_itself_and_not_the_whole_folder(make_ctx, home, monkeypatch):
    _fill(home)
    tool = home / ".config/composer/vendor/bin/mytool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho TOOL-RAN\n")
    tool.chmod(0o755)
    (home / ".config/chromium/Default").mkdir(parents=True)
    (home / ".config/chromium/Default/Cookies").write_text("COOKIE-CANARY\n")
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ['PATH']}")
    script = "mytool; ls -A ~/.config; cat ~/.config/rclone/rclone.conf ~/.config/chromium/Default/Cookies"
    result = run(make_ctx(sandbox=True), script, type="bash")
    assert "TOOL-RAN" in result.content and "CANARY" not in result.content, result.content
    assert "autostart" not in result.content and "composer" in result.content


@needs_bwrap
def test_a_read_only_file_system_the_program_only_printed_gets_nothing_run_outside(make_ctx, workspace, home):
    marker = home / "ESCAPED"  # not visible inside: only a run outside the sandbox could make it
    script = f"touch {marker} 2>/dev/null; echo '{workspace}/data.txt: Read-only file system' >&2; exit 1"
    ctx = make_ctx(sandbox=True, interactive=True, answers=[("approve", "")])
    result = run(ctx, script, type="bash")
    assert ctx.ui.asked == [] and not marker.exists() and "sandbox_blocked" not in result.details


@needs_bwrap
def test_the_question_to_run_outside_shows_the_scripts_this_run_wrote(make_ctx, workspace, home):
    data = home / "data.txt"  # a file of the host the sandbox does not show
    data.write_text("HOST-DATA\n")
    (workspace / "old.sh").write_text("echo OLD-SCRIPT\n")
    ctx = make_ctx(sandbox=True, interactive=True, answers=[("approve", "")])
    time.sleep(0.01)
    (ctx.run_dir / "state.json").write_text(json.dumps({"created": time.time()}))
    time.sleep(0.01)
    (workspace / "build.sh").write_text(f"cat {data}  # NEW-SCRIPT\n")
    result = run(ctx, "bash old.sh; bash build.sh", type="bash")
    title, shown = ctx.ui.asked[0][1], ctx.ui.asked[0][2]
    assert "HOST-DATA" in result.content and "going by the program's output" in title
    assert "NEW-SCRIPT" in shown and "OLD-SCRIPT" not in shown and "1 file(s) written during this run" in title


@needs_bwrap
def test_a_start_up_file_refused_says_why_and_what_to_do(make_ctx, home):
    _fill(home)
    result = run(make_ctx(sandbox=True, workdir=home), "echo 'alias ll=ls' >> ~/.bashrc", type="bash")
    assert "Read-only file system" in result.content and "HOME's dotfiles, dot-folders and ~/bin are read-only" in \
        result.content and "no human is at a terminal" in result.content, result.content
