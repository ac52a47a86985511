"""code_run's permission check: the command policy, then a human (on a terminal) or the policy file (autonomous).

GA_HOME/policy.json (deny by default), e.g. `{"allow_rules": ["git-push-force"], "allow_commands": ["git reset
--hard*"]}`: rule ids as refusals print them, and globs (fnmatch) matched against each simple command that needs
approval, never the whole script. A script runs when each of its dangerous findings is allowed; the catastrophic tier
never is. The file is a protected path; a change to it while a run goes on waits for the next run (the run keeps the
policy it read before its first script, saved with the run so a resume keeps it too)."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

from ga.errors import PermissionDenied
from ga.tooling.spec import ToolContext
from tools.guard.policy import ASK, REFUSE, Decision, scan_script, worst

POLICY_FILE = "policy.json"
MAX_EDITS = 5


def script_cwd(args: dict, ctx: ToolContext) -> Path:
    """The folder to run in: the workspace, or `cwd` confined to it."""
    if not args.get("cwd"):
        return ctx.workspace
    try:
        path = ctx.resolve(args["cwd"], write=True)
    except PermissionDenied as e:  # the fix is nearly always to drop cwd: say that first, the rule after
        raise PermissionDenied(f"cwd {args['cwd']!r} is not in the workspace: leave cwd out to run in the "
                               f"workspace {ctx.workspace}, or give a folder inside it. ({e})") from None
    if not path.is_dir():
        raise PermissionDenied(f"cwd {args['cwd']!r} is not a folder ({path}): give an existing folder "
                               "inside the workspace, or leave cwd out to run in the workspace.")
    return path


def check(args: dict, ctx: ToolContext) -> dict:
    """ToolSpec.check hook: returns the arguments to run (maybe edited by the human), or raises PermissionDenied."""
    snapshot(ctx)  # before this run's first script: none of its scripts can loosen the policy the run uses
    for _ in range(MAX_EDITS + 1):
        found = scan_script(args["script"], args.get("type", "python"), workspace=ctx.workspace,
                            home=Path.home(), cwd=script_cwd(args, ctx), ga_home=ctx.settings.home)
        decision = worst(found)
        if decision.verdict == REFUSE:
            raise PermissionDenied(
                f"Refused: {decision.reason} (rule: {decision.rule}; catastrophic, never run). "
                "Nothing was run. Target only paths inside the workspace, or ask the user to do this themselves.")
        if decision.verdict != ASK or ctx.settings.mode == "confirm":  # confirm mode: the human approved already
            return args
        if ctx.settings.autonomous or not ctx.interactive:
            return _autonomous(args, found, ctx)
        answer, text = ctx.ui.approve(f"code_run: {decision.reason} (rule: {decision.rule})", args["script"])
        if answer == "approve":
            return args
        if answer != "edit":
            why = f" Their reason: {' '.join(text.split())}" if text.strip() else ""
            raise PermissionDenied(
                f"The user rejected this script: {decision.reason} (rule: {decision.rule}).{why} Nothing was run. "
                "Do it another way or ask the user how to proceed.")
        args = {**args, "script": text}  # an edited script is checked again from the start
    raise PermissionDenied("The script was edited too many times without being approved; nothing was run.")


def _autonomous(args: dict, found: list[Decision], ctx: ToolContext) -> dict:
    path = ctx.settings.home / POLICY_FILE
    policy = snapshot(ctx)
    allow_rules, patterns = policy.read()
    blocked = [d for d in found if d.verdict == ASK and d.rule not in allow_rules
               and not any(fnmatch.fnmatchcase(d.command.strip(), p) for p in patterns)]
    if not blocked:
        return args
    d = blocked[0]
    raise PermissionDenied(
        f"Refused: {d.reason} (rule: {d.rule}; needs approval, and no human is at a terminal). Nothing was run. "
        f"Do it another way; the user can allow it by adding \"{d.rule}\" to allow_rules in {path}.{policy.note}")


def snapshot(ctx: ToolContext) -> PolicySnapshot:
    if "command-policy" not in ctx.resources:
        saved = ctx.state.setdefault("command_policy", {})
        ctx.resources["command-policy"] = PolicySnapshot(ctx.settings.home / POLICY_FILE, saved)
    return ctx.resources["command-policy"]


class PolicySnapshot:
    """The policy file as this run first read it: a change made while the run goes on waits for the next run."""

    def __init__(self, path: Path, saved: dict):
        self.path, self.saved = path, saved
        """saved: the run's tool state entry (rules, patterns, the file's stamp, or the error reading it)."""
        if not saved:
            saved["stamp"] = list(_stamp(path) or [])
            try:
                rules, patterns = load_policy(path)
            except PermissionDenied as e:  # told at the first dangerous call, not at a harmless one
                saved["error"] = str(e)
            else:
                saved.update(rules=sorted(rules), patterns=patterns)
        self.note = ""

    def read(self) -> tuple[set[str], list[str]]:
        if list(_stamp(self.path) or []) != self.saved["stamp"]:
            self.note = (f" ({self.path} changed while this run was going; the change is ignored until the next "
                         "run.)")
        if "error" in self.saved:
            raise PermissionDenied(self.saved["error"])
        return set(self.saved["rules"]), list(self.saved["patterns"])

    def close(self) -> None:
        pass


def _stamp(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def load_policy(path: Path) -> tuple[set[str], list[str]]:
    """(allowed rule ids, allowed command patterns); nothing allowed when the file is missing."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set(), []
    except (OSError, ValueError) as e:
        raise PermissionDenied(f"The command policy file {path} cannot be read ({e}); dangerous commands are "
                               "refused until it is fixed. Do it another way.") from None
    if not isinstance(data, dict):
        raise PermissionDenied(f"The command policy file {path} must hold a JSON object; dangerous commands "
                               "are refused until it is fixed.")
    rules, patterns = data.get("allow_rules", []), data.get("allow_commands", [])
    if not all(isinstance(x, str) for x in [*rules, *patterns]):
        raise PermissionDenied(f"allow_rules and allow_commands in {path} must be lists of strings.")
    return set(rules), list(patterns)
