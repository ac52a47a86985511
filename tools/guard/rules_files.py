"""The file-system rules of the command policy: deletes, writes, moves, copies, in-place edits, permissions.

A rule gets one simple command's arguments and reports through `flag(verdict, rule_id, reason)`. Paths are
placed by places.py; what is protected (`.git`, ga's configuration) comes from ga/tooling/boundary/protected.py.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from tools.guard.links import LinkedPlaces
from tools.guard.places import CATASTROPHIC_PLACES, Places, Target, normpath
from tools.guard.scanner import ASK, REFUSE

Flag = Callable[[str, str, str], None]
Rule = Callable[[list[str], Places, str, Flag], None]

_DEVICE = re.compile(r"^/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|md\d|dm-\d|loop\d|sr\d|nbd\d|"
                     r"disk/|mapper/|block/|mem$|kmem$|port$)")
_SAFE_WRITES = re.compile(r"^/dev/(null|zero|stdout|stderr|tty|fd/\d+|pts/\d+)$|^/proc/self/fd/")


def is_device(path: str) -> bool:
    return bool(_DEVICE.match(normpath(path) if path.startswith("//") else path))


_PLACE_WORDS = {"root": "the root of the file system", "home": "the home folder",
                "workspace-root": "the workspace root", "ancestor": "a folder holding the home folder or workspace",
                "top-level": "a top-level system folder"}


def check_delete(target: Target, *, recursive: bool, command: str, flag: Flag, verb: str = "delete") -> None:
    """rm, shutil.rmtree, mv's source...: the workspace is fine, outside asks, / home and workspace root never."""
    if target.unknown and not target.anchored:
        empty = f"; were it empty, {target.path}" if recursive and target.place in CATASTROPHIC_PLACES else ""
        flag(ASK, "rm-unset-variable" if empty else "delete-unknown-path",
             f"`{command}` would {verb} {target.text!r}, a path the policy cannot see (not a literal, or in a "
             f"folder it cannot see{empty}); use a literal path")
        return
    if target.unknown and recursive and target.place in CATASTROPHIC_PLACES:
        flag(ASK, "rm-unset-variable", f"`{command}` would {verb} {target.path} if a variable in {target.text!r} "
             "were empty or unset; use a literal path")
    elif target.catastrophic and recursive:
        rule = {"home": "rm-home", "workspace-root": "rm-workspace-root"}.get(target.place, "rm-root")
        flag(REFUSE, rule, f"`{command}` would recursively {verb} {_PLACE_WORDS[target.place]} ({target.path})")
    elif target.protected:
        flag(ASK, "protected-path", f"`{command}` would {verb} {target.path}, {target.protected}")
    elif target.place not in ("inside", "temp") and not (target.deep_glob and target.place == "workspace-root"):
        what = f"entries in {target.path}" if target.deep_glob else str(target.path)
        flag(ASK, "delete-outside-workspace", f"`{command}` would {verb} {what}, outside the workspace")


def check_write(path: str, places: LinkedPlaces, command: str, flag: Flag, *, strict: bool = True) -> None:
    """Redirections and other writes (through links): a disk device never; outside the workspace, or a protected
    path, asks."""
    if is_device(path):
        flag(REFUSE, "overwrite-device", f"`{command}` writes onto the disk device {path}")
        return
    if _SAFE_WRITES.match(path):
        return
    target = places.target(path, follow=True)
    if target.unknown and not target.anchored:
        if strict:
            flag(ASK, "write-unknown-path", f"`{command}` writes to {path!r}, a path the policy cannot see "
                 "(not a literal); use a literal path")
    elif target.protected:
        flag(ASK, "protected-path", f"`{command}` writes {target.path}, {target.protected}")
    elif target.place not in ("inside", "temp", "workspace-root"):  # `cp x .` is inside
        flag(ASK, "write-outside-workspace", f"`{command}` writes {target.path}, outside the workspace")


