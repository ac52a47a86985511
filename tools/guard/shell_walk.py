"""Walking bashlex trees for the command policy: commands, pipelines, substitutions, here-documents, loops,
functions and redirections, with the values the script makes known tracked as it goes.

The walker knows bash's structure; shell_scan.Scan decides about each simple command it reports.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tools.guard.places import UNKNOWN
from tools.guard.rules import FIND_FILTERS
from tools.guard.scanner import ASK, ShellScanner
from tools.guard.shell_fields import braced_words, split_word
from tools.guard.shell_lex import Prepared
from tools.guard.shell_words import dash_c, literal_output, peel

SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash"}
PYTHONS = re.compile(r"^python(\d+(\.\d+)?)?$")
DOWNLOADERS = {"curl", "wget", "fetch", "aria2c"}
_DECODERS = {"base64", "base32", "xxd", "openssl", "gunzip", "zcat", "uudecode"}
_LISTERS = {"find", "git"}
"""Commands whose output is paths below their operands (find ROOT..., git ls-files)."""
_FILTERS = {"grep", "egrep", "fgrep", "sort", "uniq", "head", "tail", "cat"}
_WRITES = (">", ">>", ">|", "&>", "&>>")
_SUBSTITUTION = re.compile(r"\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)|`([^`]*)`")
MAX_LOOP_ITEMS = 8
"""A loop body is checked once per item, for this many items at most."""
_POSITIONAL = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "*", "#")


class Walker:
    """Walks the trees of one prepared source; node positions index its text."""

    def __init__(self, scan: ShellScanner, prepared: Prepared):
        self.scan, self.src, self.heredocs = scan, prepared.text, prepared.heredocs
        self.fetched = False
        """A $(...) or <(...) read so far runs a downloader."""
        self.defined: list[str] = []

    def walk_all(self, trees: list) -> None:
        for tree in trees:
            self.walk(tree)
        for name in self.defined:  # a function never called by name may still run (`$f`, a trap): check it once
            if name not in self.scan.called:
                self.call(name, [UNKNOWN])

    def walk(self, node: object) -> None:
        kind = getattr(node, "kind", "")
        if kind == "command":
            self._command(node)
        elif kind == "pipeline":
            self._pipeline([p for p in node.parts if p.kind != "pipe"])
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.walk(node.command)
        elif kind == "function":
            name = node.parts[0].word
            self.scan.functions[name] = (self, node.parts[-1])
            self.defined.append(name)
        elif kind == "for":
            self._for(node)
        else:
            for child in (getattr(node, "parts", None) or getattr(node, "list", None) or []):
                self.walk(child)
            for redirect in getattr(node, "redirects", None) or []:  # `{ ...; } > FILE`, `done < list`
                self._redirect(redirect, node)

    def text(self, node: object) -> str:
        return self.src[node.pos[0]: node.pos[1]]

    def word(self, node: object) -> str:
        """The word as bash would pass it, with static $(...) output filled in and others left as ${UNKNOWN}."""
        value = node.word
        for text, output in self._substitutions(node):
            value = value.replace(text, output, 1)
        return value

    def _substitutions(self, node: object) -> list[tuple[str, str]]:
        """Each $(...) of a word (walked, since it runs) and its static output, or ${UNKNOWN}."""
        found = []
        for part in getattr(node, "parts", None) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                self.walk(part.command)
                self.fetched |= bool(DOWNLOADERS & set(re.findall(r"[\w.-]+", self.text(part))))
                output = self.static_output(part.command)
                found.append((self.text(part), UNKNOWN if output is None else output.strip()))
        return found

    def fields(self, node: object) -> list[str]:
        """The words bash makes of one word as written: brace expansion (`~{,}`), then the split of its bare
        expansions on IFS (`rm${IFS}-rf`); "$@" is as many words as it holds. Each is later expanded again."""
        subs, raw = self._substitutions(node), self.text(node)
        words = []
        for braced in braced_words(raw, node.word):
            word = braced
            for text, output in subs:
                word = word.replace(text, output, 1) if text in word else UNKNOWN
            words += split_word(word, raw, self.scan.places.expand, self.scan.places.value("IFS"))
        return words

    def argv(self, node: object) -> tuple[list[str], dict[str, str]]:
        """The words of a command and its NAME=value assignments."""
        words, assigned = [], {}
        for part in node.parts:
            if part.kind == "word":
                words += self.fields(part)
            elif part.kind == "assignment":
                name, _, value = self.word(part).partition("=")
                assigned[name.rstrip("+")] = value
            elif part.kind == "redirect":
                self._redirect(part, node)
        return words, assigned

    def call(self, name: str, args: list[str]) -> None:
        """Check a function's body with its arguments as $1, $2...; the script's other values stay."""
        walker, body = self.scan.functions[name]
        self.scan.called.add(name)
        if not self.scan.deeper("function"):
            return
        variables = self.scan.places.variables
        saved = {k: variables.get(k) for k in _POSITIONAL}
        known = [self.scan.places.expand(a) for a in args]
        values = [UNKNOWN if v is None else v for v in known]
        variables.update({str(i): v for i, v in enumerate([name, *values][:10])})
        variables.update({"@": " ".join(values), "*": " ".join(values), "#": str(len(values))})
        try:
            walker.walk(body)
        finally:
            self.scan.depth -= 1
            for k, v in saved.items():
                if v is None:
                    variables.pop(k, None)
                else:
                    variables[k] = v

    def _command(self, node: object, feed: str | list[tuple[str, bool]] | None = None) -> None:
        self.fetched = False
        argv, assigned = self.argv(node)
        if not argv:
            for name, value in assigned.items():
                self.scan.places.assign(name, value)
            return
        name = os.path.basename((peel(argv) or argv)[0])
        if name in self.scan.functions and name not in ("command", "builtin"):
            self.call(name, argv[1:])
            return
        interpreter = name in SHELLS | {"eval", "source", "."} or PYTHONS.match(name)
        if interpreter and self.fetched:
            self.scan.command = self.text(node)[:200]
            self.scan.flag(ASK, "remote-script", f"`{self.text(node)[:200]}` runs code downloaded from the "
                           "network, unseen; download it to a file and read it first")
        for script, quoted in self._stdin_texts(node):
            if interpreter and dash_c(argv[1:]) is None:
                self.scan.python(script) if PYTHONS.match(name) else self.scan.bash(script)
            elif not quoted:  # data, but bash still runs the substitutions in an unquoted here-document
                for inner in _SUBSTITUTION.findall(script):
                    self.scan.bash(inner[0] or inner[1])
        self._remember_written(node)
        self.scan.argv(argv, feed)

    def _stdin_texts(self, node: object) -> list[tuple[str, bool]]:
        """What a command reads from here-documents and here-strings, and whether it is quoted (pure data)."""
        texts = []
        for part in node.parts:
            if part.kind == "redirect" and part.type == "<<<" and getattr(part.output, "kind", "") == "word":
                heredoc = self.heredocs.get(part.output.word)
                texts.append((heredoc.body, heredoc.quoted) if heredoc else (self.word(part.output), False))
        return texts

    def _remember_written(self, node: object) -> None:
        """`cat > x.sh <<EOF ... EOF`, `echo ... > x.py`: the script is known if the same code_run runs it."""
        targets = [(p.type, self.word(p.output)) for p in node.parts if p.kind == "redirect" and p.type in _WRITES
                   and getattr(p.output, "kind", "") == "word"]
        if not targets:
            return
        output = self.static_output_of([node])
        for kind, path in targets:
            target = self.scan.places.target(path)
            if output is not None and not target.unknown:
                before = self.scan.files.get(target.path, "") if kind in (">>", "&>>") else ""
                self.scan.files[target.path] = before + output

    def _redirect(self, node: object, command: object) -> None:
        target = node.output
        if node.type in _WRITES and getattr(target, "kind", "") == "word":
            self.scan.write(self.word(target), self.text(command)[:200])

    def _for(self, node: object) -> None:
        parts = node.parts
        words = [getattr(p, "word", "") for p in parts]
        var = words[1] if len(parts) > 1 else ""
        start = words.index("in") + 1 if "in" in words else None
        body_at = words.index("do") + 1 if "do" in words else len(parts)
        if start is None:
            items = [UNKNOWN]
        else:
            items = []
            for part in parts[start:body_at - 1]:
                if part.kind == "word":
                    value = self.scan.places.expand(self.word(part))
                    items += [UNKNOWN] if value is None else value.split() or [""]
        body = [p for p in parts[body_at:] if getattr(p, "word", "") != "done"]
        variables = self.scan.places.variables
        saved = variables.get(var)
        for item in items[:MAX_LOOP_ITEMS]:
            variables[var] = item
            for child in body:
                self.walk(child)
        if saved is None:
            variables.pop(var, None)
        else:
            variables[var] = saved

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
        runs_stdin = (name in SHELLS and dash_c(argv[1:]) is None and not _operands(argv[1:])) or (
            PYTHONS.match(name) and (not argv[1:] or argv[1:] == ["-"]))
        if not runs_stdin:
            return
        names = {os.path.basename(w.word) for s in sources for w in getattr(s, "parts", []) if w.kind == "word"}
        self.scan.command = self.text(stage)[:200]
        if names & DOWNLOADERS:
            self.scan.flag(ASK, "remote-script", f"`{self.text(stage)}` runs a script downloaded from the network, "
                           "unseen; download it to a file and read it first")
        elif upstream is not None:
            self.scan.python(upstream) if PYTHONS.match(name) else self.scan.bash(upstream)
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
        """What `echo X | base64 -d | rev` (or `mktemp -d`, `whoami`) prints, when it is all literal; else None."""
        output: str | None = None
        places = self.scan.places
        for stage in stages:
            if stage.kind != "command":
                return None
            words = [w for p in stage.parts if p.kind == "word" for w in braced_words(self.text(p), p.word)]
            argv = [places.expand(w) for w in words]
            if None in argv:
                return None
            here = self._stdin_texts(stage)
            output = literal_output(argv, here[0][0] if here else output, places)
            if output is None:
                return None
        return output


def _operands(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def script_kind(content: str, default: str) -> str:
    """bash or python, from a file's first line; "" for what the policy cannot read (binaries, other languages)."""
    if "\x00" in content[:1024]:
        return ""
    first = content.split("\n", 1)[0]
    if first.startswith("#!"):
        interpreter = os.path.basename(first[2:].split()[-1] if "env" in first else first[2:].split()[0])
        return "python" if PYTHONS.match(interpreter) else "bash" if interpreter in SHELLS else ""
    return default


def readable_script(path: Path, limit: int) -> str | None:
    try:
        if path.is_file() and path.stat().st_size <= limit:
            return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    return None
