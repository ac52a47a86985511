"""The command policy as code_run applies it: catastrophic refused, dangerous asked or decided by policy.json."""

from __future__ import annotations

import json

from tests.tools.code_runs import dispatch


def test_catastrophic_commands_are_never_executed(make_ctx, workspace):
    for script in ["touch ran; dd if=/dev/zero of=/dev/sdz9 count=1", "touch ran; echo x > /dev/nvme9n9",
                   "touch ran; \\mkfs.ext4 /dev/sdz9"]:
        for ctx in (make_ctx(interactive=True, answers=[]), make_ctx(autonomous=True)):
            result = dispatch(ctx, script=script, type="bash")
            assert result.is_error and "catastrophic" in result.content and "rule: " in result.content
    assert not (workspace / "ran").exists()


def test_dangerous_command_on_a_terminal_approve_reject_edit(make_ctx, workspace):
    script = "touch ran; git reset --hard"
    ctx = make_ctx(interactive=True, answers=[("reject", "")])
    result = dispatch(ctx, script=script, type="bash")
    assert "rejected" in result.content and "git-reset-hard" in result.content and not (workspace / "ran").exists()
    assert "git-reset-hard" in ctx.ui.asked[0][1]
    ctx = make_ctx(interactive=True, answers=[("reject", "I have uncommitted work")])
    assert "Their reason: I have uncommitted work" in dispatch(ctx, script=script, type="bash").content
    ctx = make_ctx(interactive=True, answers=[("edit", "touch edited")])
    assert not dispatch(ctx, script=script, type="bash").is_error and (workspace / "edited").exists()
    ctx = make_ctx(interactive=True, answers=[("edit", "rm -rf ~")])  # an edit is checked again
    assert "rule: rm-home" in dispatch(ctx, script=script, type="bash").content
    ctx = make_ctx(interactive=True, answers=[("approve", "")])
    dispatch(ctx, script=script, type="bash")
    assert (workspace / "ran").exists()


def test_autonomous_denies_dangerous_unless_the_policy_file_allows(make_ctx, workspace):
    ctx = make_ctx(autonomous=True)
    script = "touch ran; git reset --hard"
    result = dispatch(ctx, script=script, type="bash")
    assert result.is_error and "rule: git-reset-hard" in result.content and "policy.json" in result.content
    assert not (workspace / "ran").exists()
    policy = ctx.settings.home / "policy.json"
    policy.write_text(json.dumps({"allow_rules": ["git-reset-hard"]}))
    result = dispatch(ctx, script=script, type="bash")  # changed while the run goes on: not trusted yet
    assert result.is_error and "changed while this run was going" in result.content
    dispatch(make_ctx(autonomous=True), script=script, type="bash")  # the next run reads it
    assert (workspace / "ran").exists()
    policy.write_text(json.dumps({"allow_commands": ["git push --force origin feature/*"]}))
    dispatch(make_ctx(autonomous=True), script="touch other; git push --force origin feature/x", type="bash")
    assert (workspace / "other").exists()
    result = dispatch(make_ctx(autonomous=True), script="touch third; git push --force origin main", type="bash")
    assert result.is_error and not (workspace / "third").exists()
    policy.write_text("{not json")
    assert "cannot be read" in dispatch(make_ctx(autonomous=True), script=script, type="bash").content


def test_allow_patterns_match_each_command_never_the_whole_script(make_ctx, workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home-dir"))  # a throw-away HOME (under /tmp: still judged as HOME)
    docs = tmp_path / "home-dir" / "docs"
    docs.mkdir(parents=True)
    (docs / "keep.txt").write_text("keep\n")
    ctx = make_ctx(autonomous=True)
    (ctx.settings.home / "policy.json").write_text(json.dumps({"allow_commands": ["git reset --hard*"]}))
    result = dispatch(ctx, script="git reset --hard\nrm -rf ~/docs", type="bash")
    assert result.is_error and "delete-outside-workspace" in result.content and (docs / "keep.txt").exists()
    assert not dispatch(ctx, script="git reset --hard HEAD", type="bash").details.get("stage")


def test_writes_to_the_policy_file_need_approval_from_any_route(make_ctx, workspace):
    ctx = make_ctx(autonomous=True)
    policy = ctx.settings.home / "policy.json"
    scripts = [("python", f"open({str(policy)!r}, 'w').write('{{\"allow_commands\": [\"*\"]}}')"),
               ("python", f"import pathlib\npathlib.Path({str(policy)!r}).write_text('x')"),
               ("bash", f"echo '{{\"allow_commands\": [\"*\"]}}' > {policy}"),
               ("bash", f"cp /dev/null {policy}"), ("bash", f"sed -i s/a/b/ {policy}"),
               ("bash", f"tee {policy} < /dev/null")]
    for kind, script in scripts:
        result = dispatch(ctx, script=script, type=kind)
        assert result.is_error and "rule: protected-path" in result.content, (script, result.content)
    assert not policy.exists()
