"""Reading a command's words without running anything: which command a wrapper runs, the shell code a program
runs from its arguments, what `xargs` receives, and what a literal pipeline prints (`echo X | base64 -d | rev`,
`whoami`, `mktemp -d`, `pwd`).

The command policy uses it to see through `sudo`/`env`/`busybox`, into `trap CODE`, `vim -c '!CODE'`,
`git -c alias.x='!CODE'`, to read scripts hidden in base64, reversed strings or `printf` escapes, and to know the
values of the few commands whose output is predictable.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import os
import re
from typing import Any

from tools.guard.places import UNKNOWN, Places, entries_below
from tools.guard.rules_files import FIND_FILTERS
from tools.guard.rules_git import command_keys
from tools.guard.scanner import ASK

SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash"}
PYTHONS = re.compile(r"^python(\d+(\.\d+)?)?$")
WRAPPERS = {"sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}, "doas": {"-u", "-C"},
            "env": {"-u", "-C", "-S"}, "nice": {"-n"}, "timeout": {"-s", "-k"}, "ionice": {"-c", "-n"},
            "nohup": set(), "time": set(), "command": set(), "builtin": set(), "exec": set(), "setsid": set(),
            "stdbuf": set(), "chrt": set(), "unbuffer": set(), "pkexec": {"--user"}, "su": {"-c"},
            "busybox": set(), "toybox": set(), "coproc": set()}
"""Commands that run the command named after their options: `busybox rm -rf /` is `rm -rf /`."""
_EDITORS = {"vim", "vi", "nvim", "ex", "view", "vimdiff", "gvim"}
_EX_SHELL = re.compile(r"^[:\s]*(?:sil(?:ent)?!?\s*)?(?:[\d.,$%']*\s*)?(?:r(?:ead)?\s*|w(?:rite)?\s*)?!(?!=)(.+)", re.S)
_VIM_SYSTEM = re.compile(r"""\bsystem(?:list)?\(\s*(['"])(.*?)\1""")
_DELETERS = {"rm", "unlink", "rmdir", "shred"}
_EXEC_ENDS = {";", "+"}
_TMUX_RUNS = {"new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp",
              "run-shell", "run"}


def dash_c(args: list[str]) -> str | None:
    """The script of `sh -c SCRIPT` / `bash -lc SCRIPT` / `python -c CODE`, or None."""
    found = dash_c_args(args)
    return None if found is None else found[0]


def dash_c_args(args: list[str]) -> tuple[str, list[str]] | None:
    """`sh -c SCRIPT NAME ARG...`: the script and the words after it ($0, $1, ...)."""
    for i, a in enumerate(args):
        if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
            return (args[i + 1], args[i + 2:]) if i + 1 < len(args) else ("", [])
        if not a.startswith("-"):
            return None
    return None


def skip_options(args: list[str], with_value: set[str], name: str) -> list[str]:
    i = 0
    while i < len(args) and (args[i].startswith("-") or (name == "env" and "=" in args[i])):
        i += 2 if args[i] in with_value else 1
    if name == "timeout" and i < len(args):
        i += 1  # the duration
    return args[i:]


def peel(argv: list[str]) -> list[str]:
    """The command a chain of wrappers runs: `sudo env X=1 busybox rm -rf /` -> `rm -rf /`."""
    while argv and os.path.basename(argv[0]) in WRAPPERS and os.path.basename(argv[0]) != "su":
        name = os.path.basename(argv[0])
        argv = skip_options(argv[1:], WRAPPERS[name], name)
    return argv


def _values(args: list[str], options: tuple[str, ...]) -> list[str]:
    """The values given to these options: `-c X`, `--cmd=X`, `+X` (when "+" is among them)."""
    found = []
    for i, a in enumerate(args):
        if a in options and i + 1 < len(args):
            found.append(args[i + 1])
        elif a.startswith(tuple(o + "=" for o in options if o.startswith("--"))):
            found.append(a.split("=", 1)[1])
        elif "+" in options and a.startswith("+") and len(a) > 1:
            found.append(a[1:])
    return found


def command_strings(name: str, args: list[str]) -> list[str]:
    """Shell code a program runs from its arguments: a command string run by another program is a command."""
    if name == "trap":
        return args[:1] if len(args) > 1 and not args[0].startswith("-") else []
    if name == "watch":
        return [" ".join(skip_options(args, {"-n", "--interval"}, name))] if args else []
    if name in ("script", "flock", "runuser"):
        return _values(args, ("-c", "--command"))
    if name == "env":
        return _values(args, ("-S", "--split-string"))
    if name in _EDITORS:
        commands = _values(args, ("-c", "--cmd", "+"))
        return [m[1] for c in commands if (m := _EX_SHELL.match(c))] + [
            m[2] for c in commands for m in _VIM_SYSTEM.finditer(c)]
    if name == "gdb":
        commands = _values(args, ("-ex", "--ex", "-iex", "--eval-command", "-eval-command"))
        return [re.sub(r"^\s*(shell\s+|!)", "", c) for c in commands if re.match(r"\s*(shell\s|!)", c)]
    if name == "tmux":
        verb = next((i for i, a in enumerate(args) if a in _TMUX_RUNS), None)
        rest = skip_options(args[verb + 1:], {"-s", "-n", "-c", "-t", "-x", "-y", "-e", "-F", "-l"}, name) \
            if verb is not None else []
        return [" ".join(rest)] if rest else []
    if name == "git":
        return command_keys(args)
    return []


def xargs_argv(argv: list[str], stdin: str | None) -> tuple[list[str], bool]:
    """The command `xargs [options] cmd args` runs when it reads `stdin` (None: not known), and whether
    its input is known. Unknown input stands as ${UNKNOWN} where a placeholder takes it."""
    args = argv[1:]
    placeholder = None
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option in ("-I", "-i"):
            placeholder = args.pop(0) if option == "-I" and args else "{}"
        elif option.startswith("-I"):
            placeholder = option[2:]
        elif option.startswith(("-a", "--arg-file")):  # the input is read from a file, not stdin
            stdin = None
            if option == "-a" and args:
                args.pop(0)
        elif option in ("-n", "-P", "-L", "-d", "-E", "-s") and args:
            args.pop(0)
    items = stdin.split() if stdin is not None else []
    if placeholder:
        fill = " ".join(items) if stdin is not None else UNKNOWN
        return [a.replace(placeholder, fill) for a in args] or ["echo"], stdin is not None
    return (args or ["echo"]) + items, stdin is not None


def find_exec(scan: Any, args: list[str]) -> None:
    """`find ROOT ... -exec CMD {} ;`: CMD is checked with {} standing for what lies below ROOT."""
    roots = args[: next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))] or ["."]
    selective = bool(FIND_FILTERS & set(args))
    i = 0
    while i < len(args):
        if args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in _EXEC_ENDS), len(args))
            inner = args[i + 1:end]
            if inner and os.path.basename(inner[0]) not in _DELETERS:  # rm/shred: the find rule judges them
                for root in roots:
                    target = scan.places.target(root)
                    found = entries_below(root if target.unknown else str(target.path), selective)
                    scan.argv([found if a == "{}" else a.replace("{}", found) for a in inner])
            i = end
        i += 1


