"""The command policy for Python scripts: find shell commands and deletions in the code with `ast`.

Values the code computes at run time are unknown here and stand as ${UNKNOWN}; the path rules
treat them as empty, so `shutil.rmtree(f"{d}/")` still asks (it is `/` when d is empty).
"""

from __future__ import annotations

import ast
import base64
import binascii
import os

from tools.guard.rules import is_device
from tools.guard.scanner import REFUSE, Scanner

UNKNOWN = "${UNKNOWN}"
_SHELL_CALLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput", "commands.getoutput"}
_PROCESS_CALLS = {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
                  "subprocess.Popen", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
                  "pty.spawn"}
_DELETE_CALLS = {"shutil.rmtree": True, "os.remove": False, "os.unlink": False, "os.rmdir": False,
                 "os.removedirs": False}
_LOOPS = (ast.While, ast.For, ast.AsyncFor)


def check(source: str, scan: Scanner) -> None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return  # it will not run either; the SyntaxError reaches the model
    _Visitor(scan, _aliases(tree)).visit(tree)


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local names of imported modules and functions: {"sp": "subprocess", "rmtree": "shutil.rmtree"}."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


class _Visitor(ast.NodeVisitor):
    def __init__(self, scan: Scanner, aliases: dict[str, str]):
        self.scan, self.aliases = scan, aliases
        self.variables: dict[str, str] = {}
        self.loops = 0

    def visit_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.variables[node.targets[0].id] = self.value(node.value)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._loop(node)

    def visit_For(self, node: ast.For) -> None:
        self._loop(node)

    def _loop(self, node: ast.AST) -> None:
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1

    def visit_Call(self, node: ast.Call) -> None:
        name = self.qualname(node.func)
        args = node.args
        command = ast.unparse(node)[:200]
        if name in _SHELL_CALLS and args:
            self.scan.bash(self.value(args[0]))
        elif name in _PROCESS_CALLS and args:
            self._process(args, node)
        elif name.startswith(("os.exec", "os.spawn", "os.posix_spawn")) and len(args) > 1:
            items = args[1].elts if isinstance(args[1], ast.List | ast.Tuple) else args[1:]
            self.scan.argv([self.value(a) for a in items if isinstance(a, ast.expr)])
        elif name in _DELETE_CALLS and args:
            self.scan.delete(self.value(args[0]), recursive=_DELETE_CALLS[name], command=command)
        elif name.endswith((".unlink", ".rmdir")) and isinstance(node.func, ast.Attribute) and not args:
            self.scan.delete(self.value(node.func.value), recursive=False, command=command)
        elif name == "os.fork" and self.loops:
            self.scan.flag(REFUSE, "fork-bomb", f"`{command}` forks inside a loop")
        elif name == "open" and args and is_device(self.value(args[0])) and self._writes(node):
            self.scan.flag(REFUSE, "overwrite-device", f"`{command}` writes onto a disk device")
        elif name in ("exec", "eval", "compile") and args:
            code = self._decoded(args[0])
            if code is not None:
                self.scan.python(code)
        self.generic_visit(node)

    def _process(self, args: list[ast.expr], node: ast.Call) -> None:
        first = args[0]
        if isinstance(first, ast.List | ast.Tuple):
            argv = [self.value(e) for e in first.elts]
            if argv and argv[0] == UNKNOWN:
                return
            self.scan.argv(argv)
        else:
            self.scan.bash(self.value(first))

    def _writes(self, node: ast.Call) -> bool:
        mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
        return mode is not None and any(c in self.value(mode) for c in "wa+")

    def _decoded(self, node: ast.expr) -> str | None:
        """exec("..."), exec(base64.b64decode("...")): the code, when it is literal."""
        decoders = ("base64.b64decode", "base64.decodebytes")
        if isinstance(node, ast.Call) and self.qualname(node.func) in decoders and node.args:
            try:
                return base64.b64decode(self.value(node.args[0])).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                return None
        if isinstance(node, ast.Attribute) and node.attr == "decode":
            return self._decoded(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "decode":
            return self._decoded(node.func.value)
        value = self.value(node)
        return None if UNKNOWN in value else value

    def qualname(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            return f"{self.qualname(node.value)}.{node.attr}"
        if isinstance(node, ast.Call):  # Path(x).unlink -> pathlib.Path().unlink
            name = self.qualname(node.func)
            if name in ("__import__", "importlib.import_module") and node.args:
                return self.value(node.args[0])
            return name + "()"
        return "?"

    def value(self, node: ast.expr) -> str:
        """The string an expression evaluates to, with what only run time knows as ${UNKNOWN}."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes | int):
            v = node.value
            return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
        if isinstance(node, ast.Name):
            return self.variables.get(node.id, UNKNOWN)
        if isinstance(node, ast.JoinedStr):
            return "".join(self.value(v.value) if isinstance(v, ast.FormattedValue) else self.value(v)
                           for v in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.value(node.left) + self.value(node.right)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path / "part"
            return os.path.join(self.value(node.left), self.value(node.right))
        if isinstance(node, ast.Call):
            return self._call_value(node)
        if isinstance(node, ast.Subscript) and self.qualname(node.value) == "os.environ":
            return "$" + self.value(node.slice)
        return UNKNOWN

    def _call_value(self, node: ast.Call) -> str:
        name = self.qualname(node.func)
        args = [self.value(a) for a in node.args]
        if name in ("os.path.join", "posixpath.join") and args:
            return os.path.join(*args)
        if name in ("os.path.expanduser", "os.path.expandvars", "os.path.abspath", "os.path.realpath", "str",
                    "pathlib.Path", "Path", "os.fspath", "pathlib.PurePath") and args:
            return args[0]
        if name in ("pathlib.Path.home", "Path.home"):
            return "~"
        if name in ("os.getcwd", "pathlib.Path.cwd", "Path.cwd"):
            return "."
        if name in ("os.getenv", "os.environ.get") and args:
            return "$" + args[0]
        if name.endswith(".join") and isinstance(node.func, ast.Attribute) and node.args:
            parts = node.args[0]
            if isinstance(parts, ast.List | ast.Tuple):
                return self.value(node.func.value).join(self.value(e) for e in parts.elts)
        return UNKNOWN
