"""The git rules: what loses work or history (force pushes, hard resets, discarded changes, expired reflogs),
and configuration that runs commands later (`core.fsmonitor`, hooks paths, aliases with `!`) or lives
outside the workspace (`--global`, `--system`)."""

from __future__ import annotations

import re
import shlex

from tools.guard.places import Places
from tools.guard.rules_files import Flag, check_write
from tools.guard.scanner import ASK

_GLOBAL_VALUES = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env",
                  "--super-prefix", "--attr-source"}
_EXEC_KEYS = re.compile(r"^(core\.(fsmonitor|hookspath|sshcommand|pager|editor|askpass|gitproxy)|sequence\.editor|"
                        r"credential\..*helper|gpg\.(.*\.)?program|.*\.textconv|filter\..*|diff\..*\.command|"
                        r"merge\..*\.driver|alias\..*|include\.path|includeif\..*|uploadpack\.packobjectshook|"
                        r"url\..*\.insteadof|remote\..*\.(uploadpack|receivepack))$", re.IGNORECASE)
"""Config keys whose value git runs as a command (or that pull in config from elsewhere)."""
_COMMAND_KEYS = re.compile(r"^(core\.(fsmonitor|sshcommand|pager|editor|askpass|gitproxy)|sequence\.editor|pager\..*|"
                           r"credential\..*helper|gpg\.(.*\.)?program|.*\.textconv|filter\..*|diff\..*\.command|"
                           r"merge\..*\.driver|uploadpack\.packobjectshook|remote\..*\.(uploadpack|receivepack))$")
"""Of those, the keys whose value is a shell command (the scan checks it as one)."""
_BOOLEANS = {"true", "false", "yes", "no", "on", "off", "1", "0", ""}


def config_options(args: list[str]) -> tuple[list[tuple[str, str]], int]:
    """`git -c KEY=VALUE -C DIR SUBCOMMAND ...`: the -c pairs (keys lowercased) and where the subcommand is."""
    pairs, i = [], 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-c" and i + 1 < len(args):
            key, _, value = args[i + 1].partition("=")
            pairs.append((key.lower(), value))
        i += 2 if args[i] in _GLOBAL_VALUES else 1
    return pairs, i


def command_keys(args: list[str]) -> list[str]:
    """The shell commands `git -c` hands git for this run: `alias.x=!CODE`, `core.pager=CODE`, `core.fsmonitor=..`."""
    return [value.removeprefix("!") for key, value in config_options(args)[0]
            if (key.startswith("alias.") and value.startswith("!")) or
            (_COMMAND_KEYS.match(key) and value.lower() not in _BOOLEANS)]


def check_git(args: list[str], places: Places, command: str, flag: Flag) -> None:
    """`git [global options] SUBCOMMAND ...`: global options (-C DIR, -c k=v) are skipped, not read as the verb;
    an alias given with -c stands for the git command it names."""
    pairs, i = config_options(args)
    for key, _ in pairs:
        if _EXEC_KEYS.match(key) and not key.startswith("alias.") and not _COMMAND_KEYS.match(key):
            flag(ASK, "git-config-exec", f"`{command}` sets {key} for this command: git then runs code from elsewhere")
    if i >= len(args):
        return
    alias = dict(pairs).get(f"alias.{args[i].lower()}", "")
    try:
        words = shlex.split(alias) if not alias.startswith("!") else []
    except ValueError:  # unbalanced quotes
        words = alias.split()
    verb, rest = (words[0], words[1:] + args[i + 1:]) if words else (args[i], args[i + 1:])
    rule = _SUBCOMMANDS.get(verb)
    if rule is not None:
        rule(rest, places, command, flag)


def _words(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _shorts(args: list[str]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


def _push(args: list[str], places: Places, command: str, flag: Flag) -> None:
    refs = _words(args)[1:]
    if {"--force", "--force-with-lease", "--mirror"} & set(args) or "f" in _shorts(args) or \
            any(r.startswith("+") for r in refs):
        flag(ASK, "git-push-force", f"`{command}` rewrites history on the remote")
    elif {"--delete", "--prune"} & set(args) or "d" in _shorts(args) or any(r.startswith(":") for r in refs):
        flag(ASK, "git-push-delete", f"`{command}` deletes branches or tags on the remote")


def _reset(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if "--hard" in args:
        flag(ASK, "git-reset-hard", f"`{command}` throws away uncommitted changes")


def _clean(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if "f" in _shorts(args) or "--force" in args:
        flag(ASK, "git-clean", f"`{command}` deletes untracked (maybe ignored) files for good")


def _checkout(args: list[str], places: Places, command: str, flag: Flag) -> None:
    paths = args[args.index("--") + 1:] if "--" in args else [w for w in _words(args) if w in (".", "*", ":/")]
    if paths or "--force" in args or "f" in _shorts(args):
        flag(ASK, "git-discard-changes", f"`{command}` overwrites uncommitted changes in the working tree")


def _restore(args: list[str], places: Places, command: str, flag: Flag) -> None:
    staged_only = ({"--staged"} & set(args) or "S" in _shorts(args)) and not (
        "--worktree" in args or "W" in _shorts(args))
    if not staged_only:
        flag(ASK, "git-discard-changes", f"`{command}` overwrites uncommitted changes in the working tree")


def _stash(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if _words(args)[:1] in (["drop"], ["clear"]):
        flag(ASK, "git-stash-drop", f"`{command}` throws away stashed changes")


def _reflog(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if _words(args)[:1] in (["expire"], ["delete"]):
        flag(ASK, "git-history-loss", f"`{command}` forgets reflog entries, the way back to lost commits")


def _gc(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if any((a.startswith("--prune") and a not in ("--prune", "--no-prune")) or a == "--aggressive" for a in args):
        flag(ASK, "git-history-loss", f"`{command}` deletes unreachable commits for good")


def _branch(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if "D" in _shorts(args) or ("--delete" in args and "--force" in args):
        flag(ASK, "git-branch-delete", f"`{command}` deletes a branch even if it is not merged")


def _update_ref(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if "-d" in args:
        flag(ASK, "git-branch-delete", f"`{command}` deletes a ref")


def _prune(args: list[str], places: Places, command: str, flag: Flag) -> None:
    flag(ASK, "git-history-loss", f"`{command}` deletes unreachable objects for good")


def _rewrite(args: list[str], places: Places, command: str, flag: Flag) -> None:
    flag(ASK, "git-history-rewrite", f"`{command}` rewrites the repository's history")


def _config(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if {"--global", "--system"} & set(args):
        where = "~/.gitconfig" if "--global" in args else "/etc/gitconfig"
        flag(ASK, "git-config-global", f"`{command}` edits {where}, outside the workspace")
    for option in ("--file", "-f"):
        if option in args and args.index(option) + 1 < len(args):
            check_write(args[args.index(option) + 1], places, command, flag)
    reading = {"--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin", "--unset", "--unset-all"}
    words = _words(args)
    if len(words) >= 2 and not reading & set(args) and _EXEC_KEYS.match(words[0]):
        flag(ASK, "git-config-exec", f"`{command}` sets {words[0]}, whose value git runs as a command later")


_SUBCOMMANDS = {"push": _push, "reset": _reset, "clean": _clean, "checkout": _checkout, "restore": _restore,
                "stash": _stash, "reflog": _reflog, "gc": _gc, "prune": _prune, "branch": _branch,
                "update-ref": _update_ref, "filter-branch": _rewrite, "filter-repo": _rewrite, "config": _config}
