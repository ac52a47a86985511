"""A learnt script, written from a run's work steps: one Python file when one Python program did the work,
otherwise `run.sh`, each step in its own subshell as code_run ran it (beside any program file the run wrote).

With parameters, the task's values in the steps become the script's arguments: `sys.argv` in a Python file, shell
variables exported by run.sh (its Python steps read them from the environment). Without, the steps run as they
did (the replay that decides which steps did the work)."""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from memory.learn import lift_python, lift_shell
from memory.learn.literals import Literal, Parameter, parameters, said_in_task, task_literals
from memory.learn.steps import Step

ENTRY_SH = "run.sh"
HEREDOC = "LEARNT_STEP"


@dataclass(kw_only=True)
class Script:
    files: dict[str, str]
    """File name in scripts/ → text."""
    entry: str
    """The file to run: run.sh, or the one Python file."""
    parameters: list[Parameter] = field(default_factory=list)

    def command(self, folder: str, values: list[str] | None = None) -> str:
        """The command line that runs it from `folder` (the usage line with `values`, or the parameters' names)."""
        runner = "bash" if self.entry.endswith(".sh") else "python3"
        args = values if values is not None else [p.name for p in self.parameters]
        quoted = [shlex.quote(a) if values is not None else a for a in args]
        return " ".join([runner, shlex.quote(f"{folder}/{self.entry}"), *quoted])


def resolved(usage: str, folder: Path | None) -> str:
    """A usage line (`python3 scripts/main.py A B`, relative to its SKILL.md's folder, as Agent Skills write it)
    with the script's path made absolute for `folder`; an older usage with an absolute path as it is."""
    words = usage.split(" ", 2)
    if folder is None or len(words) < 2 or words[1].startswith(("/", "'/")):
        return usage
    return " ".join([words[0], shlex.quote(str(folder / shlex.split(words[1])[0])), *words[2:]])


class Lifter:
    """Finds the task's values in the steps, names them, and writes them as parameters."""

    def __init__(self, task: str, steps: list[Step], existed: set[str]):
        self.task = task
        self.literals = _literals(task, steps)
        used: dict[str, Literal] = {}
        for step in steps:  # a first pass only to learn which literals the steps use
            _render(step, lambda lit: used.setdefault(lit.value, lit) and "X", self.literals, [])
        self.parameters = parameters(list(used.values()), task, existed)
        self.names = {p.value: p.name for p in self.parameters}
        self.in_code: set[str] = set()
        """Parameters met inside code (lift_python.in_code): such a script is not learnt (extract.py)."""

    def name_of(self, lit: Literal) -> str:
        name = self.names.get(lit.value, "")
        if lit.in_code and name:
            self.in_code.add(name)
        return name

    def usable(self) -> list[Literal]:
        return [lit for lit in self.literals if lit.value in self.names]


def build(steps: list[Step], lifter: Lifter | None = None) -> Script:
    """The script of `steps`, its values lifted into parameters when a lifter is given."""
    params = lifter.parameters if lifter else []
    literals = lifter.usable() if lifter else []
    name_of = lifter.name_of if lifter else (lambda lit: "")
    if len(steps) == 1 and steps[0].kind == "python" and not steps[0].cwd:
        code = lift_python.lift(steps[0].code, literals, name_of) if literals else steps[0].code
        if code is not None:
            code = lift_python.with_header(code, lift_python.header(params, from_env=False)) + _said_py(params)
            return Script(files={"main.py": code.rstrip("\n") + "\n"}, entry="main.py", parameters=params)
    files: dict[str, str] = {}
    body = [_render(step, name_of, literals, params, files) for step in steps]
    head = ["#!/usr/bin/env bash", "# Learnt by ga from a verified run; each step runs as the run ran it.",
            'HERE="$(cd "$(dirname "$0")" && pwd)"']
    if params:
        head.append("export " + " ".join(f'{p.name}="${i}"' for i, p in enumerate(params, 1)))
    return Script(files={ENTRY_SH: "\n".join(head + body) + _said_sh(params) + "\n", **files}, entry=ENTRY_SH,
                  parameters=params)


# A script that writes its result into a file prints nothing: what it wrote is said, so the next run's model sees the
# result of the one call instead of guessing it (the 1.5B model overwrote the new sum with the task's example).
def _said_py(params: list[Parameter]) -> str:
    return "".join(f"\nprint(f'wrote {{{p.name}}}:', open({p.name}, encoding='utf-8', errors='replace')"
                   ".read(300).rstrip())" for p in params if p.name.startswith("OUTPUT_"))


def _said_sh(params: list[Parameter]) -> str:
    return "".join(f'\necho "wrote ${p.name}: $(head -c 300 "${p.name}")"'
                   for p in params if p.name.startswith("OUTPUT_"))


