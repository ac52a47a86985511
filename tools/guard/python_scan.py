"""The command policy for Python scripts: shell commands, deletions, moves and writes found with `ast`.

Values the code computes at run time are unknown here and stand as ${UNKNOWN}; the path rules treat them
as empty, so `shutil.rmtree(f"{d}/")` still asks (it is `/` when d is empty), and a delete or move of a path
that does not start with a literal folder asks. A write to such a path passes (Python computes file names all
the time); a write to a literal path outside the workspace, or to a protected one, asks. Calls reached through
`getattr(module, name)` are resolved when the name is a literal, and judged by their arguments otherwise.
"""

from __future__ import annotations

import ast
import base64
import binascii
import os

from tools.guard.places import UNKNOWN, entries_below
from tools.guard.rules import is_device
from tools.guard.scanner import REFUSE, Scanner

_SHELL_CALLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput", "commands.getoutput"}
_PROCESS_CALLS = {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
                  "subprocess.Popen", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
                  "pty.spawn"}
_DELETE_CALLS = {"shutil.rmtree": True, "os.remove": False, "os.unlink": False, "os.rmdir": False,
                 "os.removedirs": False}
_MOVE_CALLS = {"shutil.move", "os.rename", "os.replace", "os.renames"}
_COPY_CALLS = {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "os.link", "os.symlink"}
_WRITE_METHODS = {"write_text", "write_bytes", "touch", "symlink_to", "hardlink_to"}
_LISTINGS = {"glob", "rglob", "iterdir", "scandir", "listdir", "walk", "os.listdir", "os.scandir", "os.walk",
             "glob.glob", "glob.iglob"}
