"""code_run's command policy, an accident list: catastrophic commands are refused, dangerous ones asked, the rest run.

Bash is read with tree-sitter-bash: each simple command that would run (in lists, pipelines, loops, functions, `$(...)`,
`sh -c '...'`), its words as bash makes them (`\\rm`, `r''m`, `"rm"`, `command rm`, `env rm`, `sudo rm` read `rm`), is
held against rules.py; Python is read for its literal forms (python_forms.py). What only run time knows passes, and so
do `eval`, base64, `$IFS`, indirection through variables and other interpreters' one-liners: the sandbox's job."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.guard import python_forms
from tools.guard.rules import ALLOW, ASK, REFUSE, RULES, UNKNOWN, Decision, Places, check_write, rule_name, worst

__all__ = ["ALLOW", "ASK", "REFUSE", "Decision", "check_script", "scan_script", "worst"]

Node = Any  # a tree-sitter node (tree_sitter is imported when a command is first checked)
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash"}
PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
DOWNLOADERS = {"curl", "wget"}
WRAPPERS = {"sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}, "doas": {"-u", "-C"}, "nice": {"-n"},
            "env": {"-u", "-C", "-S"}, "timeout": {"-s", "-k"}, "ionice": {"-c", "-n"}, "pkexec": {"--user"},
            **{name: set() for name in ("nohup", "time", "command", "builtin", "exec", "setsid", "busybox", "toybox")}}
"""Commands that run the command named after their options: `sudo env X=1 rm -rf /` is `rm -rf /`."""
PRIVILEGED = {"sudo", "doas", "pkexec", "su"}
_FORK_BOMB = re.compile(r"(?P<n>[\w:.]+)\s*\(\s*\)\s*\{[^}]*?(?P=n)\s*\|\s*(?P=n)\s*&")
_FETCHED = re.compile(r"(\$\(|<\(|`)\s*(curl|wget)\b")
_WRITES = {">", ">>", ">|", "&>", "&>>"}
_SCANNER_BUG = re.compile(r"(?<=\{)(\d*(?:\.\.\d*)?)[^\x00-\xff]")
"""tree-sitter-bash 0.25.1 can crash on `{` and a character above U+00FF (its issue 337): that one is read as `_`."""
MAX_DEPTH = 8


def check_script(script: str, kind: str, *, workspace: Path, home: Path, cwd: Path | None = None,
                 ga_home: Path | None = None) -> Decision:
    """Decide on a code_run script (kind: bash or python); the most severe finding wins."""
    return worst(scan_script(script, kind, workspace=workspace, home=home, cwd=cwd, ga_home=ga_home))


def scan_script(script: str, kind: str, *, workspace: Path, home: Path, cwd: Path | None = None,
                ga_home: Path | None = None) -> list[Decision]:
    """Every finding (ask or refuse) in the script, in the order met."""
    scan = Scan(Places(workspace=workspace, home=home, cwd=cwd or workspace, ga_home=ga_home or home / ".ga"))
    scan.python(script) if kind == "python" else scan.bash(script)
    return scan.found


@functools.cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse(script: str) -> Node:
    script = _SCANNER_BUG.sub(lambda m: m[1] + "_", script)
    return _parser().parse(script.encode("utf-8", "surrogateescape")).root_node


def text(node: Node) -> str:
    return node.text.decode("utf-8", "replace")


def dash_c(args: list[str]) -> str | None:
    """The code of `sh -c CODE`, `bash -lc CODE`, `python -c CODE`, or None."""
    for i, a in enumerate(args):
        if not a.startswith("-") or a.startswith("--"):
            return None
        if "c" in a[1:]:
            return args[i + 1] if i + 1 < len(args) else None
    return None


def peel(argv: list[str]) -> tuple[list[str], set[str]]:
    """The command a chain of wrappers runs, and the wrappers: `sudo env X=1 rm -rf /` -> `rm -rf /`, {sudo, env}."""
    seen: set[str] = set()
    while argv and (name := os.path.basename(argv[0])) in (*WRAPPERS, "su"):
        seen.add(name)
        if name == "su" or (name == "command" and {"-v", "-V"} & set(argv[1:])):
            code = dash_c(argv[1:]) if name == "su" else None
            return (["sh", "-c", code] if code else []), seen
        args, i = argv[1:], 0
        while i < len(args) and (args[i].startswith("-") or (name == "env" and "=" in args[i])):
            i += 2 if args[i] in WRAPPERS[name] else 1
        argv = args[i + (name == "timeout"):]  # timeout's duration
    return argv, seen


@dataclass
class Scan:
    """Walks the code and collects the findings; the rules report through flag, delete and write."""

    places: Places
    found: list[Decision] = field(default_factory=list)
    command: str = ""
    """The simple command being checked: findings carry it, policy.json's allow_commands match it."""
    depth: int = 0

    def flag(self, verdict: str, rule: str, reason: str) -> None:
        self.found.append(Decision(verdict=verdict, rule=rule, reason=reason, command=self.command))

    def python(self, source: str) -> None:
        if self.depth < MAX_DEPTH:
            self.depth += 1
            python_forms.check(source, self)
            self.depth -= 1

    def bash(self, script: str) -> None:
        if self.depth >= MAX_DEPTH:
            return
        self.depth += 1
        if _FORK_BOMB.search(script):
            self.command = script[:200]
            self.flag(REFUSE, "fork-bomb", "the script defines a function that pipes into itself in the background")
        self._walk(parse(script))
        self.depth -= 1

    def argv(self, argv: list[str], node: Node | None = None) -> None:
        """One simple command, its words as bash makes them."""
        self.command = " ".join(argv).replace(UNKNOWN, "$?")[:200]
        argv, wrappers = peel(argv)
        if wrappers & PRIVILEGED:
            self.flag(ASK, "privilege", f"`{self.command}` runs with another user's (root's) rights")
        name = rule_name(argv[0]) if argv else ""
        if (name in SHELLS or PYTHON.match(name)) and node is not None and _FETCHED.search(text(node)):
            self.flag(ASK, "remote-script", f"`{self.command}` runs code downloaded from the network, unseen; "
                      "download it to a file and read it first")
        code = dash_c(argv[1:]) if name in SHELLS or PYTHON.match(name) else None
        if code is not None:
            self.python(code) if PYTHON.match(name) else self.bash(code)
        elif name in ("cd", "pushd"):
            target = argv[1] if len(argv) > 1 else "~"
            found = self.places.locate(target) if target != "-" else None
            self.places.cwd = found[0] if found else None
        elif name in RULES:
            RULES[name](self, argv[1:])

    def _walk(self, node: Node) -> None:
        kind = node.type
        if kind in ("subshell", "command_substitution", "process_substitution"):  # a child shell: its cd stays there
            saved = self.places.cwd
            for child in node.named_children:
                self._walk(child)
            self.places.cwd = saved
            return
        if kind == "command":
            self.argv(self._words(node), node)
        elif kind == "file_redirect":
            self._redirect(node)
        elif kind == "pipeline":
            self._pipeline(node)
        quoted = kind == "heredoc_redirect" and any(q in text(c) for c in node.children if c.type == "heredoc_start"
                                                    for q in "'\"\\")
        for child in node.named_children:
            if not (quoted and child.type == "heredoc_body"):  # a quoted here-document is data
                self._walk(child)

    def _words(self, node: Node) -> list[str]:
        """A simple command's words (a redirected one's too; not its assignments nor redirections), or none."""
        node = (node.child_by_field_name("body") or node) if node.type == "redirected_statement" else node
        parts = [c for c in node.named_children if c.type not in ("variable_assignment", "comment")
                 and not c.type.endswith("redirect")] if node.type == "command" else []
        return [self.word(c.named_children[0] if c.type == "command_name" and c.named_children else c) for c in parts]

    def word(self, node: Node) -> str:
        """The word bash makes of it: quotes removed, `$HOME` and `$PWD` put in, anything else only run time
        knows as UNKNOWN."""
        kind = node.type
        if not node.is_named or kind in ("number", "brace_expression"):
            return text(node)
        if kind == "word":
            return re.sub(r"\\(.)", r"\1", text(node).replace("\\\n", ""), flags=re.S)
        if kind == "raw_string":
            return text(node)[1:-1]
        if kind == "ansi_c_string":
            return text(node)[2:-1]
        if kind == "concatenation":
            return "".join(self.word(c) for c in node.children)
        if kind == "string":
            return "".join(re.sub(r"\\([$`\"\\\n])", r"\1", text(c)) if c.type == "string_content" else self.word(c)
                           for c in node.named_children)
        if kind in ("simple_expansion", "expansion"):
            name = re.match(r"\$\{?(\w*)", text(node))
            known = {"HOME": str(self.places.home), "PWD": self.places.cwd and str(self.places.cwd)}
            return known.get(name[1] if name else "") or UNKNOWN
        return UNKNOWN

    def _redirect(self, node: Node) -> None:
        op = next((c.type for c in node.children if not c.is_named), "")
        target = next((c for c in node.named_children if c.type != "file_descriptor"), None)
        if op in _WRITES and target is not None:
            self.command = text(node.parent)[:200]
            check_write(self, self.word(target))
            if op in (">", ">|", "&>") and (body := node.parent.child_by_field_name("body")) is not None:  # SC2094
                stages = body.named_children if body.type == "pipeline" else [body]
                argvs, name = [peel(self._words(s))[0] for s in stages], self.word(target)
                read = {self.places.locate(w) for a in argvs if a and a[0] not in ("echo", "printf") for w in a[1:]}
                sed = [text(s) + f" {name}" * (name not in a) for s, a in zip(stages, argvs, strict=True)
                       if a[:1] == ["sed"] and any(w[:2] == "-i" or w == "--in-place" for w in a)]  # edits in place
                if (found := self.places.locate(name)) in read and found and not found[0].is_dir():
                    self.flag(ASK, "clobber", f"`{self.command}` would empty {found[0].name} before reading it (the "
                              "shell opens the output first): " + (f"sed -i edits a file in place, so run it alone: "
                              f"{sed[0]}" if sed else f"write to another file, then mv it over {found[0].name}"))

    def _pipeline(self, node: Node) -> None:
        """`curl ... | sh`: a shell or Python fed what a downloader prints."""
        argvs = [peel(self._words(stage))[0] or [""] for stage in node.named_children]
        for i, (word, *args) in enumerate(argvs):
            name = rule_name(word)
            reads = (name in SHELLS and dash_c(args) is None and all(a[:1] == "-" for a in args)) or \
                (PYTHON.match(name) and args in ([], ["-"]))
            if reads and any(rule_name(a[0]) in DOWNLOADERS for a in argvs[:i]):
                self.command = text(node)[:200]
                self.flag(ASK, "remote-script", f"`{self.command}` runs a script downloaded from the network, "
                          "unseen; download it to a file and read it first")
