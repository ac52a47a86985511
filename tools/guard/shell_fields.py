"""The words bash makes of a word as written, before the command gets them: brace expansion (bracex), then
tilde, parameters (places.py, with what the script makes known), command substitutions (their output when
literal), quote removal and the split of unquoted expansions on IFS. A parameter the policy cannot know stays as
written (`$CMD`), output it cannot know is ${UNKNOWN}: places.py reads both as unknown.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from tools.guard.places import UNKNOWN
from tools.guard.shell_words import unescape

Node = Any
"""A tree-sitter node (tree_sitter is imported only when a command is first checked)."""
DOWNLOADERS = {"curl", "wget", "fetch", "aria2c"}
_BARE = {"word", "number", "brace_expression", "extglob_pattern"}
_ATOM = 0xE000
"""Private-use characters stand for the quoted and expanded parts of a word while braces are expanded."""
_ATOMS = re.compile("([\ue000-\uf8ff])")
Atom = tuple[str, str]
"""A quoted or expanded part of a word: its value, and how it splits: "" not at all (quoted), "ifs" on IFS
(unquoted), "items" one word per item ("$@")."""
MAX_WORDS = 256
"""Brace expansion past this many words makes the word unknown."""
_SCANNER_BUG = re.compile(r"(?<=\{)(\d*(?:\.\.\d*)?)[^\x00-\xff]")
"""tree-sitter-bash 0.25.1 tests a character after `{` (`{1..`) with isdigit(), which reads past its table for one
above U+00FF and can crash the process (tree-sitter-bash issue 337): such a character is parsed as `_`, a plain
word character as it is."""


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


class Words:
    """Expands words for the walker (shell_walk.Walker), which checks the code their substitutions run."""

    def __init__(self, scan: Any):
        self.scan = scan
        """shell_scan.Scan: where commands go, with the values the script makes known (scan.places)."""
        self.fetched = False
        """A $(...) or <(...) read for the simple command at hand runs a downloader."""
        self.sinks: list[Node] | None = None
        """The `>(...)` of the simple command at hand, checked once its output is known."""

    def walk(self, node: Node) -> str | None:
        raise NotImplementedError

    def value(self, node: Node | None) -> str:
        """An assignment's value: no brace expansion nor splitting; an array is its words together."""
        if node is None:
            return ""
        if node.type == "array":
            return " ".join(f for c in node.named_children for f in self.fields(c))
        atoms: list[Atom] = []
        return self._expand("".join(self._mask(p, atoms) for p in _parts(node)), atoms, split=False)[0]

    def fields(self, node: Node, glued: str = "") -> list[str]:
        """The words bash makes of one word as written: brace expansion, then the expansions, split on IFS where
        they stand unquoted (all known); "$@" is as many words as it holds; an unquoted empty word is none."""
        atoms: list[Atom] = []
        masked = glued + "".join(self._mask(p, atoms) for p in _parts(node))
        variants = [masked]
        if "{" in masked:
            import bracex

            try:
                variants = bracex.expand(masked, keep_escapes=True, limit=MAX_WORDS)
            except bracex.ExpansionLimitException:
                return [UNKNOWN]
        return [f for v in variants for f in self._expand(v, atoms, split=True)]

    def _mask(self, node: Node, atoms: list[Atom]) -> str:
        """A bare part of a word as written; any other part an atom, stood for by a private-use character."""
        if node.type in _BARE or not node.is_named:
            return _ATOMS.sub(UNKNOWN, text(node))  # a private-use character in the script itself: unknown
        atoms.append(self._atom(node))
        return chr(_ATOM + len(atoms) - 1)

    def _expand(self, variant: str, atoms: list[Atom], *, split: bool) -> list[str]:
        value, splits, quoted = "", set(), False
        for i, piece in enumerate(_ATOMS.split(variant)):
            if i % 2:
                atom, how = atoms[ord(piece) - _ATOM]
                value, quoted = value + atom, quoted or not how
                splits.add(how)
            else:
                literal = re.sub(r"\\(.)", r"\1", piece.replace("\\\n", ""), flags=re.S)
                value += self._tilde(literal) if i == 0 else literal
        if split and splits - {""} and self.scan.places.expand(value) is not None:
            ifs = " \t\n" if "items" in splits else self.scan.places.value("IFS")
            ifs = " \t\n" if ifs is None else ifs
            return [f for f in re.split(f"[{re.escape(ifs)}]+", value) if f] if ifs else [value] if value else []
        return [value] if value or quoted or not split else []

    def _tilde(self, literal: str) -> str:
        head, slash, rest = literal.partition("/")
        return (self.scan.places.expand(head) or head) + slash + rest if head.startswith("~") else literal

    def _atom(self, node: Node) -> Atom:
        kind = node.type
        if kind == "raw_string":
            return text(node)[1:-1], ""
        if kind == "ansi_c_string":
            return unescape(text(node)[2:-1].replace("\\'", "'")), ""
        if kind in ("string", "translated_string"):  # `$"..."`: a string bash may translate
            return self._string(node if kind == "string" else node.named_children[0])
        if kind in ("simple_expansion", "expansion"):
            self.walk(node)  # `${X:-$(cmd)}`
            value = self.scan.places.expand(text(node))
            return (text(node) if value is None else value), "ifs"
        if kind == "process_substitution":
            self.substitution(node) if self.sinks is None or text(node)[0] == "<" else self.sinks.append(node)
            return "/dev/fd/63", ""
        if kind == "command_substitution":
            return self.substitution(node), "ifs"
        if kind == "concatenation":
            atoms: list[Atom] = []
            masked = "".join(self._mask(p, atoms) for p in _parts(node))
            return self._expand(masked, atoms, split=False)[0], ""
        self.walk(node)  # arithmetic and the rest: what runs inside is checked, the value is not known
        return UNKNOWN, "ifs"

    def _string(self, node: Node) -> Atom:
        """A double-quoted string: one word, but "$@" and "${a[@]}" are one word per item."""
        inner = node.named_children
        if len(inner) == 1 and re.fullmatch(r"\$\{?(@|\w+\[@\])\}?", text(inner[0])):
            return self._atom(inner[0])[0], "items"
        value = ""
        for child in inner:
            if child.type == "string_content":
                value += re.sub(r"\\([$`\"\\])", r"\1", text(child).replace("\\\n", ""))
            else:
                value += self._atom(child)[0]
        return value, ""

    def substitution(self, node: Node) -> str:
        """Check the code of `$(...)`, `` `...` ``, `<(...)`; what it prints when literal, else ${UNKNOWN}."""
        saved = self.fetched
        with self.scan.places.subshell():
            outputs = [self.walk(c) for c in node.named_children if c.type != "comment"]
        self.fetched = saved or bool(DOWNLOADERS & set(re.findall(r"[\w.-]+", text(node))))
        return outputs[0].rstrip("\n") if len(outputs) == 1 and outputs[0] is not None else UNKNOWN


def _parts(node: Node) -> list[Node]:
    return node.children if node.type == "concatenation" else [node]
