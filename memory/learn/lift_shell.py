"""Lifting a task's values out of a bash script into shell variables, through tree-sitter-bash's syntax tree.

A value in a bare word becomes "${NAME}", in single quotes it is spliced between them ('a'"${NAME}"'b'), in double
quotes and unquoted here-documents it is ${NAME}. A here-document fed to Python (`python3 - <<'EOF'`) is lifted
as Python, its parameters read from the environment (the learnt script exports them). A quoted here-document of
other text is unquoted, its `$`, backquotes and backslashes escaped, so the value can go in."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memory.learn import lift_python
from memory.learn.lift_python import Naming
from memory.learn.literals import Literal, Parameter

PythonParams = Callable[[list[str]], list[Parameter]]
"""The parameters (by name) a Python here-document reads from the environment."""
BEFORE = r"(?:(?<![\w-])|(?<=\\[bBwWsSdD<]))"
"""A value starts a word, or follows a regex escape (sed 's/\bcalc(/...'): `\b` is not part of it."""
SCANNER_BUG = re.compile(r"\{\d*(?:\.\.\d*)?[^\x00-\xff]")
"""tree-sitter-bash 0.25.1 can crash the process on a character above U+00FF after `{` (its issue 337; the policy's
parser in tools/guard/policy.py works around it): such a script is kept as it is, its values not lifted."""
PYTHON = re.compile(r"(?:.*/)?python(?:3(?:\.\d+)?)?")


@functools.cache
def _parser():
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def lift(script: str, literals: list[Literal], name_of: Naming, params_of: PythonParams) -> str | None:
    """`script` with the literals it uses turned into "${NAME}" (None: it does not parse as bash)."""
    if SCANNER_BUG.search(script):
        return None
    data = script.encode()
    tree = _parser().parse(data)
    if tree.root_node.has_error:
        return None
    job = _Job(data=data, literals=literals, name_of=name_of, params_of=params_of)
    _visit(tree.root_node, job)
    return lift_python.edited(data, job.edits)


@dataclass(kw_only=True)
class _Job:
    data: bytes
    literals: list[Literal]
    name_of: Naming
    params_of: PythonParams
    edits: list[tuple[int, int, str]] = field(default_factory=list)

    def text(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode(errors="replace")


def _visit(node, job: _Job, code: bool = False) -> None:
    text, kind, literals = job.text(node), node.type, job.literals
    name_of = lift_python.in_code(job.name_of) if code else job.name_of
    if kind == "heredoc_redirect":
        _heredoc(node, job)
        return
    if kind == "command" and not code:
        for child in node.children:
            _visit(child, job, _program_arg(child, node, job))
        return
    if kind in ("word", "number") and node.parent is not None and node.parent.type != "heredoc_redirect":
        lifted = _spliced(text, literals, name_of, quote="")
    elif kind == "raw_string":
        lifted = _spliced(text[1:-1], literals, name_of, quote="'")
    elif kind == "string_content":
        lifted = _inside(text, literals, name_of)
    else:
        for child in node.children:
            _visit(child, job, code)
        return
    if lifted != text:
        job.edits.append((node.start_byte, node.end_byte, lifted))


def _program_arg(child, command, job: _Job) -> bool:
    """Whether `child`, a part of `command`, is a program a runner in it runs (sed's script, `sh -c` text, awk's
    program): any quoted argument of a command that names a runner, and a bare sed program (s/a/b/)."""
    words = [job.text(c).strip("'\"") for c in command.children if c.type in ("command_name", "word", "raw_string",
                                                                             "string")]
    runners = {w.rsplit("/", 1)[-1] for w in words} & lift_python.RUNNERS
    if not runners or child.type == "command_name":
        return False
    if child.type in ("raw_string", "string", "concatenation"):
        return True
    return child.type == "word" and "sed" in runners and bool(re.match(r"^[sy]([^\w\s]).*\1", job.text(child)))


def _heredoc(node, job: _Job) -> None:
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    body = next((c for c in node.children if c.type == "heredoc_body"), None)
    for child in node.children:  # `<<EOF > out.txt`: the redirects beside the here-document
        if child.type not in ("heredoc_start", "heredoc_body", "heredoc_end", "<<", "<<-"):
            _visit(child, job)
    if start is None or body is None:
        return
    text, word = job.text(body), job.text(start)
    quoted = word[:1] in ("'", '"') or "\\" in word
    if _feeds_python(node, job) and (quoted or not re.search(r"[$`]", text)):
        used: list[str] = []
        lifted = lift_python.lift(text, job.literals, recording(job.name_of, used))
        if lifted is not None and used:
            if not quoted:  # the shell would expand $ and backquotes in Python's text: quote the delimiter
                job.edits.append((start.start_byte, start.end_byte, f"'{word}'"))
            head = lift_python.header(job.params_of(used), from_env=True)
            job.edits.append((body.start_byte, body.end_byte, lift_python.with_header(lifted, head)))
        return
    plain = _escaped(text) if quoted else text
    lifted = _inside(plain, job.literals, job.name_of)
    if lifted == plain:
        return
    if quoted:  # unquoted, so that ${NAME} expands; what the shell would expand is escaped
        job.edits.append((start.start_byte, start.end_byte, word.strip("'\"").replace("\\", "")))
    job.edits.append((body.start_byte, body.end_byte, lifted))


def _feeds_python(node, job: _Job) -> bool:
    statement = node.parent
    command = next((c for c in statement.children if c.type == "command"), None) if statement else None
    name = next((c for c in command.children if c.type == "command_name"), None) if command else None
    return name is not None and bool(PYTHON.fullmatch(job.text(name)))


def recording(name_of: Naming, used: list[str]) -> Naming:
    def named(lit: Literal) -> str:
        name = name_of(lit)
        if name not in used:
            used.append(name)
        return name
    return named


def pieces(text: str, literals: list[Literal]) -> list[str | Literal]:
    for lit in literals:
        m = re.search(rf"{BEFORE}{re.escape(lit.value)}(?![\w-])", text)
        if m and not (lit.number and len(lit.value) < 3 and m.group() != text):
            return [*pieces(text[:m.start()], literals), lit, *pieces(text[m.end():], literals)]
    return [text] if text else []


def _spliced(text: str, literals: list[Literal], name_of: Naming, *, quote: str) -> str:
    cut = pieces(text, literals)
    if not any(isinstance(p, Literal) for p in cut):
        return f"{quote}{text}{quote}"
    return "".join(f'"${{{name_of(p)}}}"' if isinstance(p, Literal) else f"{quote}{p}{quote}" for p in cut)


def _inside(text: str, literals: list[Literal], name_of: Naming) -> str:
    return "".join(f"${{{name_of(p)}}}" if isinstance(p, Literal) else p for p in pieces(text, literals))


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("`", "\\`")
