"""The command policy of code_run: catastrophic commands are refused, dangerous ones asked, the rest allowed.

Bash is parsed with bashlex (a port of bash's own grammar), falling back to a plain tokenizer for the
constructs it does not know (shell_words.py). The scan sees through `eval`, `bash -c`/`sh -c`, `xargs`,
`$(...)` and backticks, wrappers (`sudo`, `env`, `busybox`), pipes into a shell, literal base64 payloads and
`python -c`; Python scripts are read with `ast` (python_scan.py). The rules live in rules.py.

A static policy only sees what is written down: a path computed at run time, a script downloaded
or generated and then run, another interpreter (perl -e, node -e) — none of it. That is what the
sandbox (--sandbox) is for.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import bashlex

from tools.guard import python_scan
from tools.guard.rules import FIND_FILTERS, check_argv, check_delete, check_write
from tools.guard.scanner import ALLOW, ASK, REFUSE, Decision, worst
from tools.guard.shell_words import WRAPPERS, Fallback, Places, dash_c, literal_output, peel, skip_options, xargs_argv

__all__ = ["ALLOW", "ASK", "REFUSE", "Decision", "Scan", "check_script", "scan_script", "worst"]

_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash"}
_PYTHONS = re.compile(r"^python(\d+(\.\d+)?)?$")
_DOWNLOADERS = {"curl", "wget", "fetch", "aria2c"}
_DECODERS = {"base64", "base32", "xxd", "openssl", "gunzip", "zcat", "uudecode"}
_FORK_BOMB = re.compile(r"(?P<n>[\w:.]+)\s*\(\s*\)\s*\{[^}]*?(?P=n)\s*\|\s*(?P=n)\s*&")
_DELETERS = {"rm", "unlink", "rmdir", "shred"}
_LISTERS = {"find", "git"}
"""Commands whose output is paths below their operands (find ROOT..., git ls-files)."""
_FILTERS = {"grep", "egrep", "fgrep", "sort", "uniq", "head", "tail", "cat"}
_PRIVILEGED = {"sudo", "doas", "su", "pkexec"}
MAX_DEPTH = 8


def check_script(script: str, kind: str, *, workspace: Path, home: Path, cwd: Path | None = None) -> Decision:
    """Decide on a code_run script (kind: bash or python); the most severe finding wins."""
    return worst(scan_script(script, kind, workspace=workspace, home=home, cwd=cwd))


def scan_script(script: str, kind: str, *, workspace: Path, home: Path, cwd: Path | None = None) -> list[Decision]:
    """Every finding (ask or refuse) in the script, in the order met."""
    scan = Scan(Places(workspace=workspace, home=home, cwd=cwd or workspace))
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

    def flag(self, verdict: str, rule: str, reason: str) -> None:
        self.found.append(Decision(verdict=verdict, rule=rule, reason=reason))

    def python(self, source: str) -> None:
        if self._deeper("python"):
            python_scan.check(source, self)
            self.depth -= 1

    def bash(self, script: str) -> None:
        if not self._deeper("bash"):
            return
        if _FORK_BOMB.search(script):
            self.flag(REFUSE, "fork-bomb", "the script defines a function that pipes into itself in the background")
        try:
            self._parse_and_walk(script)
        finally:
            self.depth -= 1

    def argv(self, argv: list[str], feed: str | list[tuple[str, bool]] | None = None) -> None:
        """One simple command, after wrappers (sudo, env, busybox...) are peeled off. `feed` is what its stdin
        holds, for xargs: the literal text, the roots a `find` lists below (with: only some entries), or None."""
        argv = self._unwrap([a for a in argv if a is not None])
        if not argv:
            return
        name, args = os.path.basename(argv[0]), argv[1:]
        if name == "eval":
            self.bash(" ".join(args))
        elif name in _SHELLS and dash_c(args) is not None:
            self.bash(dash_c(args) or "")
        elif _PYTHONS.match(name) and dash_c(args) is not None:
            self.python(dash_c(args) or "")
        elif _PYTHONS.match(name) and args[:2] == ["-m", "pip"]:
            check_argv(["pip", *args[2:]], self.places, self.flag)
        elif name == "xargs":
            self._xargs(argv, feed)
        elif name == "cd" and args and not args[0].startswith("-"):
            target = self.places.target(args[0])
            if not target.unknown:
                self.places.cwd = target.path
        else:
            check_argv(argv, self.places, self.flag)

    def delete(self, path: str, *, recursive: bool, command: str, selective: bool = False) -> None:
        target = self.places.target(path, selective=selective)
        check_delete(target, recursive=recursive, command=command, flag=self.flag)

    def write(self, path: str, command: str) -> None:
        check_write(path, self.places, command, self.flag)

    def _xargs(self, argv: list[str], feed: str | list[tuple[str, bool]] | None) -> None:
        inner, known = xargs_argv(argv, feed if isinstance(feed, str) else None)
        deleter = os.path.basename((peel(inner) or ["echo"])[0])
        if not known and deleter in _DELETERS:
            command = " ".join(argv)[:200]
            if isinstance(feed, list):  # `find ROOT ... | xargs rm`: entries below ROOT
                for root, selective in feed:
                    self.delete(root, recursive=True, command=command, selective=selective)
            else:
                self.flag(ASK, "xargs-delete-unknown", f"`{command}` feeds {deleter} paths read from its input, "
                          "which the policy cannot see; list them first, then delete literal paths")
        self.argv(inner)

    def _deeper(self, what: str) -> bool:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.depth -= 1
            self.flag(ASK, "opaque-script", f"{what} code nested more than {MAX_DEPTH} levels deep")
            return False
        return True

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

    def _parse_and_walk(self, script: str) -> None:
        try:
            trees = bashlex.parse(script)
        except Exception:  # bashlex lacks some grammar ([[ ]], $(( )), case): parse line by line
            for line in script.splitlines():
                try:
                    trees = bashlex.parse(line)
                except Exception:
                    Fallback(self).walk(line)
                    continue
                self._walk_all(trees, line)
            return
        self._walk_all(trees, script)

    def _walk_all(self, trees: list, src: str) -> None:
        walker = _Walker(self, src)
        for tree in trees:
            walker.walk(tree)


class _Walker:
    """Walks bashlex trees of one source string; positions in the nodes index that string."""

    def __init__(self, scan: Scan, src: str):
        self.scan, self.src = scan, src
        self.fetched = False
        """A $(...) or <(...) read so far runs a downloader."""

    def walk(self, node: object) -> None:
        kind = getattr(node, "kind", "")
        if kind == "command":
            self._command(node)
        elif kind == "pipeline":
            self._pipeline([p for p in node.parts if p.kind != "pipe"])
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.walk(node.command)
        else:
            for child in (getattr(node, "parts", None) or getattr(node, "list", None) or []):
                self.walk(child)

    def text(self, node: object) -> str:
        return self.src[node.pos[0]: node.pos[1]]

    def word(self, node: object) -> str:
        """The word as bash would pass it, with static $(...) output filled in and others left as ${UNKNOWN}."""
        value = node.word
        for part in getattr(node, "parts", None) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                self.walk(part.command)
                self.fetched |= bool(_DOWNLOADERS & set(re.findall(r"[\w.-]+", self.text(part))))
                output = self.static_output(part.command)
                value = value.replace(self.text(part), "${UNKNOWN}" if output is None else output.strip(), 1)
        return value

    def argv(self, node: object) -> tuple[list[str], dict[str, str]]:
        """The words of a command and its NAME=value assignments."""
        words, assigned = [], {}
        for part in node.parts:
            if part.kind == "word":
                words.append(self.word(part))
            elif part.kind == "assignment":
                name, _, value = self.word(part).partition("=")
                assigned[name] = value
            elif part.kind == "redirect":
                self._redirect(part, node)
        return words, assigned

    def _command(self, node: object, feed: str | list[tuple[str, bool]] | None = None) -> None:
        self.fetched = False
        argv, assigned = self.argv(node)
        if not argv:
            self.scan.places.variables.update(assigned)
            return
        name = os.path.basename((peel(argv) or argv)[0])
        if name in _SHELLS | {"eval", "source", "."} or _PYTHONS.match(name):
            if self.fetched:
                self.scan.flag(ASK, "remote-script", f"`{self.text(node)[:200]}` runs code downloaded from the "
                               "network, unseen; download it to a file and read it first")
            for script in self._here_documents(node):
                self.scan.python(script) if _PYTHONS.match(name) else self.scan.bash(script)
        self.scan.argv(argv, feed)

    def _here_documents(self, node: object) -> list[str]:
        """`bash <<EOF ... EOF`, `python - <<'EOF'`, `sh <<< "..."`: code given on stdin."""
        scripts = []
        for part in node.parts:
            if part.kind != "redirect":
                continue
            if part.type == "<<<" and getattr(part.output, "kind", "") == "word":
                scripts.append(self.word(part.output))
            elif getattr(part, "heredoc", None) is not None:
                scripts.append(part.heredoc.value.rpartition("\n")[0])
        return scripts

    def _redirect(self, node: object, command: object) -> None:
        target = node.output
        if node.type in (">", ">>", ">|", "&>", "&>>") and getattr(target, "kind", "") == "word":
            self.scan.write(self.word(target), self.text(command)[:200])

    def _pipeline(self, stages: list) -> None:
        for i, stage in enumerate(stages):
            if stage.kind != "command":
                self.walk(stage)
                continue
            upstream = self.static_output_of(stages[:i]) if i else None
            self._command(stage, upstream if upstream is not None or not i else self._listed(stages[:i]))
            if i:
                self._piped_into(stage, stages[:i], upstream)

    def _piped_into(self, stage: object, sources: list, upstream: str | None) -> None:
        """`... | sh`: the script is whatever the earlier stages print."""
        argv = peel([w.word for w in stage.parts if w.kind == "word"])
        name = os.path.basename(argv[0]) if argv else ""
        runs_stdin = (name in _SHELLS and dash_c(argv[1:]) is None and not _operands(argv[1:])) or (
            _PYTHONS.match(name) and (not argv[1:] or argv[1:] == ["-"]))
        if not runs_stdin:
            return
        names = {os.path.basename(w.word) for s in sources for w in getattr(s, "parts", []) if w.kind == "word"}
        if names & _DOWNLOADERS:
            self.scan.flag(ASK, "remote-script", f"`{self.text(stage)}` runs a script downloaded from the network, "
                           "unseen; download it to a file and read it first")
        elif upstream is not None:
            self.scan.python(upstream) if _PYTHONS.match(name) else self.scan.bash(upstream)
        elif names & _DECODERS:
            self.scan.flag(ASK, "opaque-script", f"`{name}` runs a decoded script the policy cannot read")

    def _listed(self, stages: list) -> list[tuple[str, bool]] | None:
        """`find ROOT... [| grep ...]`, `git ls-files`: the roots the paths printed lie below, else None."""
        argvs = [peel([p.word for p in s.parts if p.kind == "word"]) if s.kind == "command" else [] for s in stages]
        names = [os.path.basename(a[0]) if a else "" for a in argvs]
        if not names or names[0] not in _LISTERS or not set(names[1:]) <= _FILTERS:
            return None
        args, filtered = argvs[0][1:], len(names) > 1
        if names[0] == "git":
            return [(".", True)] if args[:1] == ["ls-files"] else None
        roots = args[: next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))]
        return [(root, filtered or bool(FIND_FILTERS & set(args))) for root in roots or ["."]]

    def static_output(self, node: object) -> str | None:
        if node.kind == "pipeline":
            return self.static_output_of([p for p in node.parts if p.kind != "pipe"])
        if node.kind == "command":
            return self.static_output_of([node])
        return None

    def static_output_of(self, stages: list) -> str | None:
        """What `echo X | base64 -d | rev` prints, when it is all literal; None otherwise."""
        output: str | None = None
        for stage in stages:
            if stage.kind != "command":
                return None
            argv = [p.word for p in stage.parts if p.kind == "word"]
            here = [p.output.word for p in stage.parts if p.kind == "redirect" and p.type == "<<<"]
            output = literal_output(argv, here[0] + "\n" if here else output)
            if output is None:
                return None
        return output


def _operands(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]
