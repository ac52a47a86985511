"""The command policy of code_run: catastrophic commands are refused, dangerous ones asked, the rest allowed.

The policy is the approval and warning layer; the sandbox is the boundary. Bash is read with tree-sitter-bash
(shell_walk), Python with `ast` (python_scan), one-liners of other interpreters by their calls (other_code); what
`cd`, `set --` and a function's arguments change for the commands after them is kept by shell_state. The
scan follows code into code: `eval`, `bash -c` (a shell reached through a variable too: `$BASH -c`), `xargs`,
`find -exec`, `$(...)`, pipes into a shell, wrappers (`sudo`, `env`, `busybox`), aliases, functions, loops,
literal base64 payloads, command strings that other programs run (`trap`, `vim -c '!...'`, `git -c
alias.x='!...'`), scripts and build files (`make`, `npm run`) that the same code wrote or the workspace holds, and
paths through symbolic links.

A value it cannot know (a variable from the environment, output read at run time) is unknown: a command word or
a path that is not a literal asks, rather than allows, when it could reach a delete, a move or a write outside
the workspace; so does a script the parser cannot read. Code computed at run time, programs run from files it
does not read, and any determined attempt get past it: only the sandbox (on by default) is a boundary.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.guard import other_code, python_scan
from tools.guard.links import LinkedPlaces
from tools.guard.places import UNKNOWN
from tools.guard.rules import RULES, check_argv, check_delete, check_write, rule_name
from tools.guard.rules_files import operands
from tools.guard.scanner import ALLOW, ASK, REFUSE, Decision, worst
from tools.guard.script_files import build_steps, read_file, script_kind
from tools.guard.shell_fields import parse
from tools.guard.shell_state import change_folder, set_positional, with_positional
from tools.guard.shell_walk import Walker
from tools.guard.shell_words import (
    PYTHONS,
    SHELLS,
    WRAPPERS,
    command_strings,
    dash_c,
    dash_c_args,
    find_exec,
    skip_options,
    xargs,
)

__all__ = ["ALLOW", "ASK", "REFUSE", "Decision", "Scan", "check_script", "scan_script", "worst"]

_FORK_BOMB = re.compile(r"(?P<n>[\w:.]+)\s*\(\s*\)\s*\{[^}]*?(?P=n)\s*\|\s*(?P=n)\s*&")
_PRIVILEGED = {"sudo", "doas", "su", "pkexec"}
_ALL_ARGUMENTS = re.compile(r"\$\{?(?:[@*1-9]|\w+\[[@*]\])\}?")
"""`$@`, `$1`, `${cmd[@]}` as a command word: a command and its arguments given from elsewhere."""
MAX_DEPTH = 8


def check_script(script: str, kind: str, *, workspace: Path, home: Path, cwd: Path | None = None,
                 ga_home: Path | None = None) -> Decision:
    """Decide on a code_run script (kind: bash or python); the most severe finding wins."""
    return worst(scan_script(script, kind, workspace=workspace, home=home, cwd=cwd, ga_home=ga_home))


def scan_script(script: str, kind: str, *, workspace: Path, home: Path, cwd: Path | None = None,
                ga_home: Path | None = None) -> list[Decision]:
    """Every finding (ask or refuse) in the script, in the order met."""
    scan = Scan(LinkedPlaces(workspace=workspace, home=home, cwd=cwd or workspace, ga_home=ga_home))
    scan.python(script) if kind == "python" else scan.bash(script)
    return scan.found


@dataclass
class Scan:
    """A Scanner (scanner.py): walks the code and collects the findings."""

    places: LinkedPlaces
    found: list[Decision] = field(default_factory=list)
    depth: int = 0
    command: str = ""
    """The simple command being checked: findings carry it, policy.json's allow_commands match it."""
    aliases: dict[str, list[str]] = field(default_factory=dict)
    functions: dict[str, Any] = field(default_factory=dict)
    """Function name -> its body (a tree-sitter node)."""
    called: set[str] = field(default_factory=set)
    files: dict[Path, str] = field(default_factory=dict)
    """Files this code wrote with literal content, by path: read when it runs them."""

    def flag(self, verdict: str, rule: str, reason: str) -> None:
        self.found.append(Decision(verdict=verdict, rule=rule, reason=reason, command=self.command))

    def deeper(self, what: str) -> bool:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.depth -= 1
            self.flag(ASK, "opaque-script", f"{what} code nested more than {MAX_DEPTH} levels deep")
            return False
        return True

    def python(self, source: str) -> None:
        if self.deeper("python"):
            python_scan.check(source, self)
            self.depth -= 1

    def bash(self, script: str) -> None:
        if not self.deeper("bash"):
            return
        try:
            if _FORK_BOMB.search(script):
                self.flag(REFUSE, "fork-bomb", "the script defines a function that pipes into itself in the "
                          "background")
            root, defined, walker = parse(script), set(self.functions), Walker(self)
            walker.walk(root)
            for name in set(self.functions) - defined - self.called:  # never called by name, it may still run
                walker.call(name, [UNKNOWN])  # (`$f`, a trap): checked once
            if root.has_error:
                self._unreadable(root, script)
        finally:
            self.depth -= 1

    def _unreadable(self, root: Any, script: str) -> None:
        node = root  # down to the first token the parser could not place
        while node.children and not node.is_missing:
            node = next((c for c in node.children if c.has_error or c.is_missing or
                         (node.type == "ERROR" and not c.is_named)), node.children[0])
        row = node.start_point[0]
        self.command = line = script.split("\n")[row][:80]
        self.flag(ASK, "unreadable-script", f"the policy cannot parse the script at line {row + 1} (`{line}`), "
                  "so it cannot tell what runs there; fix the syntax or write it more plainly")

    def argv(self, argv: list[str], feed: str | list[tuple[str, bool]] | None = None) -> None:
        """One simple command, after wrappers (sudo, env, busybox...) are peeled off. `feed` is what its stdin
        holds, for xargs: the literal text, the roots a `find` lists below (with: only some entries), or None."""
        argv = [a for a in argv if a is not None]
        self.command = " ".join(argv)[:200]
        argv = self._unwrap(argv)
        if argv:
            argv = self._resolve(argv)
        if not argv:
            return
        name, args = os.path.basename(argv[0]), argv[1:]
        for code in command_strings(name, args) + build_steps(name, args, self.read):
            self.bash(code)
        if name == "eval":
            self.bash(" ".join(args))
        elif name in SHELLS or name in ("source", "."):
            self._shell(name, args)
        elif PYTHONS.match(name):
            self._python(args)
        elif name == "xargs":
            xargs(self, argv, feed)
        elif name in other_code.INTERPRETERS:
            other_code.check(name, args, self, self.command)
        elif name in ("cd", "pushd", "popd"):
            change_folder(self.places, name, args)
        elif name == "set":
            set_positional(self.places, args)
        elif name in ("read", "mapfile", "readarray"):
            for var in skip_options(args, {"-p", "-d", "-n", "-N", "-t", "-u", "-a", "-i", "-C", "-c", "-O", "-s"},
                                    name):
                self.places.variables[var] = UNKNOWN
        elif name == "alias":
            for word in (a for a in args if "=" in a):
                alias, value = word.split("=", 1)
                try:
                    self.aliases[alias] = shlex.split(value) or [""]
                except ValueError:  # an unbalanced quote
                    self.aliases[alias] = value.split() or [""]
        else:
            if name == "find":
                find_exec(self, args)
            if "/" in argv[0] and rule_name(argv[0]) not in RULES:
                self._script_file(argv[0], "bash", args)  # ./build.sh
            check_argv(argv, self.places, self.flag)
            symbolic = any(a == "--symbolic" or re.match(r"-[a-zA-Z]*s", a) for a in args)
            if name == "ln" and symbolic and len(words := operands(args)) == 2:
                self.places.link(*words)  # `ln -s ~ h`: where `h/` leads from now on

    def delete(self, path: str, *, recursive: bool, command: str, selective: bool = False) -> None:
        self.command = command
        target = self.places.target(path, selective=selective)
        check_delete(target, recursive=recursive, command=command, flag=self.flag)

    def write(self, path: str, command: str, *, strict: bool = True) -> None:
        self.command = command
        check_write(path, self.places, command, self.flag, strict=strict)

    def read(self, word: str) -> str | None:
        return read_file(word, self.places, self.files)

    def _resolve(self, argv: list[str]) -> list[str]:
        """The command word as bash finds it: aliases, then expansion; not a literal: judged by its arguments."""
        if argv[0] in self.aliases:
            argv = [*self.aliases[argv[0]], *argv[1:]]
        word = self.places.expand(argv[0])
        if word is None:
            why = f"`{self.command}`: the command is not a literal ({argv[0]!r})"
            if argv[0] != UNKNOWN and (len(argv) == 1 or _ALL_ARGUMENTS.fullmatch(argv[0])):
                # `$CMD` alone, `"$@"`: the whole command comes from elsewhere, its arguments too
                self.flag(ASK, "unknown-command", f"{why}, so what runs is unknown; name the command literally")
            elif dash_c_args(argv[1:]) is not None:  # `$BASH -c CODE`, `${SHELL:-sh} -c CODE`: a shell given code
                self._shell("sh", argv[1:])
            else:
                self._unknown_command(argv, why)
            return []
        if re.search(r"[*?\[]", word):
            folders = [os.path.dirname(word)] if "/" in word else os.environ.get("PATH", "").split(os.pathsep)
            names = sorted({m for f in folders for m in glob.glob(os.path.join(f, os.path.basename(word)))})
            if not names:
                self._unknown_command(argv, f"`{self.command}`: the command is a pattern ({word!r})")
            for match in names:  # `/bin/r?`: each program the pattern may run
                check_argv([match, *argv[1:]], self.places, self.flag)
            return []
        return [word, *argv[1:]]

    def _unknown_command(self, argv: list[str], why: str) -> None:
        """A command the policy cannot name: asks when an argument is a path outside the workspace."""
        for arg in argv[1:]:
            target = self.places.target(arg)
            if arg.startswith("-") or target.unknown:
                continue
            if target.protected or target.place not in ("inside", "temp"):
                self.flag(ASK, "unknown-command", f"{why}, and it is given {target.path}, outside the workspace; "
                          "name the command literally")
                return

    def _shell(self, name: str, args: list[str]) -> None:
        found = dash_c_args(args)
        if found is not None:
            script, rest = found
            with_positional(self.places, rest[1:], rest[0] if rest else name, lambda: self.bash(script))
        elif scripts := [a for a in args if not a.startswith("-")]:  # `bash run.sh in.csv out.txt`: $1, $2 bound
            self._script_file(scripts[0], "bash", scripts[1:])

    def _python(self, args: list[str]) -> None:
        code = dash_c(args)
        if code is not None:
            self.python(code)
        elif args[:2] == ["-m", "pip"]:
            check_argv(["pip", *args[2:]], self.places, self.flag)
        else:
            scripts = skip_options(args, {"-W", "-X", "-Q", "-m", "-c"}, "python")
            if scripts and scripts[0] != "-" and "-m" not in args:
                self._script_file(scripts[0], "python", scripts[1:])

    def _script_file(self, word: str, kind: str, args: list[str]) -> None:
        """A script this code wrote, or one in the workspace, is checked like inline code, with its arguments."""
        content = self.read(word) or ""
        kind = script_kind(content, kind)
        if kind == "python":
            self.python(content)
        elif kind:
            with_positional(self.places, args, word, lambda: self.bash(content))

    def _unwrap(self, argv: list[str]) -> list[str]:
        while argv:
            name = os.path.basename(argv[0])
            if name in _PRIVILEGED:
                self.flag(ASK, "privilege", f"`{' '.join(argv)[:200]}` runs with another user's (root's) rights")
                if name == "su":
                    inner = dash_c(argv[1:])
                    if inner:
                        self.bash(inner)
                    return []
            if name not in WRAPPERS:
                return argv
            for code in command_strings(name, argv[1:]):  # `env -S 'CMD ARGS'`
                self.bash(code)
            argv = skip_options(argv[1:], WRAPPERS[name], name)
            if name == "coproc" and argv[1:2] in (["{"], ["("]):  # `coproc NAME { CMD; }`
                argv = argv[1:]
            argv = argv[1:] if argv[:1] in (["{"], ["("]) else argv
        return argv
