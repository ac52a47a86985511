"""Reading shell words without running anything: where a path points, which command a wrapper runs,
and what a literal pipeline prints (`echo X | base64 -d | rev`).

The command policy uses it to place the paths commands name, to see through `sudo`/`env`/`busybox`,
to read scripts hidden in base64, reversed strings or `printf` escapes, and to see what `xargs` receives.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import os
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tools.guard.scanner import Scanner

UNKNOWN = "${UNKNOWN}"
_VARIABLE = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_]\w*")
_GLOB = re.compile(r"[*?\[]")
_WHOLE_GLOBS = {"*", ".*", "*.*", "**", ".[!.]*", ".??*"}
_KNOWN_VARS = {"HOME": "home", "PWD": "cwd", "TMPDIR": "tmp"}
_TEMP_ROOTS = sorted({Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path(tempfile.gettempdir())})
_RESERVED = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "(", ")",
             "[[", "]]", "case", "esac", "for", "in"}
WRAPPERS = {"sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}, "doas": {"-u", "-C"},
            "env": {"-u", "-C", "-S"}, "nice": {"-n"}, "timeout": {"-s", "-k"}, "ionice": {"-c", "-n"},
            "nohup": set(), "time": set(), "command": set(), "builtin": set(), "exec": set(), "setsid": set(),
            "stdbuf": set(), "chrt": set(), "unbuffer": set(), "pkexec": {"--user"}, "su": {"-c"},
            "busybox": set(), "toybox": set()}
"""Commands that run the command named after their options: `busybox rm -rf /` is `rm -rf /`."""


def normpath(path: str) -> str:
    """os.path.normpath, with a leading `//` (kept by POSIX) collapsed: `//` is `/`."""
    path = os.path.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path


@functools.lru_cache(maxsize=256)
def expand_user(text: str) -> str:
    """`~name/x` as bash expands it (`~root` is /root); an unknown user stays literal."""
    return os.path.expanduser(text)


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
        path = Path(normpath(str(raw if raw.is_absolute() else self.cwd / raw)))
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
        elif text == "~+" or text.startswith("~+/"):
            text = str(self.cwd) + text[2:]
        elif text.startswith("~"):
            text = expand_user(text)
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


def dash_c(args: list[str]) -> str | None:
    """The script of `sh -c SCRIPT` / `bash -lc SCRIPT` / `python -c CODE`, or None."""
    for i, a in enumerate(args):
        if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
            return args[i + 1] if i + 1 < len(args) else ""
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


class Fallback:
    """For lines bashlex cannot parse: split on operators and check each command and substitution."""

    def __init__(self, scan: Scanner):
        self.scan = scan

    def walk(self, line: str) -> None:
        for inner in re.findall(r"\$\(([^()]*)\)|`([^`]*)`", line):
            self.scan.bash(inner[0] or inner[1])
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:  # unbalanced quotes
            tokens = line.split()
        command: list[str] = []
        for i, token in enumerate([*tokens, ";"]):
            if token and set(token) <= set(";&|()<>"):
                if ">" in token and i + 1 < len(tokens):
                    self.scan.write(tokens[i + 1], line[:200])
                while command and command[0] in _RESERVED:
                    command.pop(0)
                self.scan.argv(command)
                command = []
            elif not (i and set(tokens[i - 1]) <= set("<>") and tokens[i - 1]):
                command.append(token)


def literal_output(argv: list[str], stdin: str | None) -> str | None:
    """What this stage prints given `stdin` (None: the stage is the start), or None when not literal."""
    if not argv:
        return None
    name, args = os.path.basename(argv[0]), argv[1:]
    if name == "echo" and stdin is None:
        escapes = any(a.startswith("-") and "e" in a for a in args)
        text = " ".join(a for a in args if not (a.startswith("-") and set(a[1:]) <= set("neE"))) + "\n"
        return _unescape(text) if escapes else text
    if name == "printf" and stdin is None and args:
        return _unescape(args[0].replace("%s", " ".join(args[1:])) if len(args) > 1 else args[0])
    if name == "cat" and not args:
        return stdin
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


def _unescape(text: str) -> str:
    try:
        return codecs.decode(text, "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text
