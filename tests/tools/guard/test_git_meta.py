"""Disarming git metadata a sandboxed command wrote: real repositories, read back by the real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tools.guard.git_meta import GitGuard, find


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def test_what_git_would_run_goes_what_a_repository_needs_stays(tmp_path):
    work = tmp_path / "ws"
    git("init", "-q", str(work / "repo"), cwd=tmp_path)
    repo = work / "repo"
    for key, value in (("user.name", "Dev"), ("remote.origin.url", "https://example.invalid/x.git"),
                       ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"), ("core.worktree", "/etc"),
                       ("core.pager", "touch PWNED"), ("include.path", "../evil.cfg"),
                       ("remote.bad.url", "ext::sh -c touch% PWNED"), ("filter.x.smudge", "touch PWNED")):
        git("config", key, value, cwd=repo)
    (repo / ".git/hooks/post-checkout").write_text("#!/bin/sh\ntouch PWNED\n")
    git("init", "-q", "--bare", str(work / "modules/lib"), cwd=tmp_path)  # as a submodule's own folder
    git("config", "--file", str(work / "modules/lib/config"), "core.worktree", "../../repo", cwd=tmp_path)
    guard = GitGuard(home=tmp_path / "home")
    changed = guard.disarm([work], kept=[])
    listed = git("config", "--file", str(repo / ".git/config"), "--list", cwd=tmp_path)
    assert "user.name=Dev" in listed and "remote.origin.url=https://example.invalid/x.git" in listed
    assert "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*" in listed
    for gone in ("core.pager", "include.path", "remote.bad.url", "filter.x.smudge", "core.worktree"):
        assert gone not in listed, gone
    assert not (repo / ".git/hooks").exists() and (repo / ".git/hooks.disabled-by-ga/post-checkout").exists()
    assert "core.pager" in "".join(changed) and (repo / ".git/config.disabled-by-ga").exists()
    assert git("status", "--short", cwd=repo) == ""  # still a working repository
    assert "worktree = ../../repo" in (work / "modules/lib/config").read_text()  # a worktree inside stays
    assert guard.disarm([work], kept=[]) == []  # nothing left to disarm: the second pass changes nothing


def test_a_submodule_worktree_inside_stays_and_the_user_s_own_repositories_are_never_touched(tmp_path):
    work = tmp_path / "ws"
    git("init", "-q", str(work), cwd=tmp_path)
    git("config", "core.fsmonitor", "the-user-s-own-choice", cwd=work)  # existed before: mounted read-only
    module = work / ".git/modules/lib"
    git("init", "-q", "--bare", str(module), cwd=tmp_path)
    git("config", "--file", str(module / "config"), "core.worktree", "../../../lib", cwd=tmp_path)
    outside = tmp_path / "elsewhere"
    git("init", "-q", str(outside), cwd=tmp_path)
    git("config", "core.pager", "less", cwd=outside)
    (work / "sub").mkdir()
    (work / "sub/.git").write_text(f"gitdir: {outside / '.git'}\n")  # a .git file pointing out of the folders
    kept = [work / ".git"]
    assert GitGuard(home=tmp_path / "home").disarm([work], kept=kept) == []
    assert "fsmonitor" in (work / ".git/config").read_text() and "pager" in (outside / ".git/config").read_text()
    assert work / ".git" in find([work], tmp_path / "home") and work / "sub/.git" in find([work], tmp_path / "home")
    (work / "dangling").mkdir()
    (work / "dangling/.git").symlink_to("/nonexistent/repo")  # a link is never mounted over: bwrap would follow it
    assert work / "dangling/.git" not in GitGuard(home=tmp_path / "home").read_only([work])
