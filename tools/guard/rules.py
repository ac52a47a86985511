"""The accident list: the verdicts, what a simple command may not do unasked (RULES, by its name) and where a path
lies. A rule gets the command's words (a part only run time knows is UNKNOWN) and reports through scan.flag,
check_delete and check_write; a word it cannot read passes (the sandbox is the boundary)."""

from __future__ import annotations

import itertools
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ga.tooling.boundary.protected import why_protected

ALLOW, ASK, REFUSE = "allow", "ask", "refuse"
"""The tiers: run it, ask a human (the dangerous tier), never run it (the catastrophic tier)."""


@dataclass(frozen=True, kw_only=True)
class Decision:
    verdict: str = ALLOW
    rule: str = ""
    reason: str = ""
    command: str = ""
    """The one simple command (or Python call) that raised it: what policy.json's allow_commands match."""

    @property
    def message(self) -> str:
        return f"{self.reason} (rule: {self.rule})" if self.rule else "allowed"


def worst(found: list[Decision]) -> Decision:
    return max(found, key=lambda d: (ALLOW, ASK, REFUSE).index(d.verdict), default=Decision())


UNKNOWN = "\x00"
"""Stands, inside a word, for what only run time knows (a variable, a command's output)."""
DEVICE = re.compile(r"^/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|md\d|dm-\d|loop\d|disk/|mapper/|mem$)")
_TEMP = sorted({Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path(tempfile.gettempdir())})
_WHOLE = {"*", ".*", "*.*", "**", ".[!.]*", ".??*"}  # a last component meaning all a folder holds: `rm -rf dir/*`
CATASTROPHIC = {"root": ("rm-root", "the root of the file system"), "home": ("rm-home", "the home folder"),
                "workspace-root": ("rm-workspace-root", "the workspace root"),
                "ancestor": ("rm-root", "a folder holding the home folder or the workspace"),
                "top-level": ("rm-root", "a top-level system folder")}
FIND_FILTERS = {"-name", "-iname", "-path", "-ipath", "-regex", "-newer", "-mtime", "-mmin", "-size", "-empty", "-user"}


def normpath(path: str) -> str:
    """os.path.normpath, with a leading `//` (kept by POSIX) collapsed: `//` is `/`."""
    path = os.path.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path


@dataclass(kw_only=True)
class Places:
    workspace: Path
    home: Path
    cwd: Path | None
    """None after a `cd` to a folder the policy cannot read: relative paths are then unknown."""
    ga_home: Path

    def locate(self, word: str) -> tuple[Path, bool] | None:
        """The path a word names, and whether all of it is meant (`dir/*`: all dir holds; `dir/*.log`: some);
        None when a part of it is unknown."""
        if UNKNOWN in word:
            return None
        word = str(self.home) + word[1:] if word == "~" or word.startswith("~/") else os.path.expanduser(word)
        if not word or (self.cwd is None and not word.startswith("/")):
            return None
        parts = Path(word).parts
        at = next((i for i, p in enumerate(parts) if re.search(r"[*?\[]", p)), None)
        whole = at is None or (at == len(parts) - 1 and parts[at] in _WHOLE)
        raw = Path(*parts[:at])
        return Path(normpath(str(raw if raw.is_absolute() else (self.cwd or Path("/")) / raw))), whole

    def place(self, path: Path) -> str:
        """root, home, workspace-root, ancestor, top-level, inside, temp or outside."""
        if path == Path("/"):
            return "root"
        if path in (self.home, self.workspace):
            return "home" if path == self.home else "workspace-root"
        if self.home.is_relative_to(path) or self.workspace.is_relative_to(path):
            return "ancestor"
        if len(path.parts) == 2:
            return "top-level"
        if path.is_relative_to(self.workspace):
            return "inside"
        if path.is_relative_to(self.home):  # before the temporary roots: HOME may lie under /tmp in CI
            return "outside"
        return "temp" if any(path.is_relative_to(t) for t in _TEMP) else "outside"

    def protected(self, path: Path) -> str:
        """Why a command may not change `path` unasked (ga/tooling/boundary/protected.py), or any of GA_HOME."""
        if reason := why_protected(path, self.ga_home, self.home):
            return reason
        if path.is_relative_to(self.ga_home):
            return "ga's own data (GA_HOME: SOPs, memory and runs change only through ga's tools)"
        return ""


