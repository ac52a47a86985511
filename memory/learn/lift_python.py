"""Lifting a task's values out of a Python program into parameters, through its AST.

A string constant that is a task value becomes the parameter's name; one that holds a value among other text
becomes an f-string around it; a number the task names becomes the parameter (never an index or a slice bound).
Edits are made at the constants' own positions, so the program keeps its layout and comments."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable

from memory.learn.literals import Literal, Parameter

Naming = Callable[[Literal], str]
"""The parameter name of a literal (registers it as used)."""


def lift(source: str, literals: list[Literal], name_of: Naming) -> str | None:
    """`source` with the literals it uses replaced by parameter names (None: it is not Python)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    edits: list[tuple[int, int, str]] = []
    skip = _docstrings(tree) | _slices(tree)
    code = _in_code(tree)
    coded = in_code(name_of)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            rebuilt = _fstring(node, literals, coded if id(node) in code else name_of)
            if rebuilt is not None:
                edits.append((*_span(source, node), rebuilt))
            skip.update(id(v) for v in node.values if isinstance(v, ast.Constant))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in skip:
            continue
        text = _constant(node.value, literals, coded if id(node) in code else name_of)
        if text is not None:
            edits.append((*_span(source, node), text))
    return edited(source.encode(), edits)


def edited(data: bytes, edits: list[tuple[int, int, str]]) -> str:
    """`data` with each (start, end) byte span replaced by its text."""
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text.encode() + data[end:]
    return data.decode()


CODE_CALLS = frozenset({"eval", "exec", "compile", "system", "popen", "execute", "executemany", "executescript",
                        "read_sql", "read_sql_query", "query"})
"""Calls whose string arguments run as code: Python, the shell (os.system), SQL."""
SUBPROCESS = frozenset({"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"})
RUNNERS = frozenset({"sh", "bash", "zsh", "dash", "sed", "awk", "gawk", "mawk", "perl", "ruby", "node", "python",
                     "python3", "eval", "xargs", "find", "jq"})
"""Programs whose arguments may be programs (the shell lifter's list too)."""


def in_code(name_of: Naming) -> Naming:
    """The naming of a literal met inside code: marked, so that no script lifts a value into code (extract.py)."""
    return lambda lit: name_of(dataclasses.replace(lit, in_code=True))


def _in_code(tree: ast.AST) -> set[int]:
    """ids of the string nodes inside calls that run their arguments as code."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        shell = any(k.arg == "shell" and not (isinstance(k.value, ast.Constant) and not k.value.value)
                    for k in node.keywords)
        words = {c.value.rsplit("/", 1)[-1] for c in ast.walk(node) if isinstance(c, ast.Constant)
                 and isinstance(c.value, str)}
        if name in CODE_CALLS or (name in SUBPROCESS and (shell or words & RUNNERS or name.startswith("get"))):
            found.update(id(c) for arg in [*node.args, *node.keywords] for c in ast.walk(arg)
                         if isinstance(c, ast.Constant | ast.JoinedStr))
    return found


def header(parameters: list[Parameter], *, from_env: bool) -> str:
    """The lines that give a program its parameters: from its command line (a script of its own), or from the
    environment (a program inside a shell script, which exports them)."""
    if not parameters:
        return ""
    lines = ["import os" if from_env else "import sys"]
    for position, p in enumerate(parameters, 1):
        read = f"os.environ[{p.name!r}]" if from_env else f"sys.argv[{position}]"
        lines.append(f"{p.name} = {'int' if p.integer else 'float'}({read})" if p.number else f"{p.name} = {read}")
    return "\n".join(lines) + "\n"


def with_header(source: str, head: str) -> str:
    """`head` inserted after the program's docstring and __future__ imports (which must come first)."""
    if not head:
        return source
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError):
        return head + source
    after = 0
    for stmt in body:
        docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt is body[0]
        future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if not (docstring or future):
            break
        after = stmt.end_lineno or after
    lines = source.splitlines(keepends=True)
    return "".join(lines[:after]) + head + "".join(lines[after:])


def _constant(value: object, literals: list[Literal], name_of: Naming) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        lit = next((lit for lit in literals if lit.number and _same_number(lit.value, value)), None)
        return name_of(lit) if lit else None
    if not isinstance(value, str):
        return None
    whole = next((lit for lit in literals if lit.value == value), None)
    if whole:
        return name_of(whole)
    parts = _split(value, literals)
    if len(parts) == 1:
        return None
    return ast.unparse(ast.JoinedStr(values=[formatted(p, name_of) for p in parts]))


def _fstring(node: ast.JoinedStr, literals: list[Literal], name_of: Naming) -> str | None:
    values, changed = [], False
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            pieces = _split(part.value, literals)
            changed |= len(pieces) > 1 or isinstance(pieces[0], Literal)
            values += [formatted(p, name_of) for p in pieces]
        else:
            values.append(part)
    return ast.unparse(ast.JoinedStr(values=values)) if changed else None


def formatted(piece: str | Literal, name_of: Naming) -> ast.expr:
    if isinstance(piece, Literal):
        return ast.FormattedValue(value=ast.Name(id=name_of(piece)), conversion=-1)
    return ast.Constant(value=piece)


def _split(text: str, literals: list[Literal]) -> list[str | Literal]:
    """`text` cut around the literals it holds as whole words (the longest first)."""
    for lit in literals:
        if lit.number and len(lit.value) < 3:
            continue  # "3" inside a sentence is rarely the task's 3
        m = re.search(rf"(?<![\w-]){re.escape(lit.value)}(?![\w-])", text)
        if m:
            return [*_split(text[:m.start()], literals), lit, *_split(text[m.end():], literals)]
    return [text] if text else []


def _same_number(text: str, value: int | float) -> bool:
    try:
        return float(text) == value and (isinstance(value, float) or "." not in text)
    except ValueError:
        return False


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            found.add(id(body[0].value))
    return found


def _slices(tree: ast.AST) -> set[int]:
    """Numbers that index or slice (rows[3], line[:2]): positions, not the task's values."""
    return {id(n) for node in ast.walk(tree) if isinstance(node, ast.Subscript) for n in ast.walk(node.slice)
            if isinstance(n, ast.Constant) and isinstance(n.value, int | float)}


def _span(source: str, node: ast.AST) -> tuple[int, int]:
    """Byte offsets of a node (the AST counts columns in UTF-8 bytes)."""
    starts = [0]
    for line in source.encode().splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts[node.lineno - 1] + node.col_offset, starts[node.end_lineno - 1] + node.end_col_offset
