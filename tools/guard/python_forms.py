"""The command policy's literal Python forms, read with `ast`: deletes (`shutil.rmtree`, `os.remove`, `Path.unlink`),
moves, writes (`open(path, 'w')`, `Path.write_text`), shell commands (`os.system`, `subprocess`), `os.fork` in a loop.
Paths built from literals and the home folder are read (`Path.home() / '.bashrc'`); a computed value passes."""

from __future__ import annotations

import ast
import os
from typing import Any

from tools.guard.rules import REFUSE, UNKNOWN, check_delete, check_write

_SHELL_CALLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput"}
_PROCESS_CALLS = {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
                  "subprocess.Popen"}
_DELETE_CALLS = {"shutil.rmtree": True, "os.remove": False, "os.unlink": False, "os.rmdir": False}
_MOVE_CALLS = {"shutil.move", "os.rename", "os.replace"}
_SAME = {"os.path.expanduser", "os.path.abspath", "os.path.realpath", "os.path.normpath", "str", "os.fspath",
         "pathlib.Path", "Path", "pathlib.PurePath"}  # calls whose value is, as a path, their first argument


def check(source: str, scan: Any) -> None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return  # it will not run either; the SyntaxError reaches the model
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}" if isinstance(node, ast.ImportFrom) else a.name
    forms = _Forms(scan, aliases)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            forms.call(node)
        elif isinstance(node, ast.While | ast.For) and any(
                isinstance(n, ast.Call) and forms.name(n.func) == "os.fork" for n in ast.walk(node)):
            scan.command = ast.unparse(node)[:200]
            scan.flag(REFUSE, "fork-bomb", f"`{scan.command}` forks inside a loop")


class _Forms:
    def __init__(self, scan: Any, aliases: dict[str, str]):
        self.scan, self.aliases = scan, aliases

    def call(self, node: ast.Call) -> None:
        name, args, scan = self.name(node.func), node.args, self.scan
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        on = self.value(node.func.value) if isinstance(node.func, ast.Attribute) else UNKNOWN  # Path(p).unlink()
        scan.command = ast.unparse(node)[:200]
        if name in _SHELL_CALLS | _PROCESS_CALLS and args:  # a list is one command's words, a string a script
            words = args[0].elts if isinstance(args[0], ast.List | ast.Tuple) and name in _PROCESS_CALLS else None
            scan.bash(self.value(args[0])) if words is None else scan.argv([self.value(e) for e in words])
        elif name in _DELETE_CALLS and args:
            check_delete(scan, self.value(args[0]), recursive=_DELETE_CALLS[name])
        elif method in ("unlink", "rmdir") and not args and not name.startswith("os."):
            check_delete(scan, on, recursive=False)
        elif name in _MOVE_CALLS and len(args) > 1:
            check_delete(scan, self.value(args[0]), recursive=True)
            check_write(scan, self.value(args[1]))
        elif method in ("write_text", "write_bytes") and not name.startswith(("os.", "sys.")):
            check_write(scan, on)
        elif name in ("open", "io.open") or (method == "open" and isinstance(node.func.value, ast.Call | ast.BinOp)):
            args = list(args) if name in ("open", "io.open") else [node.func.value, *args]  # Path(p).open('a')
            mode = args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            if args and mode is not None and any(c in self.value(mode) for c in "wax+"):
                check_write(scan, self.value(args[0]))

    def name(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            return f"{self.name(node.value)}.{node.attr}"
        if isinstance(node, ast.Call):  # Path(x).unlink -> pathlib.Path().unlink
            return self.name(node.func) + "()"
        return "?"

    def value(self, node: ast.expr) -> str:
        """The string an expression makes, with what only run time knows as UNKNOWN."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            return node.value.decode("utf-8", "replace") if isinstance(node.value, bytes) else node.value
        if isinstance(node, ast.JoinedStr):
            return "".join(self.value(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Div):  # "a" + "b", Path / "part"
            join = os.path.join if isinstance(node.op, ast.Div) else str.__add__
            return join(self.value(node.left), self.value(node.right))
        if isinstance(node, ast.Subscript) and self.name(node.value) == "os.environ":
            return "~" if self.value(node.slice) == "HOME" else UNKNOWN
        if not isinstance(node, ast.Call):
            return UNKNOWN
        name, args = self.name(node.func), [self.value(a) for a in node.args]
        if name in ("pathlib.Path.home", "Path.home") or (name in ("os.getenv", "os.environ.get") and args == ["HOME"]):
            return "~"
        if name in ("os.path.join", "posixpath.join") and args:
            return os.path.join(*args)
        if name in _SAME and args:
            return args[0]
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("expanduser", "resolve", "absolute"):
            return self.value(node.func.value)
        return UNKNOWN