def check_delete(scan: Any, word: str, *, recursive: bool, some: bool = False, verb: str = "delete") -> None:
    """rm, find -delete, mv's source, shutil.rmtree: / ~ and the workspace root never; outside the workspace asks."""
    found = scan.places.locate(word)
    if found is None:
        return
    path, whole = found[0], found[1] and not some
    place, command = scan.places.place(path), scan.command
    if recursive and whole and place in CATASTROPHIC:
        rule, what = CATASTROPHIC[place]
        scan.flag(REFUSE, rule, f"`{command}` would recursively {verb} {what} ({path})")
    elif why := scan.places.protected(path):
        scan.flag(ASK, "protected-path", f"`{command}` would {verb} {path}, {why}")
    elif place not in ("inside", "temp") and (whole or place != "workspace-root"):
        scan.flag(ASK, "delete-outside-workspace", f"`{command}` would {verb} {path}, outside the workspace")


def check_write(scan: Any, word: str) -> None:
    """A redirection, cp's destination, open(path, 'w'): a disk device never; outside the workspace asks."""
    if DEVICE.match(normpath(word)):
        scan.flag(REFUSE, "overwrite-device", f"`{scan.command}` writes onto the disk device {word}")
        return
    found = None if word.startswith("/dev/") else scan.places.locate(word)  # /dev/null, /dev/stderr...
    if found is None:
        return
    if why := scan.places.protected(found[0]):
        scan.flag(ASK, "protected-path", f"`{scan.command}` writes {found[0]}, {why}")
    elif scan.places.place(found[0]) not in ("inside", "temp", "workspace-root"):
        scan.flag(ASK, "write-outside-workspace", f"`{scan.command}` writes {found[0]}, outside the workspace")


def operands(args: list[str]) -> list[str]:
    if "--" in args:
        return [a for a in args[:args.index("--")] if not a.startswith("-")] + args[args.index("--") + 1:]
    return [a for a in args if not a.startswith("-")]


def _shorts(args: list[str]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


def _rm(scan: Any, args: list[str]) -> None:
    if "--no-preserve-root" in args:
        scan.flag(REFUSE, "rm-no-preserve-root", f"`{scan.command}` disables rm's protection of /")
    recursive = "--recursive" in args or any(c in _shorts(args) for c in "rR")
    for word in operands(args):
        check_delete(scan, word, recursive=recursive)


def _find(scan: Any, args: list[str]) -> None:
    if "-delete" in args or any(a in ("-exec", "-execdir") and os.path.basename(b) in ("rm", "shred")
                                for a, b in itertools.pairwise(args)):
        end = next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))
        for root in args[:end] or ["."]:
            check_delete(scan, root, recursive=True, some=bool(FIND_FILTERS & set(args)))


def _copy(scan: Any, args: list[str], *, moves: bool = False) -> None:
    """cp, mv, install, ln: the destination is written; mv takes its sources away too."""
    folder = next((b for a, b in itertools.pairwise(args) if a == "-t"), None) or next(
        (a.split("=", 1)[1] for a in args if a.startswith("--target-directory=")), None)
    words = [w for w in operands(args) if w != folder]
    dests, sources = ([folder], words) if folder else (words[-1:], words[:-1])
    for source in sources if moves else []:
        check_delete(scan, source, recursive=True, verb="move away")
    for dest in dests if sources else []:
        check_write(scan, dest)


def _writes(scan: Any, args: list[str]) -> None:
    """tee, truncate, shred: each operand is written."""
    for word in operands(args):
        check_write(scan, word)


def _sed(scan: Any, args: list[str]) -> None:
    """sed -i: its files are written (the first operand is its program)."""
    if any(a.startswith("--in-place") or re.match(r"^-[nErsuz]*i", a) for a in args):
        _writes(scan, ["--", *operands(args)[1:]])


def _dd(scan: Any, args: list[str]) -> None:
    for a in (a[3:] for a in args if a.startswith("of=")):
        if DEVICE.match(normpath(a)):
            scan.flag(REFUSE, "dd-to-device", f"`{scan.command}` writes raw data onto the disk device {a}")
        else:
            check_write(scan, a)