def _render(step: Step, name_of, literals: list[Literal], params: list[Parameter],
            files: dict[str, str] | None = None) -> str:
    """One step as run.sh text (or, with files None, only the lifting's side effect of naming literals)."""
    def params_of(names: list[str]) -> list[Parameter]:
        return [p for p in params if p.name in names]

    cd = f"cd {shlex.quote(step.cwd)} && " if step.cwd else ""
    if step.kind == "bash":
        code = step.code
        for path, text in step.programs.items():
            name = PurePosixPath(path).name
            lifted = _program(name, text, literals, name_of, params_of)
            if files is not None:
                files[name] = lifted
            code = re.sub(rf"(?<![\w/.-]){re.escape(path)}(?![\w/.-])", f'"$HERE/{name}"', code)
        lifted = lift_shell.lift(code, literals, name_of, params_of) if literals else code
        return f"(\n{cd}{lifted if lifted is not None else code}\n) || exit $?"
    if step.kind == "python":
        code = _python(step.code, literals, name_of, params_of)
        return f"(\n{cd}python3 - <<'{HEREDOC}'\n{code}\n{HEREDOC}\n) || exit $?"
    return f"python3 - <<'{HEREDOC}' || exit $?\n{_file_change(step, literals, name_of, params_of)}\n{HEREDOC}"


def _python(code: str, literals: list[Literal], name_of, params_of) -> str:
    used: list[str] = []
    lifted = lift_python.lift(code, literals, lift_shell.recording(name_of, used)) if literals else code
    if lifted is None:
        return code
    return lift_python.with_header(lifted, lift_python.header(params_of(used), from_env=True)).rstrip("\n")


def _program(name: str, text: str, literals: list[Literal], name_of, params_of) -> str:
    if name.endswith(".py"):
        return _python(text, literals, name_of, params_of) + "\n"
    return (lift_shell.lift(text, literals, name_of, params_of) if literals else None) or text


def _file_change(step: Step, literals: list[Literal], name_of, params_of) -> str:
    """A file_write or file_patch as a Python program (the values in its path and text lifted too)."""
    used: list[str] = []
    named = lift_shell.recording(name_of, used)
    path = _expression(step.path, literals, named)
    if step.kind == "patch":
        old, new = _expression(step.old, literals, named), _expression(step.new, literals, named)
        code = (f"path = Path({path})\ntext = path.read_text(encoding='utf-8')\nold = {old}\n"
                "if text.count(old) != 1:\n"
                "    sys.exit(f'{path}: the text to replace is there {text.count(old)} times, not once')\n"
                f"path.write_text(text.replace(old, {new}, 1), encoding='utf-8')")
    else:
        content = _expression(step.content, literals, named)
        opened = {"append": "'a'", "prepend": "'r+'"}.get(step.mode, "'w'")
        code = (f"path = Path({path})\npath.parent.mkdir(parents=True, exist_ok=True)\n"
                + (f"old = path.read_text(encoding='utf-8') if path.exists() else ''\n"
                   f"path.write_text({content} + old, encoding='utf-8')" if step.mode == "prepend" else
                   f"with path.open({opened}, encoding='utf-8') as f:\n    f.write({content})"))
    head = lift_python.header(params_of(used), from_env=True)
    return f"import sys\nfrom pathlib import Path\n{head}{code}"


def _expression(text: str, literals: list[Literal], name_of) -> str:
    """A Python expression for `text` with the literals it holds as names (an f-string, or a plain constant)."""
    if not literals:
        return repr(text)
    pieces = lift_shell.pieces(text, literals)
    if len(pieces) == 1 and isinstance(pieces[0], Literal):
        return name_of(pieces[0])
    values = [lift_python.formatted(p, name_of) for p in pieces]
    return ast.unparse(ast.JoinedStr(values=values)) if any(isinstance(p, Literal) for p in pieces) else repr(text)


def _literals(task: str, steps: list[Step]) -> list[Literal]:
    """The task's marked values, and the steps' whole constants that the task says in so many words."""
    found = {lit.value: lit for lit in task_literals(task)}
    for constant in _constants(steps):
        if constant not in found and (at := said_in_task(constant, task)) >= 0:
            found[constant] = Literal(value=constant, position=at, number=False)
    return sorted(found.values(), key=lambda lit: (-len(lit.value), lit.position))


def _constants(steps: list[Step]) -> set[str]:
    out: set[str] = set()
    for step in steps:
        texts = [step.code, *step.programs.values()] if step.kind in ("python", "bash") else []
        for text in texts:
            try:
                out |= {n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant)
                        and isinstance(n.value, str) and len(n.value) <= 200}
            except (SyntaxError, ValueError, RecursionError):
                out |= set(re.findall(r"[\w.-]+", text))
        if step.kind == "write":
            out.add(step.content.strip())
        if step.kind == "patch":  # the words a patch puts in ("set it to true")
            out |= set(re.findall(r"[\w.-]+", step.new))
    return out

