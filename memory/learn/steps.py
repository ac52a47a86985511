"""What did a run's work, read from its trajectory: the tool calls that succeeded and change things, in order.

Reads (file_read, web_scan...) and failed calls are dropped here; exploration that changed nothing is dropped
later, by replaying without it (extract.py). A program the run wrote and then ran (`python3 solve.py`)
is one step: running that program, its text kept as it was when it ran."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

WORK_TOOLS = ("code_run", "file_write", "file_patch")
RUNS_FILE = re.compile(r"(?:^|[\s;&|(])(?:(?:python3?(?:\.\d+)?|bash|sh)\s+(?:-\S+\s+)*|\./)"
                       r"([\w./-]+\.(?:py|sh))(?=$|[\s;&|)])")
"""A command running a script file: `python3 solve.py`, `bash fix.sh`, `./run.sh`."""
PYTHON_ONLY = re.compile(r"(?:\s*(?:#[^\n]*|set -[a-z]+)\n)*\s*python3?(?:\s+-)?\s*<<-?\s*(['\"]?)(\w+)\1\n"
                         r"(?P<code>.*?)\n\2\s*", re.DOTALL)
"""A bash script that only feeds a Python program on stdin (`python3 - <<'EOF'`): that program is the step."""
TYPED = re.compile(r"\s*(?:echo(?:\s+-n)?|printf(?:\s+'%s\\n')?)\s+(['\"]?)([^'\"\n$`\\]*)\1\s*>\s*([\w./-]+)\s*")
"""A shell line that types a value into a file: `echo 42 > out.txt`."""


@dataclass(kw_only=True)
class Step:
    kind: str
    """python | bash (a code_run), write (file_write), patch (file_patch)."""
    code: str = ""
    path: str = ""
    """The file a write or patch changes, relative to the workspace."""
    content: str = ""
    mode: str = "overwrite"
    old: str = ""
    new: str = ""
    cwd: str = ""
    """A code_run's folder, relative to the workspace ('' for the workspace itself)."""
    programs: dict[str, str] = field(default_factory=dict)
    """Files the run wrote that this command runs: relative path → their text when it ran."""


def calls(events: list[dict]) -> list[tuple[str, dict, dict]]:
    """(tool, arguments, result event) of every call that has a result, in the order they ran."""
    asked: dict[str, tuple[str, dict]] = {}
    for e in events:
        if e.get("type") == "message" and e["message"].get("role") == "assistant":
            for call in e["message"].get("tool_calls") or []:
                try:
                    args = json.loads(call["function"].get("arguments") or "{}")
                except (json.JSONDecodeError, TypeError, RecursionError):
                    args = None
                asked[call["id"]] = (call["function"]["name"], args if isinstance(args, dict) else {})
    return [(*asked[e["id"]], e) for e in events if e.get("type") == "result" and e.get("id") in asked]


def work_steps(events: list[dict], workspace: str) -> list[Step] | str:
    """The steps that may have done the work, or why there are none to learn from."""
    steps: list[Step] = []
    written: dict[str, str] = {}
    printed: list[tuple[Step, str]] = []
    for tool, args, result in calls(events):
        if tool not in WORK_TOOLS or result.get("is_error"):
            continue
        step = _step(tool, args, workspace)
        if isinstance(step, str):
            return step
        step = _linked(step, printed)
        if step.kind in ("python", "bash") and (out := _output(str(result.get("content", "")))):
            printed.append((step, out))
        if step.kind in ("write", "patch"):
            written[step.path] = _applied(written.get(step.path), step)
        elif step.kind == "bash":
            for m in RUNS_FILE.finditer(step.code):
                path = _relative(m.group(1), step.cwd)
                if path in written:
                    step.programs[path] = written[path]
        steps.append(step)
    return steps or "the run did its work without code or file changes (nothing to replay)"


def _output(content: str) -> str:
    """What a successful code_run printed: its result without ga's status line and notes."""
    lines = content.split("\n")[1:]
    end = next((i for i, line in enumerate(lines) if line.startswith("note: ")), len(lines))
    text = "\n".join(lines[:end]).strip()
    return "" if text == "(no output)" else text