def xargs(scan: Any, argv: list[str], feed: str | list[tuple[str, bool]] | None) -> None:
    """`xargs CMD`: CMD with what xargs reads (`feed`: the literal text, the roots a `find` lists below, or None)."""
    inner, known = xargs_argv(argv, feed if isinstance(feed, str) else None)
    deleter = os.path.basename((peel(inner) or ["echo"])[0])
    if not known and deleter in _DELETERS:
        command = " ".join(argv)[:200]
        if isinstance(feed, list):  # `find ROOT ... | xargs rm`: entries below ROOT
            for root, selective in feed:
                scan.delete(root, recursive=True, command=command, selective=selective)
        else:
            scan.command = command
            scan.flag(ASK, "xargs-delete-unknown", f"`{command}` feeds {deleter} paths read from its input, "
                      "which the policy cannot see; list them first, then delete literal paths")
    scan.argv(inner)


def literal_output(argv: list[str], stdin: str | None, places: Places | None = None) -> str | None:
    """What this stage prints given `stdin` (None: the stage is the start), or None when not literal.

    `argv` is expanded already (no unknown part); `places` answers `pwd`, `whoami`, `mktemp`, `find` and `ls`.
    """
    if not argv:
        return None
    name, args = os.path.basename(argv[0]), argv[1:]
    if name == "echo" and stdin is None:
        escapes = any(a.startswith("-") and "e" in a for a in args)
        text = " ".join(a for a in args if not (a.startswith("-") and set(a[1:]) <= set("neE"))) + "\n"
        return unescape(text) if escapes else text
    if name == "printf" and stdin is None and args:
        return unescape(args[0].replace("%s", " ".join(args[1:])) if len(args) > 1 else args[0])
    if name == "cat" and not args:
        return stdin
    if places is not None and stdin is None and (computed := _computed(name, args, places)) is not None:
        return computed
    if stdin is None:
        return None
    if name in ("base64", "base32") and {"-d", "--decode", "-D"} & set(args):
        try:
            decode = base64.b64decode if name == "base64" else base64.b32decode
            return decode("".join(stdin.split())).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            return None
    if name == "rev":
        return "\n".join(line[::-1] for line in stdin.splitlines())
    if name == "xxd" and "-r" in args and "-p" in args:
        try:
            return bytes.fromhex("".join(stdin.split())).decode("utf-8", "replace")
        except ValueError:
            return None
    return None


def _computed(name: str, args: list[str], places: Places) -> str | None:
    """Commands whose output the policy can predict: where they point is what matters, not the exact text."""
    operands = [a for a in args if not a.startswith("-")]
    if name == "pwd":
        return str(places.cwd) + "\n" if places.cwd_known else None
    if name == "whoami" or (name == "id" and "-un" in args):
        return (places.value("USER") or "") + "\n"
    if name == "mktemp":
        folder = next((a.split("=", 1)[1] for a in args if a.startswith("--tmpdir=")), "/tmp")
        template = operands[-1] if operands else "tmp.XXXXXXXXXX"
        return os.path.join(folder, template.replace("X", "0")) + "\n"
    if name in ("dirname", "basename", "realpath", "readlink") and operands:
        path = operands[0] if name in ("dirname", "basename") else str(places.target(operands[0]).path)
        return {"dirname": os.path.dirname, "basename": os.path.basename}.get(name, str)(path) + "\n"
    if name == "find":  # the paths below its roots
        roots = args[: next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))] or ["."]
        return " ".join(entries_below(r, len(roots) < len(args)) for r in roots) + "\n"
    if name == "ls":
        return " ".join(entries_below(r, True) for r in operands or ["."]) + "\n"
    return None


def unescape(text: str) -> str:
    """Backslash escapes as `echo -e`, `printf` and `$'...'` decode them."""
    try:
        return codecs.decode(text, "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text
