"""The values a task names (files, columns, keys, words, numbers, URLs) and the parameters they become.

A learnt script takes these as its arguments, so the next task of the same kind runs it with its own values. Two
sources: what the task marks or shapes as a value (quoted spans, file names, URLs, numbers, ALL-CAPS words), and
whole constants of the run's code that the task says in so many words (`row["amount"]` when the task says "the
column amount"). Parameters are ordered as the task names them, and named after their role where the task or the
workspace says it (an input file, an output file, the word before the value: column, key, level)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from sop.words import tokenize

_QUOTED = re.compile(r"`([^`\n]{1,200})`|(?<![\w'])'([^'\n]{1,200})'(?![\w'])|\"([^\"\n]{1,200})\"")
_BRACKETED = re.compile(r"(?<![\w\]])\[([\w.-]{1,80})\](?![\w(\[])")
"""An INI section or a tag in brackets: `the [server] section`."""
_URL = re.compile(r"https?://[^\s`'\"<>]+")
_FILE = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/-])")
_ABBREVIATION = re.compile(r"\w\.\w|etc|vs|approx", re.IGNORECASE)
"""e.g, i.e: a dot between two single letters names no file."""
_NUMBER = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?![\w.]\w)")
_CAPS = re.compile(r"(?<![\w-])[A-Z][A-Z0-9_]{2,}(?![\w-])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
TRIVIAL_NUMBERS = frozenset({"0", "1", "2", "-1"})
"""Numbers too common in code to be the task's value: a 1 in a program is an index far more often than a setting."""
NOT_ROLES = frozenset({"a", "an", "the", "of", "to", "into", "in", "on", "at", "from", "with", "by", "for", "and",
    "or", "as", "is", "are", "be", "named", "called", "set", "setting", "its", "it", "that", "this", "those",
    "these", "their", "each", "every", "all", "file", "files", "value", "values", "new", "old", "exactly", "just",
    "only", "plain", "containing", "contains", "holds", "has", "have", "write", "writes", "put", "save", "change",
    "rename", "replace", "make", "create", "run", "what", "which", "how", "many", "much", "does", "do", "there"})
"""Words before a value that say nothing of its role ("named", "the", "into")."""
NOUNS_AFTER = frozenset({"key", "column", "field", "section", "function", "method", "class", "variable", "option",
                         "setting", "word", "table", "row", "header", "tag", "label", "flag", "property", "attribute",
                         "parameter", "argument", "branch", "folder", "directory", "module", "package"})
"""Words after a value that name its role ("the `path` key")."""
MAX_PARAMETERS = 9
RESERVED = frozenset({"PATH", "HOME", "USER", "SHELL", "PWD", "OLDPWD", "LANG", "TERM", "IFS", "PS1", "PS2", "UID",
                      "EUID", "PPID", "RANDOM", "LINENO", "SECONDS", "TMPDIR", "PYTHONPATH", "LOGNAME", "HOSTNAME",
                      "DISPLAY", "EDITOR", "OPTIND", "OPTARG", "BASH", "GROUPS", "MAIL", "LC_ALL", "HERE"})
"""Names a parameter may not take: it is a shell variable of the script, exported to its Python steps."""


@dataclass(kw_only=True, frozen=True)
class Literal:
    value: str
    """As it appears in the task and in the code."""
    position: int
    """Where the task first names it: parameters follow the task's order."""
    number: bool = False
    in_code: bool = False
    """Met inside a string that runs as code (a sed or awk program, `sh -c`, eval, SQL): a later task's value put
    there could run as code (`y/;1e touch PWNED;#`), so such a run teaches no script."""


@dataclass(kw_only=True, frozen=True)
class Parameter:
    name: str
    """UPPER_CASE: the script's variable, and how the usage line names the argument."""
    value: str
    """This run's value: the usage line's example."""
    number: bool = False
    integer: bool = False


def task_literals(task: str) -> list[Literal]:
    """What the task marks or shapes as a value, longest first where two overlap."""
    found: dict[str, Literal] = {}

    def add(value: str, position: int, *, number: bool = False) -> None:
        value = value.strip().rstrip(".,;:")
        if value and value not in found and (number or value not in TRIVIAL_NUMBERS):
            found[value] = Literal(value=value, position=position, number=number)

    for m in _QUOTED.finditer(task):
        group = next(i for i, g in enumerate(m.groups(), 1) if g is not None)
        add(m.group(group), m.start(group))
    for m in _BRACKETED.finditer(task):
        add(m.group(1), m.start(1))
    for pattern in (_URL, _FILE, _CAPS):
        for m in pattern.finditer(task):
            if pattern is not _FILE or not _ABBREVIATION.fullmatch(m.group()):
                add(m.group(), m.start())
    for m in _NUMBER.finditer(task):
        if m.group() not in TRIVIAL_NUMBERS:
            add(m.group(), m.start(), number=True)
    return sorted(found.values(), key=lambda lit: (-len(lit.value), lit.position))


