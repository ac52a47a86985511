"""Bash as tree-sitter-bash parses it, walked to every simple command that would run: in pipelines, lists,
loops, `case`, functions, `$(...)`, `<(...)`, `>(...)`, `[[ ]]`, arithmetic and unquoted here-documents, each
with its words as bash makes them (shell_fields) and its input when the script makes it known (here-documents,
the output of a literal pipeline). shell_scan.Scan decides about each command the walker reports.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from tools.guard.places import UNKNOWN
from tools.guard.rules import FIND_FILTERS
from tools.guard.scanner import ASK
from tools.guard.shell_fields import DOWNLOADERS, Node, Words, text
from tools.guard.shell_state import known, with_positional
from tools.guard.shell_words import PYTHONS, SHELLS, dash_c, literal_output, peel

_DECODERS = {"base64", "base32", "xxd", "openssl", "gunzip", "zcat", "uudecode"}
_LISTERS = {"find", "git"}
"""Commands whose output is paths below their operands (find ROOT..., git ls-files)."""
_FILTERS = {"grep", "egrep", "fgrep", "sort", "uniq", "head", "tail", "cat"}
_STDIN_SHELLS = {*SHELLS, "eval", "source", ".", "at", "batch"}
_WRITES = {">", ">>", ">|", "&>", "&>>", ">&"}
MAX_LOOP_ITEMS = 8
"""A loop body is checked once per item, for this many items at most."""


@dataclass(kw_only=True)
class Simple:
    """One simple command as bash would run it."""

    argv: list[str]
    text: str
    stdin: str | None = None
    """What a here-document or here-string gives it."""
    writes: list[tuple[str, str]] = field(default_factory=list)
    """(operator, path) of its redirections that write."""
    fetched: bool = False
    """A $(...) or <(...) in its words runs a downloader."""
    sinks: list[Node] = field(default_factory=list)
    """Its `>(...)`: they read what it writes there."""
    tail: list[Node] = field(default_factory=list)
    """Stages that its here-document's line pipes on to (`cat <<EOF | sh`)..."""
    after: list[Node] = field(default_factory=list)
    """...and what runs after them (`cat <<EOF && x`)."""


