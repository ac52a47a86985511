"""Protected paths for the file tools: .git and ga's configuration need a human's approval."""

from __future__ import annotations

import json
from pathlib import Path

from ga.protocols import ToolCall
from ga.tooling.boundary.protected import why_protected
from ga.tooling.dispatch import Dispatcher
from tools.file_patch import SPEC as PATCH
from tools.file_write import SPEC as WRITE


def write(ctx, path: str, content: str = "x\n"):
    call = ToolCall(id="call_1", name="file_write", arguments=json.dumps({"path": path, "content": content}))
    return Dispatcher([WRITE, PATCH]).dispatch([call], ctx)[0]


def test_what_is_protected():
    home = Path("/home/a/.ga")
    assert why_protected(Path("/w/.git/hooks/pre-commit"), home) and why_protected(Path("/w/sub/.git"), home)
    for name in ("policy.json", "settings.toml", "config.json", "schedule/nightly.toml", "memory/rules.md"):
        assert why_protected(home / name, home), name
    for name in ("memory/facts.md", "sop/deploy/SKILL.md", "runs/x/state.json"):
        assert not why_protected(home / name, home), name
    assert not why_protected(Path("/w/.gitignore"), home) and not why_protected(Path("/w/src/git.py"), home)


def test_git_metadata_anywhere_ga_s_own_code_and_home_git_config_are_protected(tmp_path):
    ga_home, home = tmp_path / ".ga", tmp_path / "home"
    crafted = tmp_path / "w/crafted"  # a repository by its shape, whatever its name
    for folder in ("objects", "refs"):
        (crafted / folder).mkdir(parents=True)
    (crafted / "HEAD").write_text("ref: refs/heads/main\n")
    for path in (tmp_path / "w/vendor/lib/.git/config", tmp_path / "w/.gitmodules", crafted / "config",
                 crafted / "hooks/pre-commit", home / ".gitconfig", home / ".config/git/config"):
        assert why_protected(path, ga_home, home), path
    own = Path(why_protected.__code__.co_filename).resolve().parents[3]  # ga's checkout (or site-packages)
    for path in (own / "ga/__init__.py", own / "tools/code_run.py", own / "run.py"):
        assert "ga's own code" in why_protected(path, ga_home, home), path
    for path in (tmp_path / "w/src/config", tmp_path / "w/HEAD.md", home / ".bashrc"):
        assert not why_protected(path, ga_home, home), path


def test_unattended_writes_to_git_are_refused(make_ctx, workspace):
    (workspace / ".git/hooks").mkdir(parents=True)
    result = write(make_ctx(autonomous=True), ".git/hooks/pre-commit", "touch PWNED\n")
    assert result.is_error and "rule: protected-path" in result.content and "no human" in result.content
    assert not (workspace / ".git/hooks/pre-commit").exists()
    assert not write(make_ctx(autonomous=True), ".gitignore").is_error  # only .git itself


def test_on_a_terminal_the_human_decides(make_ctx, workspace):
    (workspace / ".git").mkdir()
    ctx = make_ctx(interactive=True, answers=[("reject", "")])
    result = write(ctx, ".git/config", "[core]\n\tfsmonitor = touch PWNED\n")
    assert result.is_error and "did not approve" in result.content and not (workspace / ".git/config").exists()
    assert "protected-path" in ctx.ui.asked[0][1]
    ctx = make_ctx(interactive=True, answers=[("approve", "")])
    assert not write(ctx, ".git/config", "[user]\n\tname = me\n").is_error
    assert (workspace / ".git/config").read_text() == "[user]\n\tname = me\n"


def test_confirm_mode_counts_as_the_approval(make_ctx, workspace):
    (workspace / ".git").mkdir()
    ctx = make_ctx(mode="confirm", interactive=True, answers=[("approve", "")])
    assert not write(ctx, ".git/description", "repo\n").is_error
    assert len(ctx.ui.asked) == 1  # asked once, by confirm mode


def test_ga_home_reached_through_an_allowed_path_stays_out_of_reach(make_ctx, workspace):
    ctx = make_ctx(autonomous=True)
    ctx.settings.allow_paths.append(ctx.settings.home)  # the command line refuses it; a run's saved state may hold it
    result = write(ctx, str(ctx.settings.home / "policy.json"), '{"allow_commands": ["*"]}')
    assert result.is_error and "rule: hidden-path" in result.content
    assert not (ctx.settings.home / "policy.json").exists()
    result = write(ctx, str(ctx.settings.home / "memory" / "facts.md"), "a fact\n")
    assert result.is_error and "rule: memory-path" in result.content and "start_long_term_update" in result.content
    ctx.state["memory_open"] = True
    assert not write(ctx, str(ctx.settings.home / "memory" / "facts.md"), "a fact\n").is_error