def said_in_task(value: str, task: str) -> int:
    """Where the task says `value` as a whole word (-1: it does not). Short or wordless values never count."""
    if len(value) < 2 or not re.search(r"[A-Za-z0-9]", value) or value.lower() in NOT_ROLES:
        return -1
    m = re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", task)
    return m.start() if m else -1


def parameters(used: list[Literal], task: str, existed: set[str]) -> list[Parameter]:
    """Parameters for the literals the code uses, in the task's order, with names that say their role; `existed`
    holds the workspace's files before the run (a file named in the task that existed is an input)."""
    names: set[str] = set()
    roles: dict[str, str] = {}
    out = []
    ordered = sorted(used, key=lambda lit: lit.position)[:MAX_PARAMETERS]
    for i, lit in enumerate(ordered):
        roles[lit.value] = role = _role(lit, task, existed, ordered[i - 1] if i else None, roles)
        integer = lit.number and "." not in lit.value
        out.append(Parameter(name=_unique(role, names), value=lit.value, number=lit.number, integer=integer))
    return out


def _role(lit: Literal, task: str, existed: set[str], previous: Literal | None, roles: dict[str, str]) -> str:
    value = lit.value
    if _URL.fullmatch(value):
        return "URL"
    if _FILE.fullmatch(value) and not lit.number:
        suffix = PurePosixPath(value).suffix.lstrip(".").upper() or "FILE"
        return f"{'INPUT' if value in existed or PurePosixPath(value).name in existed else 'OUTPUT'}_{suffix}"
    after = _WORD.findall(task[lit.position + len(lit.value) + 1:])[:1]
    if after and after[0].lower() in NOUNS_AFTER:  # "the `path` key"
        return after[0].upper()
    if previous is not None:  # "rename `calc` to `total`", "replace `colour` with `color`": the new one
        between = task[previous.position + len(previous.value):lit.position]
        if re.fullmatch(r"[\W_]*(?:to|with|by|into|as)[\W_]*", between, re.IGNORECASE):
            earlier = roles.get(previous.value, "VALUE")
            return "VALUE" if earlier in ("KEY", "VALUE", "NUMBER") else f"NEW_{earlier}"
    prefix = task[:lit.position]
    if previous is not None:  # another value's words say nothing of this one's role
        prefix = prefix[:previous.position] + " " + prefix[previous.position + len(previous.value):]
    before = [w for w in _WORD.findall(prefix)[-4:] if w.lower() not in NOT_ROLES]
    role = before[-1].upper().replace("-", "_") if before else ""
    if role and re.fullmatch(r"[A-Z][A-Z0-9_]{1,20}", role) and role != value.upper():
        return role
    return "NUMBER" if lit.number else "VALUE"


def _unique(name: str, taken: set[str]) -> str:
    name = f"{name}_ARG" if name in RESERVED else name
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}_{n}", n + 1
    taken.add(candidate)
    return candidate


def suggested(usage: str, task: str, existed: set[str]) -> list[str] | None:
    """This task's values for a learnt script's usage line (`python3 PATH INPUT_CSV COLUMN`), when the task names one
    value for each of its parameters, by the same roles; None when it does not (the model fills them in)."""
    names = usage.split()[2:]
    found = {p.name: p.value for p in parameters(task_literals(task), task, existed)}
    if not names or any(n not in found for n in names) or len(set(names)) != len(names):
        return None
    return [found[n] for n in names]


FITS = 0.5
"""How alike a task and the task a script was learnt from must be, values aside, for the script to be offered ready
to run: more than half of their words shared (bench/perf/offer_bench.py: "fix the `add` function" does not fit "add
a function `mul`")."""


def fits(learnt_from: str, task: str) -> bool:
    """Whether `task` asks for what `learnt_from` asked, on other values: the words left once the values are out."""
    def words(text: str) -> set[str]:
        for literal in sorted(task_literals(text), key=lambda lit: -len(lit.value)):
            text = text.replace(literal.value, " ")
        return set(tokenize(text))

    a, b = words(learnt_from), words(task)
    return bool(a | b) and len(a & b) / len(a | b) >= FITS