class Walker(Words):
    def walk(self, node: Node) -> str | None:
        """Check what runs in `node`; returns what it prints when that is literal (`echo x`, `whoami`), else None."""
        kind = node.type
        if kind in ("command", "pipeline"):
            return self.pipeline(node.named_children if kind == "pipeline" else [node])
        if kind == "redirected_statement":
            return self._redirected(node.child_by_field_name("body"), node.children_by_field_name("redirect"))
        if kind == "variable_assignment":
            self.assign(node)
        elif kind == "function_definition":
            self.scan.functions[text(node.child_by_field_name("name"))] = node.child_by_field_name("body")
        elif kind == "for_statement":
            self.loop(node)
        elif kind == "ERROR":
            self._recover(node.children)
        elif kind == "subshell":
            with self.scan.places.subshell():
                for child in node.named_children:
                    self.walk(child)
        else:  # lists, groups, if/while/case, declarations, [[ ]], heredoc bodies with their substitutions...
            for child in node.named_children:
                self.walk(child)
        return None

    def _redirected(self, body: Node | None, redirects: list[Node]) -> str | None:
        """Redirections are the last simple command's: tree-sitter-bash hangs them on a whole list or pipeline."""
        if body is not None and body.type in ("list", "pipeline"):
            *first, last = body.named_children
            if body.type == "pipeline" and last.type == "command":
                return self.pipeline([*first, (last, redirects)])
            for child in first:
                self.walk(child)
            return self._redirected(last, redirects)
        if body is not None and body.type == "command":
            return self.pipeline([(body, redirects)])
        s = Simple(argv=[], text=text(redirects[0].parent)[:200] if redirects else "")  # the whole statement
        if body is not None:  # `{ ...; } > FILE`, `while ...; done < list`
            self.walk(body)
        for redirect in redirects:
            self.redirect(redirect, s)
        self.run(s)
        for later in s.tail + s.after:
            self.walk(later)
        return None

    def _recover(self, children: list[Node]) -> None:
        """What tree-sitter-bash could not parse: its pieces, and a word glued to `{` (`{rm,-rf,~}`), which its
        grammar takes for the start of a group."""
        i = 0
        while i < len(children):
            child, following = children[i], children[i + 1] if i + 1 < len(children) else None
            if child.type == "{" and following is not None and following.type in ("command", "command_name") and \
                    following.start_byte == child.end_byte:
                self.run(self.simple(following, glued="{"))
                i += 1
            elif child.is_named:
                self.walk(child)
            i += 1

    def pipeline(self, stages: list[Node | tuple[Node, list[Node]]], fed: str | None = None) -> str | None:
        """Stages left to right, each fed what the one before prints (known when it is literal); `fed`: what
        the first one reads."""
        stages, output, after = list(stages), fed, []
        done: list[Simple | None] = [] if fed is None else [None]
        while stages:
            node, redirects = stages.pop(0) if isinstance(stages[0], tuple) else (stages.pop(0), [])
            if node.type == "redirected_statement" and _body(node).type == "command":
                node, redirects = _body(node), node.children_by_field_name("redirect")
            s = self.simple(node, redirects) if node.type == "command" else None
            if s is None:
                self.walk(node)
                output = None
                done.append(None)
                continue
            stages[:0], after = s.tail, after + s.after
            feed = output if output is not None or not done else self._listed(done)
            upstream, output = output, self.run(s, feed)
            if done:
                self._piped_into(s, done, upstream)
            done.append(s)
        for node in after:
            self.walk(node)
        return output

    def simple(self, node: Node, redirects: list[Node] = (), glued: str = "") -> Simple:
        saved, self.fetched, sinks, self.sinks = self.fetched, False, self.sinks, []
        s, end = Simple(argv=[], text=(glued + text(node))[:200]), -1
        for child in [node] if node.type == "command_name" else node.named_children:
            if child.type == "variable_assignment":  # `X=$(cmd) prog`: the value is for prog only, but it runs
                self.value(child.child_by_field_name("value"))
            elif child.type.endswith("redirect"):
                self.redirect(child, s)
            elif child.type != "comment":
                words = self.fields((child.named_children or [child])[0] if child.type == "command_name" else child,
                                    glued if child.type == "command_name" else "")
                if s.argv and words and node.text[end - node.start_byte:child.start_byte - node.start_byte] == \
                        b"\\\n":  # `r\<newline>m` is one word, `rm`, to bash
                    s.argv[-1] += words.pop(0)  # (tree-sitter-bash reads the line continuation as a blank)
                s.argv += words
            end = child.end_byte
        for redirect in redirects:
            self.redirect(redirect, s)
        s.fetched, self.fetched, s.sinks, self.sinks = self.fetched, saved, self.sinks, sinks
        return s

    def redirect(self, node: Node, s: Simple) -> None:
        if node.type == "herestring_redirect":
            s.stdin = " ".join(f for c in node.named_children for f in self.fields(c)) + "\n"
        elif node.type == "heredoc_redirect":
            self._heredoc(node, s)
        else:  # `> FILE`; tree-sitter-bash hangs the words after FILE on the redirect: they are the command's
            op = next((c.type for c in node.children if not c.is_named), "")
            first, *rest = [c for c in node.named_children if c.type != "file_descriptor"] or [None]
            for word in rest:
                s.argv += self.fields(word)
            path = " ".join(self.fields(first)) if first is not None else ""
            if op in _WRITES and path and not (op == ">&" and (re.fullmatch(r"\d+|-", path) or
                                                             self.scan.places.expand(path) is None)):  # a fd
                s.writes.append((op, path))

    def _heredoc(self, node: Node, s: Simple) -> None:
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        quoted = start is not None and any(q in text(start) for q in "'\"\\")  # then the body is data
        s.stdin = text(body) if body is not None else ""
        if body is not None and not quoted:  # bash runs the substitutions of an unquoted here-document
            self.walk(body)
        for child in node.named_children:
            if child.type.endswith("redirect"):
                self.redirect(child, s)
            elif child.type == "pipeline":  # `| a | b`, or `| a && b`: the pipe ends at the first list item
                head = child.named_children[0] if len(child.named_children) == 1 else child
                while head.type == "list":
                    s.after[:0] = head.named_children[1:]
                    head = head.named_children[0]
                s.tail += head.named_children if head.type == "pipeline" else [head]
            elif child.type not in ("heredoc_start", "heredoc_body", "heredoc_end"):
                s.after.append(child)

    def run(self, s: Simple, feed: str | list[tuple[str, bool]] | None = None) -> str | None:
        """Check one simple command; returns what it prints when that is literal."""
        scan = self.scan
        argv = peel(s.argv) or s.argv
        name = os.path.basename(argv[0]) if argv else ""
        reads_code = name in _STDIN_SHELLS or PYTHONS.match(name)
        scan.command = s.text
        if reads_code and s.fetched:
            scan.flag(ASK, "remote-script", f"`{s.text}` runs code downloaded from the network, unseen; download "
                      "it to a file and read it first")
        if s.stdin is not None and reads_code and dash_c(argv[1:]) is None:
            scan.python(s.stdin) if PYTHONS.match(name) else scan.bash(s.stdin)
        known = all(scan.places.expand(a) is not None for a in s.argv)
        stdin = s.stdin if s.stdin is not None else feed if isinstance(feed, str) else None
        output = literal_output(s.argv, stdin, scan.places) if known else None
        for op, path in s.writes:
            scan.write(path, s.text)
            if output is not None and not (target := scan.places.target(path)).unknown:  # `cat > x.sh <<EOF`:
                scan.files[target.path] = scan.files.get(target.path, "") * (">>" in op) + output  # read if run
        for sink in s.sinks:  # `tee >(cmd)` feeds cmd its input, `> >(cmd)` its output
            fed = stdin if name == "tee" else output if any(p == "/dev/fd/63" for _, p in s.writes) else None
            self.pipeline(sink.named_children, fed=fed)
        if s.argv and s.argv[0] in scan.functions:
            self.call(s.argv[0], s.argv[1:])
        elif s.argv:
            scan.argv(s.argv, feed)
        return output

    def call(self, name: str, args: list[str]) -> None:
        """Check a function's body with its arguments as $1, $2...; the script's other values stay."""
        self.scan.called.add(name)
        if self.scan.deeper("function"):
            with_positional(self.scan.places, args, name, lambda: self.walk(self.scan.functions[name]))
            self.scan.depth -= 1

    def _piped_into(self, s: Simple, sources: list[Simple | None], upstream: str | None) -> None:
        """`... | sh`: the script is whatever the earlier stages print."""
        argv = peel(s.argv)
        name = os.path.basename(argv[0]) if argv else ""
        runs_stdin = (name in SHELLS and dash_c(argv[1:]) is None and not [a for a in argv[1:] if a[:1] != "-"]) \
            or (PYTHONS.match(name) and argv[1:] in ([], ["-"])) or name in ("at", "batch")
        if not runs_stdin:
            return
        names = {os.path.basename(w) for source in sources if source for w in source.argv}
        self.scan.command = s.text
        if names & DOWNLOADERS:
            self.scan.flag(ASK, "remote-script", f"`{s.text}` runs a script downloaded from the network, unseen; "
                           "download it to a file and read it first")
        elif upstream is not None:
            self.scan.python(upstream) if PYTHONS.match(name) else self.scan.bash(upstream)
        elif names & _DECODERS:
            self.scan.flag(ASK, "opaque-script", f"`{name}` runs a decoded script the policy cannot read")

    def _listed(self, stages: list[Simple | None]) -> list[tuple[str, bool]] | None:
        """`find ROOT... [| grep ...]`, `git ls-files`: the roots the paths printed lie below, else None."""
        argvs = [peel(s.argv) if s else [] for s in stages]
        names = [os.path.basename(a[0]) if a else "" for a in argvs]
        if not names or names[0] not in _LISTERS or not set(names[1:]) <= _FILTERS:
            return None
        args, filtered = argvs[0][1:], len(names) > 1
        if names[0] == "git":
            return [(".", True)] if args[:1] == ["ls-files"] else None
        roots = args[: next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))]
        return [(root, filtered or bool(FIND_FILTERS & set(args))) for root in roots or ["."]]

    def loop(self, node: Node) -> None:
        values = node.children_by_field_name("value")
        has_in = any(c.type == "in" for c in node.children)
        items = [known(self.scan.places, f) for v in values for f in self.fields(v)] if has_in else [UNKNOWN]
        name = text(node.child_by_field_name("variable"))
        variables = self.scan.places.variables
        saved = variables.get(name)
        for item in items[:MAX_LOOP_ITEMS]:
            variables[name] = item
            self.walk(node.child_by_field_name("body"))
        if saved is None:
            variables.pop(name, None)
        else:
            variables[name] = saved

    def assign(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        value = self.value(node.child_by_field_name("value"))
        if name.type != "variable_name":  # `a[0]=x`: the array is no longer known
            name, value = name.child_by_field_name("name") or name, UNKNOWN
        if any(c.type == "+=" for c in node.children):
            value = (self.scan.places.value(text(name)) or UNKNOWN) + value
        self.scan.places.assign(text(name), value)


def _body(node: Node) -> Node:
    return node.child_by_field_name("body") or node