def _linked(step: Step, printed: list[tuple[Step, str]]) -> Step:
    """A value typed into a file (file_write, or `echo VALUE > FILE`) that an earlier program printed, whole or as
    its last line, becomes that program writing it: what was computed then typed is learnt as computed."""
    commands = "\n".join(line for line in step.code.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    typed = TYPED.fullmatch(commands) if step.kind == "bash" else None
    if typed:
        value, path, newline = typed.group(2).strip(), _relative(typed.group(3), step.cwd), "-n" not in commands
    elif step.kind == "write" and step.mode == "overwrite":
        value, path, newline = step.content.strip(), step.path, step.content.endswith("\n")
    else:
        return step
    if not value or "\n" in value:
        return step
    for program, out in reversed(printed):
        last = out.split("\n")[-1].strip()
        if program.cwd == "" and value in (out, last):
            return _writing(program, path, whole=value == out, newline=newline)
    return step


CAPTURE = "import io as _io, sys as _sys\n_sys.stdout = _io.StringIO()\n"
WRITE = """
_printed, _sys.stdout = _sys.stdout.getvalue().strip(), _sys.__stdout__
with open({path!r}, "w") as _f:
    _f.write({value}{newline})
"""
"""Around a Python program whose printed value the run then typed into a file: the program writes it itself."""


def _writing(program: Step, path: str, *, whole: bool, newline: bool) -> Step:
    """`program` writing what it prints (`whole`, else its last line) into `path`."""
    if program.kind == "python":
        value = "_printed" if whole else '_printed.split("\\n")[-1].strip()'
        code = CAPTURE + program.code.rstrip("\n") + "\n" + WRITE.format(
            path=path, value=value, newline=' + "\\n"' if newline else "")
        return Step(kind="python", code=code, programs=dict(program.programs))
    form, tail = "%s\\n" if newline else "%s", "" if whole else " | tail -n 1"
    code = f"printf '{form}' \"$({{ {program.code}\n}}{tail})\" > {shlex.quote(path)}"
    return Step(kind="bash", code=code, programs=dict(program.programs))


def programs(steps: list[Step]) -> set[str]:
    """Files the run wrote in order to run them: part of the procedure, not of its outputs."""
    return {path for step in steps for path in step.programs}


def _step(tool: str, args: dict, workspace: str) -> Step | str:
    if tool == "code_run":
        cwd = _inside(str(args.get("cwd") or ""), workspace)
        if cwd is None:
            return f"a program ran outside the workspace ({args.get('cwd')})"
        # the workspace's own path in the code becomes relative: the script runs in the next task's workspace
        code = re.sub(rf"{re.escape(workspace)}/", "", str(args.get("script", "")))
        code = re.sub(rf"{re.escape(workspace)}(?![\w.-])", ".", code)
        if m := re.search(rf"(?<![\w.-])(?:~/|{re.escape(str(Path.home()))}/)[^\s'\"]*", code):
            return f"a program reached outside the workspace ({m.group()})"
        only = PYTHON_ONLY.fullmatch(code) if args.get("type") == "bash" else None
        if only and (only.group(1) or not re.search(r"[$`\\]", only.group("code"))):  # what the shell left alone
            return Step(kind="python", code=only.group("code"), cwd=cwd)
        return Step(kind=args.get("type") if args.get("type") == "bash" else "python", code=code, cwd=cwd)
    path = _inside(str(args.get("path", "")), workspace)
    if not path:
        return f"the run wrote outside the workspace ({args.get('path')})"
    if tool == "file_write":
        return Step(kind="write", path=path, content=str(args.get("content", "")),
                    mode=str(args.get("mode") or "overwrite"))
    return Step(kind="patch", path=path, old=str(args.get("old_content", "")), new=str(args.get("new_content", "")))


def _inside(path: str, workspace: str) -> str | None:
    """`path` relative to the workspace ('' for the workspace); None when it points outside."""
    if not path or path in (".", workspace):
        return ""
    full = PurePosixPath(path if path.startswith("/") else f"{workspace}/{path}")
    parts: list[str] = []
    for part in full.parts[1:]:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    root = PurePosixPath(workspace).parts[1:]
    if tuple(parts[:len(root)]) != root:
        return None
    return "/".join(parts[len(root):])


def _relative(path: str, cwd: str) -> str:
    return str(PurePosixPath(cwd, path)) if cwd and not path.startswith("/") else path.removeprefix("./")


def _applied(text: str | None, step: Step) -> str:
    """A file's text after a write or patch (what the run's program file held when it ran)."""
    text = text or ""
    if step.kind == "patch":
        return text.replace(step.old, step.new, 1)
    return {"append": text + step.content, "prepend": step.content + text}.get(step.mode, step.content)
