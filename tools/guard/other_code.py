"""One-liners in other interpreters (perl -e, node -e, ruby -e, php -r, lua -e, awk): read for what they run,
delete, move and write.

The policy does not parse these languages. It looks for the calls that reach a shell (`system`, `exec`,
backticks, `execSync`...), delete (`unlink`, `rmtree`, `rmSync`, `rm_rf`...), move (`rename`) or write
(`writeFileSync`, `open(F, '>', ...)`, `file_put_contents`...), reads their arguments when they are string
literals or the home folder (`$ENV{HOME}`, `os.homedir()`, `Dir.home`...), and checks them like the shell's;
an argument it cannot read counts as unknown. Code in a file (`perl x.pl`) is not read: the sandbox covers it.
"""

from __future__ import annotations

import os
import re

from tools.guard.places import UNKNOWN
from tools.guard.scanner import Scanner

INTERPRETERS = {"perl": ("-e", "-E"), "ruby": ("-e",), "node": ("-e", "--eval", "-p", "--print"),
                "nodejs": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "bun": ("-e", "--eval"),
                "php": ("-r",), "lua": ("-e",), "Rscript": ("-e",), "awk": (), "gawk": (), "mawk": (), "nawk": ()}
_HOME = re.compile(r"""\$ENV\{\s*['"]?HOME['"]?\s*\}|ENV\[\s*['"]HOME['"]\s*\]|process\.env\.HOME\b|"""
                   r"""process\.env\[\s*['"]HOME['"]\s*\]|(?:require\(\s*['"](?:node:)?os['"]\s*\)|\bos)\.homedir\(\)|"""
                   r"""Dir\.home\b|\bgetenv\(\s*['"]HOME['"]\s*\)|\$_SERVER\[\s*['"]HOME['"]\s*\]""")
_SHELL = re.compile(r"\b(?:system|exec|popen|shell_exec|passthru|proc_open|execSync|spawnSync|qx)\s*\(?\s*"
                    r"(?P<q>['\"])(?P<cmd>(?:\\.|(?!(?P=q)).)*)(?P=q)")
_CALL = re.compile(r"(?P<receiver>\b[A-Za-z_][\w.]*\.)?\b(?P<name>unlink(?:Sync)?|rmSync|rmdirSync|rmdir|rm_rf|rm_r|"
                   r"rmtree|remove_tree|remove|delete|rename(?:Sync)?|mv|move|writeFileSync|appendFileSync|"
                   r"writeFile|appendFile|file_put_contents|write|open|rm)\b\s*(?P<paren>\(?)")
_AMBIGUOUS = {"remove", "delete", "rm", "rmdir", "write", "open", "move", "mv", "writeFile", "appendFile"}
"""Names that are file operations only on a file API (`fs.rm`, `File.delete`, `os.remove`), or in perl itself."""
_FILE_APIS = re.compile(r"(^|\.)(fs|promises|fsPromises|File|FileUtils|Files|os|io|Dir|Pathname)\.$")
_RECURSIVE = {"rmSync", "rm_rf", "rm_r", "rmtree", "remove_tree", "rm", "rmdirSync"}
_DELETES = _RECURSIVE | {"unlink", "unlinkSync", "rmdir", "remove", "delete"}
_MOVES = {"rename", "renameSync", "mv", "move"}
_HOME_MARK = "\x01"
"""Stands for the home folder wherever the code names it, inside a string or not."""
_LITERAL = re.compile(r"""(?P<q>['"])(?P<text>(?:\\.|(?!(?P=q)).)*)(?P=q)|\x01""")


def inline_code(name: str, args: list[str]) -> tuple[str, list[str]] | None:
    """The code given on the command line and the operands after it, or None when the code is in a file."""
    flags = INTERPRETERS[name]
    code, rest, i = [], [], 0
    while i < len(args):
        a = args[i]
        bundled = name in ("perl", "ruby") and re.fullmatch(r"-[a-zA-Z]*[eE]", a)  # `-pe CODE`, `-lane CODE`
        if (a in flags or bundled) and i + 1 < len(args):
            code.append(args[i + 1])
            i += 2
            continue
        if not flags and not code and not a.startswith("-"):  # awk 'PROGRAM' files...
            code.append(a)
        elif not a.startswith("-") or a == "-":
            rest.append(a)
        elif not flags and a == "-f":
            return None
        i += 1
    return ("\n".join(code), rest) if code else None


def check(name: str, args: list[str], scan: Scanner, command: str) -> None:
    found = inline_code(name, args)
    if found is None:
        return
    code, operands = found
    if name in ("perl", "ruby") and any(re.match(r"-[a-zA-Z]*i", a) and a[1:2] not in "Mm" for a in args):
        # `perl -i -pe ...`, `perl -pi.bak -e ...`: edits its files in place
        for path in operands:
            scan.write(path, command)
    code = _HOME.sub(_HOME_MARK, code)
    for m in _SHELL.finditer(code):
        scan.bash(m["cmd"].replace("\\" + m["q"], m["q"]).replace(_HOME_MARK, "~"))
    for inner in re.findall(r"`([^`]*)`", code) if name in ("perl", "ruby", "php") else []:
        scan.bash(inner.replace(_HOME_MARK, "~"))
    for m in _CALL.finditer(code):
        receiver = m["receiver"] or ""
        if m["name"] in _AMBIGUOUS and not _FILE_APIS.search(receiver) and not (name == "perl" and not receiver):
            continue  # `map.delete(k)`, `list.remove(x)`: not files
        _call(m, code, scan, command)


def _call(m: re.Match, code: str, scan: Scanner, command: str) -> None:
    name, start = m["name"], m.end()
    end = _closing(code, start) if m["paren"] else _statement_end(code, start)
    paths = _paths(code[start:end])
    if name in _DELETES:
        for path in paths[:1] if name in ("rename", "renameSync") else paths or [UNKNOWN]:
            scan.delete(path, recursive=name in _RECURSIVE, command=command)
    elif name in _MOVES:
        moved = paths or [UNKNOWN]
        scan.delete(moved[0], recursive=True, command=command)
        for path in moved[1:2]:
            scan.write(path, command, strict=False)
    elif name == "open":
        text = code[start:end]
        if re.search(r"""['"]\+?[>aw]""", text) or re.search(r""",\s*['"][wa]\+?['"]""", text):
            for path in [p.lstrip("+>") for p in paths if p.strip("+<>wa")][-1:]:
                scan.write(path.strip(), command, strict=False)
    else:
        for path in paths[:1]:
            scan.write(path, command, strict=False)


def _paths(arguments: str) -> list[str]:
    """String literals among the arguments, literals joined by `+`, `.` or path.join(...) taken as one path."""
    paths, current, last = [], "", 0
    for m in _LITERAL.finditer(arguments):
        between = arguments[last:m.start()]
        text = (m["text"] if m["q"] else "~").replace(_HOME_MARK, "~")
        if current and re.fullmatch(r"\s*[+.]\s*", between):
            current += text
        elif current and re.fullmatch(r"\s*,\s*", between) and "join(" in arguments[:m.start()]:
            current = os.path.join(current, text)
        else:
            if current:
                paths.append(current)
            current = text
        last = m.end()
    if current:
        paths.append(current)
    return paths


def _closing(code: str, start: int) -> int:
    depth = 1
    for i in range(start, len(code)):
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        if depth == 0:
            return i
    return len(code)


def _statement_end(code: str, start: int) -> int:
    ends = [i for i in (code.find(";", start), code.find("\n", start), code.find("}", start)) if i >= 0]
    return min(ends, default=len(code))
