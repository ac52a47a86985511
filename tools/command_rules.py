"""The rules of the command policy, applied to one simple command (an argv) or one path.

shell_policy.py finds the commands (through pipes, eval, `bash -c`, substitutions...); this file
decides what each one may do. A rule reports through `flag(verdict, rule_id, reason)`.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ALLOW, ASK, REFUSE = "allow", "ask", "refuse"

Flag = Callable[[str, str, str], None]

_DEVICE = re.compile(r"^/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|md\d|dm-\d|loop\d|sr\d|nbd\d|"
                     r"disk/|mapper/|block/|mem$|kmem$|port$)")
_VARIABLE = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_]\w*")
_GLOB = re.compile(r"[*?\[]")
_WHOLE_GLOBS = {"*", ".*", "*.*", "**", ".[!.]*", ".??*"}
_KNOWN_VARS = {"HOME": "home", "PWD": "cwd", "TMPDIR": "tmp"}
_TEMP_ROOTS = sorted({Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path(tempfile.gettempdir())})
_SAFE_WRITES = re.compile(r"^/dev/(null|zero|stdout|stderr|tty|fd/\d+|pts/\d+)$|^/proc/self/fd/")


def is_device(path: str) -> bool:
    return bool(_DEVICE.match(path))


@dataclass(kw_only=True)
class Target:
    """A path as a command names it, placed relative to the workspace and the home folder."""

    text: str
    path: Path
    place: str
    """root, home, workspace-root, ancestor, top-level, inside, temp or outside."""
    unknown: bool = False
    """Part of it came from a variable or output the policy cannot see (taken as empty)."""
    deep_glob: bool = False
    """Only some entries below `path` are meant (`dir/*.log`, `dir/*/cache`), not `path` itself."""

    @property
    def catastrophic(self) -> bool:
        return self.place in ("root", "home", "workspace-root", "ancestor", "top-level") and not self.deep_glob


@dataclass(kw_only=True)
class Places:
    workspace: Path
    home: Path
    cwd: Path
    variables: dict[str, str] = field(default_factory=dict)
    """Shell variables assigned a literal value earlier in the script."""

    def target(self, text: str, *, selective: bool = False) -> Target:
        """`selective`: only some entries below the path are meant (e.g. find -name ...)."""
        expanded, unknown = self._expand(text)
        parts = Path(expanded).parts
        glob_at = next((i for i, p in enumerate(parts) if _GLOB.search(p)), None)
        if glob_at is not None:  # `dir/*` deletes what `dir` holds: judge it as `dir`
            selective = selective or glob_at < len(parts) - 1 or parts[glob_at] not in _WHOLE_GLOBS
            parts = parts[:glob_at]
        raw = Path(*parts) if parts else Path(".")
        path = Path(os.path.normpath(raw if raw.is_absolute() else self.cwd / raw))
        return Target(text=text, path=path, place=self._place(path), unknown=unknown, deep_glob=selective)

    def _expand(self, text: str) -> tuple[str, bool]:
        unknown = False

        def variable(m: re.Match) -> str:
            nonlocal unknown
            name = m.group(0).strip("${}")
            if name in self.variables and "$" not in self.variables[name]:
                return self.variables[name]
            known = _KNOWN_VARS.get(name)
            if known:
                return str({"home": self.home, "cwd": self.cwd, "tmp": "/tmp"}[known])
            unknown = True
            return ""

        if text == "~" or text.startswith("~/"):
            text = str(self.home) + text[1:]
        return _VARIABLE.sub(variable, text), unknown

    def _place(self, path: Path) -> str:
        if path == Path("/"):
            return "root"
        if path == self.home:
            return "home"
        if path == self.workspace:
            return "workspace-root"
        if self.home.is_relative_to(path) or self.workspace.is_relative_to(path):
            return "ancestor"
        if len(path.parts) == 2:
            return "top-level"
        if path.is_relative_to(self.workspace):
            return "inside"
        if any(path.is_relative_to(t) for t in _TEMP_ROOTS):
            return "temp"
        return "outside"


_PLACE_WORDS = {"root": "the root of the file system", "home": "the home folder",
                "workspace-root": "the workspace root", "ancestor": "a folder holding the home folder or workspace",
                "top-level": "a top-level system folder"}


def check_delete(target: Target, *, recursive: bool, command: str, flag: Flag) -> None:
    """rm, shutil.rmtree, find -delete...: the workspace is fine, outside asks, / home and workspace root never."""
    if target.unknown:
        if target.place == "root":
            flag(ASK, "rm-unset-variable", f"`{command}` deletes {target.path} when a variable in "
                 f"{target.text!r} is empty or unset; use a literal path")
        return
    if target.catastrophic and recursive:
        rule = {"home": "rm-home", "workspace-root": "rm-workspace-root"}.get(target.place, "rm-root")
        flag(REFUSE, rule, f"`{command}` would recursively delete {_PLACE_WORDS[target.place]} ({target.path})")
    elif target.place not in ("inside", "temp") and not (target.deep_glob and target.place == "workspace-root"):
        what = f"entries in {target.path}" if target.deep_glob else str(target.path)
        flag(ASK, "delete-outside-workspace", f"`{command}` deletes {what}, outside the workspace")


def check_write(path: str, places: Places, command: str, flag: Flag) -> None:
    """Redirections and other writes: a disk device never, outside the workspace asks."""
    if is_device(path):
        flag(REFUSE, "overwrite-device", f"`{command}` writes onto the disk device {path}")
        return
    if _SAFE_WRITES.match(path):
        return
    target = places.target(path)
    if not target.unknown and target.place not in ("inside", "temp"):
        flag(ASK, "write-outside-workspace", f"`{command}` writes {target.path}, outside the workspace")


def _short_flags(args: list[str]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


def _operands(args: list[str]) -> list[str]:
    if "--" in args:
        i = args.index("--")
        return [a for a in args[:i] if not a.startswith("-")] + args[i + 1:]
    return [a for a in args if not a.startswith("-")]


def _rm(args: list[str], places: Places, command: str, flag: Flag) -> None:
    recursive = "--recursive" in args or any(c in _short_flags(args) for c in "rR")
    if "--no-preserve-root" in args:
        flag(REFUSE, "rm-no-preserve-root", f"`{command}` disables rm's protection of /")
    for operand in _operands(args):
        check_delete(places.target(operand), recursive=recursive, command=command, flag=flag)


_FIND_FILTERS = {"-name", "-iname", "-path", "-ipath", "-wholename", "-regex", "-iregex", "-newer", "-mtime", "-mmin",
                 "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty", "-inum", "-samefile", "-user", "-group",
                 "-perm", "-links"}


def _find(args: list[str], places: Places, command: str, flag: Flag) -> None:
    deleting = "-delete" in args or any(a in ("-exec", "-execdir") and i + 1 < len(args) and
                                        os.path.basename(args[i + 1]) in ("rm", "shred")
                                        for i, a in enumerate(args))
    if deleting:
        roots = [a for a in args[: next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))),
                                        len(args))]] or ["."]
        selective = bool(_FIND_FILTERS & set(args))
        for root in roots:
            check_delete(places.target(root, selective=selective), recursive=True, command=command, flag=flag)


def _permissions(args: list[str], places: Places, command: str, flag: Flag) -> None:
    recursive = "--recursive" in args or "R" in _short_flags(args)
    for operand in _operands(args)[1:]:
        target = places.target(operand)
        if target.unknown:
            continue
        if recursive and target.catastrophic:
            flag(REFUSE, "chmod-recursive-root",
                 f"`{command}` recursively changes permissions of {_PLACE_WORDS[target.place]} ({target.path})")
        elif target.place not in ("inside", "temp"):
            flag(ASK, "permissions-outside-workspace", f"`{command}` changes {target.path}, outside the workspace")


def _dd(args: list[str], places: Places, command: str, flag: Flag) -> None:
    for a in args:
        if a.startswith("of=") and is_device(a[3:]):
            flag(REFUSE, "dd-to-device", f"`{command}` writes raw data onto the disk device {a[3:]}")


def _device_writer(args: list[str], places: Places, command: str, flag: Flag) -> None:
    for a in _operands(args):
        if is_device(a):
            flag(REFUSE, "overwrite-device", f"`{command}` writes onto the disk device {a}")


def _git(args: list[str], places: Places, command: str, flag: Flag) -> None:
    words = _operands(args)
    sub = words[0] if words else ""
    shorts = _short_flags(args)
    if sub == "push" and ({"--force", "--force-with-lease", "--mirror"} & set(args) or "f" in shorts
                          or any(w.startswith("+") for w in words[1:])):
        flag(ASK, "git-push-force", f"`{command}` rewrites history on the remote")
    elif sub == "reset" and "--hard" in args:
        flag(ASK, "git-reset-hard", f"`{command}` throws away uncommitted changes")
    elif sub == "clean" and ("f" in shorts or "--force" in args):
        flag(ASK, "git-clean", f"`{command}` deletes untracked (maybe ignored) files for good")


_REMOVAL_VERBS = {"remove", "purge", "autoremove", "erase", "uninstall", "del", "rm"}
_PACKAGE_TOOLS = {"apt", "apt-get", "aptitude", "yum", "dnf", "zypper", "apk", "snap", "brew", "pip", "pip3",
                  "conda", "mamba", "npm", "pnpm", "yarn", "gem", "cargo", "flatpak", "uv"}


def _packages(args: list[str], places: Places, command: str, flag: Flag) -> None:
    words = _operands(args)
    if command.split(maxsplit=1)[0].endswith(("npm", "pnpm", "yarn")) and "-g" not in args and "--global" not in args:
        return  # removing a project dependency only edits the project
    if words and words[0] in _REMOVAL_VERBS:
        flag(ASK, "package-removal", f"`{command}` removes installed packages")


def _dpkg_pacman(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if {"-r", "-P", "--remove", "--purge"} & set(args) or any(a.startswith("-R") for a in args):
        flag(ASK, "package-removal", f"`{command}` removes installed packages")


def _power(args: list[str], places: Places, command: str, flag: Flag) -> None:
    flag(REFUSE, "shutdown", f"`{command}` shuts down or restarts the machine")


def _runlevel(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if args and args[0] in ("0", "6", "poweroff", "reboot", "halt", "kexec"):
        flag(REFUSE, "shutdown", f"`{command}` shuts down or restarts the machine")


def _kill(args: list[str], places: Places, command: str, flag: Flag) -> None:
    pids = args[args.index("--") + 1:] if "--" in args else args[1:]
    if "-1" in pids:
        flag(REFUSE, "kill-all", f"`{command}` signals every process you own")


def _mkfs(args: list[str], places: Places, command: str, flag: Flag) -> None:
    flag(REFUSE, "mkfs", f"`{command}` formats a file system, destroying what it held")


def _partition(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if "-l" not in args and "--list" not in args:
        flag(ASK, "partition-table", f"`{command}` edits a disk's partition table")


RULES: dict[str, Callable[[list[str], Places, str, Flag], None]] = {
    "rm": _rm, "unlink": _rm, "find": _find, "shred": _device_writer,
    "chmod": _permissions, "chown": _permissions, "chgrp": _permissions,
    "dd": _dd, "cp": _device_writer, "mv": _device_writer, "tee": _device_writer, "install": _device_writer,
    "git": _git, "dpkg": _dpkg_pacman, "pacman": _dpkg_pacman,
    "shutdown": _power, "reboot": _power, "halt": _power, "poweroff": _power,
    "init": _runlevel, "telinit": _runlevel, "systemctl": _runlevel, "kill": _kill,
    "mkfs": _mkfs, "mke2fs": _mkfs, "mkswap": _mkfs, "wipefs": _mkfs, "mkntfs": _mkfs, "mkdosfs": _mkfs,
    "fdisk": _partition, "sfdisk": _partition, "parted": _partition, "gdisk": _partition, "sgdisk": _partition,
    **dict.fromkeys(_PACKAGE_TOOLS, _packages),
}


def check_argv(argv: list[str], places: Places, flag: Flag) -> None:
    """Apply the rule for argv[0] (by its base name), if there is one."""
    name = os.path.basename(argv[0])
    if name.startswith("mkfs."):
        name = "mkfs"
    rule = RULES.get(name)
    if rule is not None:
        rule(argv[1:], places, " ".join(argv)[:200], flag)
