"""The command policy as code_run applies it: catastrophic refused, dangerous asked or decided by policy.json."""

from __future__ import annotations

import json

from tests.tools.code_runs import dispatch


def test_catastrophic_commands_are_never_executed(make_ctx, workspace):
    for script in ["touch ran; dd if=/dev/zero of=/dev/sdz9 count=1", "touch ran; echo x > /dev/nvme9n9",
                   "touch ran; eval \"$(echo bWtmcy5leHQ0IC9kZXYvc2R6OQ== | base64 -d)\""]:
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
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text(json.dumps({"allow_rules": ["git-reset-hard"]}))
    dispatch(ctx, script=script, type="bash")
    assert (workspace / "ran").exists()
    policy.write_text(json.dumps({"allow_commands": ["touch other; git push --force origin feature/*"]}))
    dispatch(ctx, script="touch other; git push --force origin feature/x", type="bash")
    assert (workspace / "other").exists()
    assert dispatch(ctx, script="touch third; git push --force origin main", type="bash").is_error
    policy.write_text("{not json")
    assert "cannot be read" in dispatch(ctx, script=script, type="bash").content