def _short_flags(args: list[str]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


def operands(args: list[str]) -> list[str]:
    if "--" in args:
        i = args.index("--")
        return [a for a in args[:i] if not a.startswith("-")] + args[i + 1:]
    return [a for a in args if not a.startswith("-")]


def _rm(args: list[str], places: Places, command: str, flag: Flag) -> None:
    recursive = "--recursive" in args or any(c in _short_flags(args) for c in "rR")
    if "--no-preserve-root" in args:
        flag(REFUSE, "rm-no-preserve-root", f"`{command}` disables rm's protection of /")
    for operand in operands(args):
        check_delete(places.target(operand), recursive=recursive, command=command, flag=flag)


FIND_FILTERS = {"-name", "-iname", "-path", "-ipath", "-wholename", "-regex", "-iregex", "-newer", "-mtime", "-mmin",
                 "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty", "-inum", "-samefile", "-user", "-group",
                 "-perm", "-links"}


def _find(args: list[str], places: Places, command: str, flag: Flag) -> None:
    deleting = "-delete" in args or any(a in ("-exec", "-execdir") and i + 1 < len(args) and
                                        os.path.basename(args[i + 1]) in ("rm", "shred")
                                        for i, a in enumerate(args))
    if deleting:
        roots = [a for a in args[: next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))),
                                        len(args))]] or ["."]
        selective = bool(FIND_FILTERS & set(args))
        for root in roots:
            check_delete(places.target(root, selective=selective), recursive=True, command=command, flag=flag)


def _permissions(args: list[str], places: Places, command: str, flag: Flag) -> None:
    recursive = "--recursive" in args or "R" in _short_flags(args)
    for operand in operands(args)[1:]:
        target = places.target(operand)
        if target.unknown:
            continue
        if recursive and target.catastrophic:
            flag(REFUSE, "chmod-recursive-root",
                 f"`{command}` recursively changes permissions of {_PLACE_WORDS[target.place]} ({target.path})")
        elif target.protected:
            flag(ASK, "protected-path", f"`{command}` changes {target.path}, {target.protected}")
        elif target.place not in ("inside", "temp"):
            flag(ASK, "permissions-outside-workspace", f"`{command}` changes {target.path}, outside the workspace")


def _dd(args: list[str], places: Places, command: str, flag: Flag) -> None:
    for a in args:
        if a.startswith("of=") and is_device(a[3:]):
            flag(REFUSE, "dd-to-device", f"`{command}` writes raw data onto the disk device {a[3:]}")
        elif a.startswith("of="):
            check_write(a[3:], places, command, flag)


def _values(args: list[str], with_value: set[str]) -> tuple[list[str], dict[str, str]]:
    """The operands of a command and the values of its options (`-t DIR`, `--suffix=X`), by option."""
    words, values, i = [], {}, 0
    while i < len(args):
        a, i = args[i], i + 1
        if a == "--":
            return words + args[i:], values
        name, eq, value = a.partition("=") if a.startswith("--") else (a, "", "")
        if a.startswith("-") and len(a) > 1:
            if name in with_value and not eq and i < len(args):
                value, i = args[i], i + 1
            values[name] = value
        else:
            words.append(a)
    return words, values


def _copy(args: list[str], places: Places, command: str, flag: Flag, *, moves: bool = False) -> None:
    """cp, mv, install, ln: the destination is written, like `> DEST`; mv also takes its sources away."""
    words, values = _values(args, {"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner",
                                   "-g", "--group"})
    directory = values.get("-t") or values.get("--target-directory")
    if directory is not None:
        dests, sources = [directory], words
    elif "-d" in values or "--directory" in values:  # install -d DIR...: each is created
        dests, sources = words, []
    else:
        dests, sources = (words[-1:], words[:-1]) if len(words) > 1 else ([], [])
    for source in sources if moves else []:
        check_delete(places.target(source), recursive=True, command=command, flag=flag, verb="move away")
    for dest in dests:
        check_write(dest, places, command, flag)


def _move(args: list[str], places: Places, command: str, flag: Flag) -> None:
    _copy(args, places, command, flag, moves=True)


_SED_VALUES = {"-e", "--expression", "-f", "--file", "-l", "--line-length"}