_MODULES = {"os", "shutil", "subprocess", "pathlib", "sys", "posix", "builtins"}
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
        self.lists: dict[str, list[str]] = {}
        self.loops = 0

    def visit_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            self.variables[name] = self.value(node.value)
            callable_ = node.value
            if isinstance(callable_, ast.Attribute) or (isinstance(callable_, ast.Call) and
                                                         self.qualname(callable_.func) == "getattr"):
                self.aliases[name] = self.qualname(callable_)  # f = shutil.rmtree; f = getattr(os, n)
            if isinstance(node.value, ast.List | ast.Tuple):
                self.lists[name] = [self.value(e) for e in node.value.elts]
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            if isinstance(item.optional_vars, ast.Name):
                self.variables[item.optional_vars.id] = self.value(item.context_expr)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._loop(node)

    def visit_For(self, node: ast.For) -> None:
        if isinstance(node.target, ast.Name):  # for p in Path(d).glob("*.tmp"): what lies below d
            self.variables[node.target.id] = self._listed(node.iter)
        self._loop(node)

    def _loop(self, node: ast.AST) -> None:
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1

    def visit_Call(self, node: ast.Call) -> None:
        name = self.qualname(node.func)
        args = node.args
        command = ast.unparse(node)[:200]
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if name in _SHELL_CALLS and args:
            self.scan.bash(self.value(args[0]))
        elif name in _PROCESS_CALLS and args:
            self._process(args[0])
        elif name.startswith(("os.exec", "os.spawn", "os.posix_spawn")) and len(args) > 1:
            items = args[1].elts if isinstance(args[1], ast.List | ast.Tuple) else args[1:]
            self.scan.argv([self.value(a) for a in items if isinstance(a, ast.expr)])
        elif name in _DELETE_CALLS and args:
            self.scan.delete(self.value(args[0]), recursive=_DELETE_CALLS[name], command=command)
        elif method in ("unlink", "rmdir") and not args and not name.startswith("os."):
            self.scan.delete(self.value(node.func.value), recursive=False, command=command)
        elif (name in _MOVE_CALLS and len(args) > 1) or (method in ("rename", "replace") and len(args) == 1):
            source, dest = (args[0], args[1]) if name in _MOVE_CALLS else (node.func.value, args[0])
            self.scan.delete(self.value(source), recursive=True, command=command)
            self.scan.write(self.value(dest), command, strict=False)
        elif name in _COPY_CALLS and len(args) > 1:
            self.scan.write(self.value(args[1]), command, strict=False)
        elif method in _WRITE_METHODS and not name.startswith(("os.", "sys.")):
            self.scan.write(self.value(node.func.value), command, strict=False)
        elif name in ("open", "io.open", "builtins.open", "os.open") or method == "open":
            self._open(node, name, method, command)
        elif name == "os.fork" and self.loops:
            self.scan.flag(REFUSE, "fork-bomb", f"`{command}` forks inside a loop")
        elif name in ("exec", "eval", "compile") and args:
            code = self._decoded(args[0])
            if code is not None:
                self.scan.python(code)
        elif "?" in name:
            self._hidden(node, command)
        self.generic_visit(node)

    def _open(self, node: ast.Call, name: str, method: str, command: str) -> None:
        """open(path, "w"), Path(p).open("a"), os.open(path, os.O_WRONLY...), gzip.open(path, "wt")."""
        on_path = method == "open" and not (isinstance(node.func.value, ast.Name) and node.func.value.id in
                                            self.aliases)  # Path(p).open(mode), not gzip.open(path, mode)
        args = [node.func.value, *node.args] if on_path else list(node.args)
        mode = args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg in ("mode", "flags")),
                                                  None)
        if not args or mode is None:
            return
        text = self.value(mode)
        if not (any(c in text for c in "wax+") or any(f in ast.unparse(mode) for f in ("O_WRONLY", "O_RDWR"))):
            return
        path = self.value(args[0])
        if is_device(path):
            self.scan.flag(REFUSE, "overwrite-device", f"`{command}` writes onto a disk device")
        else:
            self.scan.write(path, command, strict=False)

    def _hidden(self, node: ast.Call, command: str) -> None:
        """getattr(shutil, name)(...): a call the policy cannot name, judged by the paths it is given."""
        for arg in node.args:
            value = self.value(arg)
            if UNKNOWN not in value and value not in ("", "."):
                self.scan.argv([UNKNOWN, value])

    def _process(self, first: ast.expr) -> None:
        if isinstance(first, ast.List | ast.Tuple):
            argv = [self.value(e) for e in first.elts]
        elif isinstance(first, ast.Name) and first.id in self.lists:
            argv = self.lists[first.id]
        else:
            self.scan.bash(self.value(first))
            return
        self.scan.argv(argv)

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

    def _listed(self, node: ast.expr) -> str:
        """What a loop over a listing yields: the paths below its folder (or the glob's own pattern)."""
        if isinstance(node, ast.Call):
            name = self.qualname(node.func)
            method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            if name in ("glob.glob", "glob.iglob") and node.args:
                return self.value(node.args[0])
            if method in ("glob", "rglob") and node.args and not name.startswith("glob."):
                pattern = self.value(node.args[0])
                return os.path.join(self.value(node.func.value), "**" if method == "rglob" else "", pattern)
            if name in _LISTINGS or method in _LISTINGS:
                folder = self.value(node.args[0]) if node.args else (
                    self.value(node.func.value) if method in ("iterdir", "glob") else ".")
                return entries_below(folder, False)
        return UNKNOWN

    def qualname(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            return f"{self.qualname(node.value)}.{node.attr}"
        if isinstance(node, ast.Call):  # Path(x).unlink -> pathlib.Path().unlink
            name = self.qualname(node.func)
            if name in ("__import__", "importlib.import_module") and node.args:
                return self.value(node.args[0])
            if name == "getattr" and len(node.args) >= 2:
                attr = self.value(node.args[1])
                owner = self.qualname(node.args[0])
                return f"{owner}.{attr}" if UNKNOWN not in attr else f"{owner}.?"
            if name in ("globals", "vars", "locals"):
                return "?"
            return name + "()"
        if isinstance(node, ast.Subscript):  # globals()["rmtree"], vars(shutil)[n]
            return "?"
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
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return os.path.dirname(self.value(node.value).rstrip("/"))
        return UNKNOWN

    def _call_value(self, node: ast.Call) -> str:
        name = self.qualname(node.func)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        args = [self.value(a) for a in node.args]
        if (name in ("os.path.join", "posixpath.join") and args) or (method == "joinpath" and args):
            return os.path.join(*([self.value(node.func.value)] if method == "joinpath" else []), *args)
        if name in ("os.path.expanduser", "os.path.expandvars", "os.path.abspath", "os.path.realpath",
                    "os.path.normpath", "str", "pathlib.Path", "Path", "os.fspath", "pathlib.PurePath",
                    "pathlib.PosixPath") and args:
            return args[0]
        if method in ("expanduser", "resolve", "absolute", "expandvars") and isinstance(node.func, ast.Attribute):
            return self.value(node.func.value)
        if name in ("os.path.dirname",) and args:
            return os.path.dirname(args[0])
        if name in ("pathlib.Path.home", "Path.home"):
            return "~"
        if name in ("os.getcwd", "pathlib.Path.cwd", "Path.cwd"):
            return "."
        if name in ("os.getenv", "os.environ.get") and args:
            return "$" + args[0]
        if name in ("tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.gettempdir", "tempfile.TemporaryDirectory",
                    "tempfile.NamedTemporaryFile"):
            return "/tmp/tmp0000"
        if method == "join" and isinstance(node.func, ast.Attribute) and node.args:
            parts = node.args[0]
            if isinstance(parts, ast.List | ast.Tuple):
                return self.value(node.func.value).join(self.value(e) for e in parts.elts)
        return UNKNOWN
