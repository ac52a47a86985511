"""The command policy of code_run: catastrophic commands are refused, dangerous ones asked, the rest allowed.

Bash is prepared (shell_lex: here-documents, `[[ ]]`, `case`, `$'...'`) and parsed with bashlex, a port of
bash's grammar; what still does not parse is read statement by statement with a plain tokenizer. The scan
follows `eval`, `bash -c`/`sh -c`, `xargs`, `find -exec`, `$(...)`, pipes into a shell, wrappers (`sudo`,
`env`, `busybox`), aliases, functions, loops, literal base64 payloads, scripts written and then run by the
same code, one-liners of other interpreters (other_code) and Python (python_scan, with `ast`).

A value it cannot know (a variable from the environment, output read at run time) is unknown: a command word
or a path that is not a literal asks, rather than allows, when it could reach a delete, a move or a write
outside the workspace. It is an accident guard, not a boundary: code computed at run time, programs run from
files it does not read, and any determined attempt get past it. The sandbox (--sandbox) is the boundary.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from tools.guard import other_code, python_scan
from tools.guard.places import UNKNOWN, Places, entries_below
from tools.guard.rules import FIND_FILTERS, RULES, check_argv, check_delete, check_write, rule_name
from tools.guard.scanner import ALLOW, ASK, REFUSE, Decision, worst
from tools.guard.shell_fields import positional
from tools.guard.shell_lex import prepare
from tools.guard.shell_walk import PYTHONS, SHELLS, Walker, readable_script, script_kind
from tools.guard.shell_words import WRAPPERS, Fallback, dash_c, dash_c_args, peel, skip_options, xargs_argv

__all__ = ["ALLOW", "ASK", "REFUSE", "Decision", "Scan", "check_script", "scan_script", "worst"]

_FORK_BOMB = re.compile(r"(?P<n>[\w:.]+)\s*\(\s*\)\s*\{[^}]*?(?P=n)\s*\|\s*(?P=n)\s*&")
_DELETERS = {"rm", "unlink", "rmdir", "shred"}
_PRIVILEGED = {"sudo", "doas", "su", "pkexec"}
_ASSIGNERS = {"export", "local", "declare", "typeset", "readonly"}
_EXEC_ENDS = {";", "+"}
_ALL_ARGUMENTS = re.compile(r"\$\{?(?:[@*1-9]|\w+\[[@*]\])\}?")
"""`$@`, `$1`, `${cmd[@]}` as a command word: a command and its arguments given from elsewhere."""
MAX_DEPTH = 8
MAX_SCRIPT_FILE = 256 * 1024
"""Scripts run from a file in the workspace are read and checked up to this size."""


def check_script(script: str, kind: str, *, workspace: Path, home: Path, cwd: Path | None = None,
                 ga_home: Path | None = None) -> Decision:
    """Decide on a code_run script (kind: bash or python); the most severe finding wins."""
    return worst(scan_script(script, kind, workspace=workspace, home=home, cwd=cwd, ga_home=ga_home))


def scan_script(script: str, kind: str, *, workspace: Path, home: Path, cwd: Path | None = None,
                ga_home: Path | None = None) -> list[Decision]:
    """Every finding (ask or refuse) in the script, in the order met."""
    scan = Scan(Places(workspace=workspace, home=home, cwd=cwd or workspace, ga_home=ga_home))
    if kind == "python":
        scan.python(script)
    else:
        scan.bash(script)
    return scan.found


@dataclass
class Scan:
    """A Scanner (scanner.py): walks the code and collects the findings."""

    places: Places
    found: list[Decision] = field(default_factory=list)
    depth: int = 0
    command: str = ""
    """The simple command being checked: findings carry it, policy.json's allow_commands match it."""
    aliases: dict[str, list[str]] = field(default_factory=dict)
    functions: dict[str, tuple[Walker, object]] = field(default_factory=dict)
    called: set[str] = field(default_factory=set)
    files: dict[Path, str] = field(default_factory=dict)
    """Scripts this code wrote with literal content, by path: checked when it runs them."""

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
        if _FORK_BOMB.search(script):
            self.flag(REFUSE, "fork-bomb", "the script defines a function that pipes into itself in the background")
        import bashlex  # a quarter of a second of start-up that a run without a command never needs

        try:
            prepared = prepare(script)
            try:
                Walker(self, prepared).walk_all(bashlex.parse(prepared.text))
            except Exception:  # bashlex lacks some grammar still: statement by statement
                for statement in prepared.statements:
                    try:
                        trees = bashlex.parse(statement)
                    except Exception:
                        Fallback(self).walk(statement)
                        continue
                    Walker(self, prepared.__class__(text=statement, heredocs=prepared.heredocs)).walk_all(trees)
        finally:
            self.depth -= 1

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
        if name == "eval":
            self.bash(" ".join(args))
        elif name in SHELLS or name in ("source", "."):
            self._shell(name, args)
        elif PYTHONS.match(name):
            self._python(args)
        elif name == "xargs":
            self._xargs(argv, feed)
        elif name in other_code.INTERPRETERS:
            other_code.check(name, args, self, self.command)
        elif name in ("cd", "pushd", "popd"):
            self._cd(name, args)
        elif name == "set":
            self._set(args)
        elif name == "read":
            for var in skip_options(args, {"-p", "-d", "-n", "-N", "-t", "-u", "-a", "-i"}, "read"):
                self.places.variables[var] = UNKNOWN
        elif name in _ASSIGNERS:
            for word in (a for a in args if "=" in a and not a.startswith("-")):
                self.places.assign(*word.split("=", 1))
        elif name == "alias":
            for word in (a for a in args if "=" in a):
                alias, value = word.split("=", 1)
                self.aliases[alias] = shlex.split(value) or [""]
        else:
            if name == "find":
                self._find_exec(args)
            if "/" in argv[0] and rule_name(argv[0]) not in RULES:
                self._script_file(argv[0], "bash")  # ./build.sh
            check_argv(argv, self.places, self.flag)

    def delete(self, path: str, *, recursive: bool, command: str, selective: bool = False) -> None:
        self.command = command
        target = self.places.target(path, selective=selective)
        check_delete(target, recursive=recursive, command=command, flag=self.flag)

    def write(self, path: str, command: str, *, strict: bool = True) -> None:
        self.command = command
        check_write(path, self.places, command, self.flag, strict=strict)

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
        if word.split() != [word]:  # `$cmd` or `${cmd[@]}` holding several words
            try:
                return [*shlex.split(word), *argv[1:]]
            except ValueError:
                return [*word.split(), *argv[1:]]
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
            self._with_positional(rest, lambda: self.bash(script))
        elif name in ("source", ".") or [a for a in args if not a.startswith("-")]:
            operands = [a for a in args if not a.startswith("-")]
            if operands:  # the file is read with its arguments as $1, $2...: `bash run.sh in.csv out.txt`
                self._with_positional(operands, lambda: self._script_file(operands[0], "bash"))

    def _python(self, args: list[str]) -> None:
        code = dash_c(args)
        if code is not None:
            self.python(code)
        elif args[:2] == ["-m", "pip"]:
            check_argv(["pip", *args[2:]], self.places, self.flag)
        else:
            operands = skip_options(args, {"-W", "-X", "-Q", "-m", "-c"}, "python")
            if operands and operands[0] != "-" and "-m" not in args:
                self._script_file(operands[0], "python")

    def _script_file(self, word: str, kind: str) -> None:
        """A script this code wrote, or one in the workspace, is checked like inline code."""
        target = self.places.target(word)
        if target.unknown:
            return
        content = self.files.get(target.path)
        if content is None and target.place in ("inside", "temp"):
            content = readable_script(target.path, MAX_SCRIPT_FILE)
        kind = script_kind(content or "", kind)
        if content and kind:
            self.python(content) if kind == "python" else self.bash(content)

    def _with_positional(self, words: list[str], check: object) -> None:
        variables = self.places.variables
        saved = dict(variables)
        variables.update({str(i): w for i, w in enumerate(words[:10])})
        variables.update({"@": " ".join(words[1:]), "*": " ".join(words[1:])})
        try:
            check()
        finally:
            variables.clear()
            variables.update(saved)

    def _set(self, args: list[str]) -> None:
        """`set -- a b c` gives the positional parameters, which "$@" then runs or passes."""
        if (values := positional(args, self.places.expand, UNKNOWN)) is not None:
            self.places.variables.update(values)

    def _cd(self, name: str, args: list[str]) -> None:
        places = self.places
        operands = [a for a in args if not a.startswith("-") or a == "-"]
        if name == "popd" or operands[:1] == ["-"]:
            previous = places.value("OLDPWD")
            places.variables["OLDPWD"] = str(places.cwd)
            if previous is None:
                places.cwd_known = False
            else:
                places.cwd = Path(previous)
            return
        target = places.target(operands[0] if operands else "~")
        places.variables["OLDPWD"] = str(places.cwd) if places.cwd_known else UNKNOWN
        places.cwd, places.cwd_known = target.path, not target.unknown

    def _find_exec(self, args: list[str]) -> None:
        """`find ROOT ... -exec CMD {} ;`: CMD is checked with {} standing for what lies below ROOT."""
        roots = args[: next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))] or ["."]
        selective = bool(FIND_FILTERS & set(args))
        i = 0
        while i < len(args):
            if args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((j for j in range(i + 1, len(args)) if args[j] in _EXEC_ENDS), len(args))
                inner = args[i + 1:end]
                if inner and os.path.basename(inner[0]) not in _DELETERS:  # rm/shred: the find rule judges them
                    for root in roots:  # bash expanded the root (`find ~`) before find passes it on
                        target = self.places.target(root)
                        found = entries_below(root if target.unknown else str(target.path), selective)
                        self.argv([found if a == "{}" else a.replace("{}", found) for a in inner])
                i = end
            i += 1

    def _xargs(self, argv: list[str], feed: str | list[tuple[str, bool]] | None) -> None:
        inner, known = xargs_argv(argv, feed if isinstance(feed, str) else None)
        deleter = os.path.basename((peel(inner) or ["echo"])[0])
        if not known and deleter in _DELETERS:
            command = " ".join(argv)[:200]
            if isinstance(feed, list):  # `find ROOT ... | xargs rm`: entries below ROOT
                for root, selective in feed:
                    self.delete(root, recursive=True, command=command, selective=selective)
            else:
                self.command = command
                self.flag(ASK, "xargs-delete-unknown", f"`{command}` feeds {deleter} paths read from its input, "
                          "which the policy cannot see; list them first, then delete literal paths")
        self.argv(inner)

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
            argv = skip_options(argv[1:], WRAPPERS[name], name)
        return argv