def _sed(args: list[str], places: Places, command: str, flag: Flag) -> None:
    """sed -i edits its files in place: each is written."""
    in_place = any(a.startswith("--in-place") or re.match(r"^-[nErsuz]*i", a) for a in args)
    if not in_place:
        return
    words, values = _values(args, _SED_VALUES)
    scripted = {"-e", "--expression", "-f", "--file"} & set(values)
    for path in words if scripted else words[1:]:
        check_write(path, places, command, flag)


def _writer(with_value: set[str]) -> Callable[[list[str], Places, str, Flag], None]:
    """tee, truncate, shred: every operand is written."""
    def rule(args: list[str], places: Places, command: str, flag: Flag) -> None:
        for operand in _values(args, with_value)[0]:
            check_write(operand, places, command, flag)
    return rule


_RSYNC_VALUES = {"-e", "--rsh", "-f", "--filter", "--exclude", "--include", "--exclude-from", "--include-from",
                 "--files-from", "-T", "--temp-dir", "--compare-dest", "--copy-dest", "--link-dest", "--backup-dir",
                 "--suffix", "--chmod", "--chown", "--timeout", "--contimeout", "--bwlimit", "--max-size",
                 "--min-size", "--max-delete", "--partial-dir", "--log-file", "--password-file", "--port", "-B",
                 "--block-size", "--out-format", "--modify-window", "--iconv", "-M", "--remote-option",
                 "--rsync-path", "--usermap", "--groupmap", "--address", "--sockopts", "--skip-compress"}
_REMOTE = re.compile(r"^[^/]*:|^rsync://")


def _rsync(args: list[str], places: Places, command: str, flag: Flag) -> None:
    """--delete empties what the destination holds beyond the source; --remove-source-files empties the source."""
    words, values = _values(args, _RSYNC_VALUES)
    if len(words) < 2:
        return
    *sources, dest = words
    if any(v.startswith("--del") for v in values) and not _REMOTE.match(dest):
        for source in sources:  # `src/` syncs into dest itself, `src` into dest/src
            into = dest if source.endswith(("/", "/.")) else os.path.join(dest, os.path.basename(source))
            check_delete(places.target(into), recursive=True, command=command, flag=flag)
    if "--remove-source-files" in values:
        for source in sources:
            if not _REMOTE.match(source):
                check_delete(places.target(source), recursive=True, command=command, flag=flag)


_TAR_SHORT_VALUES = set("fCTXbHgKLNV")
_TAR_LONG_VALUES = {"--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--blocking-factor",
                    "--format", "--listed-incremental", "--starting-file", "--tape-length", "--newer", "--label",
                    "--owner", "--group", "--mode", "--transform", "--xform", "--use-compress-program", "--mtime",
                    "--after-date", "--to-command", "--suffix"}


def _tar(args: list[str], places: Places, command: str, flag: Flag) -> None:
    """--remove-files deletes what was put in the archive (relative to the -C folder in force)."""
    if "--remove-files" not in args:
        return
    if args and not args[0].startswith("-"):
        args = ["-" + args[0], *args[1:]]  # old style: `tar cf x.tar dir`
    directory, i = "", 0
    while i < len(args):
        a, i = args[i], i + 1
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            if name in _TAR_LONG_VALUES and not eq and i < len(args):
                value, i = args[i], i + 1
            directory = value if name == "--directory" else directory
        elif a.startswith("-") and len(a) > 1:
            at = next((j for j, c in enumerate(a[1:], 1) if c in _TAR_SHORT_VALUES), None)
            if at is not None:
                value = a[at + 1:]
                if not value and i < len(args):
                    value, i = args[i], i + 1
                directory = value if a[at] == "C" else directory
        else:
            check_delete(places.target(os.path.join(directory, a)), recursive=True, command=command, flag=flag)


FILE_RULES: dict[str, Rule] = {
    "rm": _rm, "unlink": _rm, "find": _find, "chmod": _permissions, "chown": _permissions, "chgrp": _permissions,
    "dd": _dd, "cp": _copy, "mv": _move, "install": _copy, "ln": _copy, "rsync": _rsync, "tar": _tar, "sed": _sed,
    "tee": _writer(set()), "truncate": _writer({"-s", "--size", "-r", "--reference"}),
    "shred": _writer({"-n", "--iterations", "-s", "--size", "--random-source"}),
}
