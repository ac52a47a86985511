"""Code a command runs from files: a script (`bash x.sh`, `./x.py`), and what `make` and `npm run` (yarn, pnpm,
bun) run, the recipes of a Makefile and the scripts of a package.json. Each is read when the same code wrote it
(with literal content) or the workspace or a temporary folder holds it, and checked as the code it is.

A Makefile is read for its goals (the first target when none is named) and their prerequisites, with the
makefile's own variables put in (`$(shell CMD)` becomes `$(CMD)`); a package.json for the scripts the command
runs, with their pre- and post- scripts, and the install scripts for `npm install` in the project.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from tools.guard.places import UNKNOWN, Places, normpath

Read = Callable[[str], "str | None"]
"""A file's text, by the path a command names, or None when the policy cannot read it."""
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_MAKE_VALUES = {"-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir", "-o", "-W", "-j", "-l"}
_RULE = re.compile(r"^([^:=\s#][^:=#]*?)\s*::?(?![=])\s*([^;]*)(?:;(.*))?$")
_VARIABLE = re.compile(r"^\s*(?:export\s+|override\s+)?([\w.-]+)\s*[:?+!]*=\s*(.*)$")
_REFERENCE = re.compile(r"\$\$|\$\(([^()]*)\)|\$\{([^{}]*)\}|\$([@<^?*%+|])")
_INSTALL = ["preinstall", "install", "postinstall", "prepare"]
_NPM_VERBS = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop", "restart": "restart"}
MAX_STEPS = 200
MAX_FILE = 256 * 1024
"""Files in the workspace are read and checked up to this size."""


def read_file(word: str, places: Places, written: dict[Path, str]) -> str | None:
    """The file a command names: as the same code wrote it, or as the workspace or a temporary folder holds it."""
    name = places.expand(word)
    if name is None or not (places.cwd_known or name.startswith("/")):
        return None
    path = Path(normpath(str(places.cwd / name)))
    content = written.get(path)
    if content is None and places.place(path) in ("inside", "temp"):
        try:
            if path.is_file() and path.stat().st_size <= MAX_FILE:
                content = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass
    return content


def script_kind(content: str, kind: str) -> str:
    """bash or python, as a script's first line says (else `kind`); "" for what the policy cannot read."""
    first = content.split("\n", 1)[0]
    if "\x00" in content[:1024] or not content:
        return ""
    if not first.startswith("#!"):
        return kind
    words = first[2:].split() or [""]
    interpreter = os.path.basename(words[-1] if "env" in first else words[0])
    return "python" if re.match(r"python(\d+(\.\d+)?)?$", interpreter) else "bash" if interpreter in (
        "sh", "bash", "dash", "zsh", "ksh", "ash") else ""


def build_steps(name: str, args: list[str], read: Read) -> list[str]:
    """The shell commands `make ...`, `npm run ...`, `npm test`, `yarn NAME`... run from the project's files."""
    if name in ("make", "gmake"):
        return _make(args, read)
    if name in ("npm", "pnpm", "yarn", "bun"):
        return _scripts(name, args, read)
    return []


def _make(args: list[str], read: Read) -> list[str]:
    files, goals, folder, i = [], [], "", 0
    while i < len(args):
        a, i = args[i], i + 1
        if a.startswith("--") and "=" in a:
            name, value = a.split("=", 1)
        elif a[:2] in ("-f", "-C") and len(a) > 2:
            name, value = a[:2], a[2:]
        else:
            name, value = a, ""
            if a in _MAKE_VALUES and i < len(args) and (a not in ("-j", "-l") or args[i].isdigit()):
                value, i = args[i], i + 1
        if name in ("-f", "--file", "--makefile"):
            files.append(value)
        elif name in ("-C", "--directory"):
            folder = os.path.join(folder, value)
        elif not a.startswith("-") and "=" not in a and not value:
            goals.append(a)
    text = next((t for f in files or MAKEFILES if (t := read(os.path.join(folder, f))) is not None), None)
    return [] if text is None else _recipes(text, goals)


def _recipes(text: str, goals: list[str]) -> list[str]:
    """The recipe lines the goals (else the first target) run, their prerequisites' first."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    variables: dict[str, str] = {}
    first, current = None, []
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("\t"):
            for target in current:
                rules[target][1].append(line.strip().lstrip("@-+ "))
        elif (rule := _RULE.match(line)) and not _VARIABLE.match(line):
            current = rule[1].split()
            for target in current:
                deps, steps = rules.setdefault(target, ([], []))
                deps += rule[2].split()
                steps += [rule[3].strip()] if rule[3] and rule[3].strip() else []
            first = first or next((t for t in current if not t.startswith(".")), None)
        elif variable := _VARIABLE.match(line.split("#", 1)[0]):
            variables[variable[1]], current = variable[2].strip(), []
    steps: list[str] = []
    pending, seen = list(goals or [first] if first else []), set()
    while pending and len(steps) < MAX_STEPS:
        target = pending.pop(0)
        if target not in seen:
            seen.add(target)
            deps, lines = rules.get(target, ([], []))
            pending[:0] = deps
            steps += lines
    return [_put_in(step, variables, 0) for step in steps]


def _put_in(line: str, variables: dict[str, str], depth: int) -> str:
    """make's references: the makefile's variables, the environment's (as ${X} for the shell), `$$` is `$`."""
    def value(m: re.Match) -> str:
        name = m[1] or m[2] or ""
        if m[0] == "$$":
            return "$"
        if name.startswith("shell "):
            return f"$({name[6:]})"
        if name in variables and depth < 8:
            return _put_in(variables[name], variables, depth + 1)
        return "${" + name + "}" if re.fullmatch(r"\w+", name) else UNKNOWN
    return _REFERENCE.sub(value, line)


def _scripts(tool: str, args: list[str], read: Read) -> list[str]:
    try:
        scripts = json.loads(read("package.json") or "{}").get("scripts")
    except (ValueError, AttributeError):
        return []
    if not isinstance(scripts, dict):
        return []
    words = [a for a in args if not a.startswith("-")]
    verb = words[0] if words else ("install" if tool == "yarn" else "")
    if verb in ("install", "i", "ci") and not words[1:]:  # installing the project runs its own install scripts
        names = _INSTALL
    else:
        name = words[1] if verb in ("run", "run-script") and words[1:] else _NPM_VERBS.get(verb) or (
            verb if tool in ("yarn", "pnpm") and verb in scripts else "")  # `yarn build`: the project's script
        names = [f"pre{name}", name, f"post{name}"] if name else []
    return [scripts[n] for n in names if isinstance(scripts.get(n), str)]