def _permissions(scan: Any, args: list[str]) -> None:
    for word in operands(args)[1:] if "--recursive" in args or "R" in _shorts(args) else []:
        found = scan.places.locate(word)
        if found and found[1] and scan.places.place(found[0]) in CATASTROPHIC:
            scan.flag(REFUSE, "chmod-recursive-root", f"`{scan.command}` recursively changes {found[0]}")


def _refuse(rule: str, what: str) -> Any:
    return lambda scan, args: scan.flag(REFUSE, rule, f"`{scan.command}` {what}")


def _power(scan: Any, args: list[str]) -> None:
    if (operands(args) or [""])[0] in ("0", "6", "poweroff", "reboot", "halt", "kexec"):
        scan.flag(REFUSE, "shutdown", f"`{scan.command}` shuts down or restarts the machine")


def _kill(scan: Any, args: list[str]) -> None:
    pids = args[args.index("--") + 1:] if "--" in args else args[1:] if args[:1] and args[0][:1] == "-" else args
    if "-1" in pids or "1" in pids:
        scan.flag(REFUSE, "kill-all", f"`{scan.command}` signals every process you own (or init)")


def _crontab(scan: Any, args: list[str]) -> None:
    words = [a for i, a in enumerate(args) if a != "-u" and (i == 0 or args[i - 1] != "-u")]
    if any(a.startswith("-") and "r" in a for a in words):
        scan.flag(ASK, "crontab-remove", f"`{scan.command}` deletes the crontab")
    elif words and words != ["-l"]:
        scan.flag(ASK, "crontab", f"`{scan.command}` installs commands that run on a schedule, outside the run")


_GIT = [(r"push( .*)? (--force|--mirror|-[a-z]*f[a-z]* |\+)", "git-push-force", "rewrites history on the remote"),
        (r"push( .*)? (--delete|-[a-z]*d[a-z]* |:)", "git-push-delete", "deletes branches or tags on the remote"),
        (r"reset( .*)? --hard ", "git-reset-hard", "throws away uncommitted changes"),
        (r"clean( .*)? (--force|-[a-z]*f[a-z]* )", "git-clean", "deletes untracked files for good"),
        (r"checkout( .*)? (-- |\. |--force|-[a-z]*f[a-z]* )|restore(?!.* (--staged|-[a-zA-Z]*S))|restore( .*)? "
         r"(--worktree|-[a-zA-Z]*W)", "git-discard-changes", "overwrites uncommitted changes"),
        (r"stash (drop|clear) ", "git-stash-drop", "throws away stashed changes"),
        (r"branch( .*)? (-[a-zA-Z]*D|--delete.* --force|--force.* --delete)", "git-branch-delete", "deletes an "
         "unmerged branch"),
        (r"reflog (expire|delete) |gc( .*)? --prune=", "git-history-loss", "loses the way back to lost commits"),
        (r"filter-branch ", "git-history-rewrite", "rewrites the repository's history")]
"""git's verbs that lose work or history, matched on the words from the verb on: (pattern, rule, what it does)."""


def _git(scan: Any, args: list[str]) -> None:
    i = 0  # global options (-C DIR, -c k=v) come before the verb
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    words = " ".join(args[i:]) + " "
    if found := next((g for g in _GIT if re.match(g[0], words)), None):
        scan.flag(ASK, found[1], f"`{scan.command}` {found[2]}")


RULES = {
    "rm": _rm, "unlink": _rm, "rmdir": _rm, "find": _find, "cp": _copy, "install": _copy, "ln": _copy,
    "mv": lambda scan, args: _copy(scan, args, moves=True), "sed": _sed, "tee": _writes, "truncate": _writes,
    "shred": _writes, "dd": _dd, "chmod": _permissions, "chown": _permissions, "chgrp": _permissions,
    **dict.fromkeys(("mkfs", "mke2fs", "mkswap", "wipefs"), _refuse("mkfs", "formats a disk, destroying its data")),
    **dict.fromkeys(("shutdown", "reboot", "halt", "poweroff"), _refuse("shutdown", "shuts down the machine")),
    "systemctl": _power, "init": _power, "telinit": _power, "kill": _kill,
    "killall5": _refuse("kill-all", "signals every process"), "crontab": _crontab, "git": _git,
}


def rule_name(word: str) -> str:
    name = os.path.basename(word)
    return "mkfs" if name.startswith("mkfs.") else name
