"""Short, specific hints for a failed code_run, read from the end of its output."""

from __future__ import annotations

import keyword
import os
import re
import shutil
import sys
from pathlib import Path

PIP_NAMES = dict(re.findall(r"(\S+)=(\S+)", (
    "cv2=opencv-python PIL=pillow yaml=pyyaml sklearn=scikit-learn bs4=beautifulsoup4 skimage=scikit-image "
    "dateutil=python-dateutil dotenv=python-dotenv jwt=pyjwt serial=pyserial usb=pyusb Crypto=pycryptodome "
    "OpenSSL=pyopenssl magic=python-magic docx=python-docx pptx=python-pptx fitz=pymupdf attr=attrs zmq=pyzmq "
    "git=gitpython google.protobuf=protobuf Levenshtein=python-levenshtein MySQLdb=mysqlclient "
    "psycopg2=psycopg2-binary win32api=pywin32 wx=wxpython telegram=python-telegram-bot slugify=python-slugify "
    "multipart=python-multipart jose=python-jose ldap=python-ldap Bio=biopython")))
"""Import names whose pip package is named otherwise."""
SHELL_BUILTINS = frozenset("cd export source set unset alias exec ulimit umask if then else elif fi case esac for "  # noqa: SIM905
                           "select while until do done in function time declare local let read return shift trap wait "
                           "eval printf echo test break continue".split())  # builtins and reserved words
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
_NOT_FOUND = re.compile(r"^(?:.*?: )?(?:line \d+: )?([^\s:]+): (?:command )?not found$", re.MULTILINE)
_TEXT_WORD = re.compile(r"[-*+>|]+|#+|\d+[.)]|\w+:")
"""A line's first word that is text, not a command: a list item, a heading, a numbered step, a `key:` line."""
_SPOKEN = re.compile(r"[A-Za-z][\w.-]*")  # a failing shell line's first word: copied output unless a program
_PAGE = "Read a page with web_scan URL alone (a block of that one line, or its tool call): its text comes back"
_IN_SHELL = {name: f"`{name}` is a tool, not a shell command: a script cannot call it. {how}." for name, how in {
    "web_scan": _PAGE, "web_execute_js": _PAGE, "file_read": "In a script, read a file with cat",
    "file_patch": "In a script, edit a file with sed -i",
    "file_write": "In a script, write a file with cat > FILE <<'EOF' ... EOF"}.items()}
"""ga's tools written as shell commands (a small model in the text format, which has only the shell)."""
_PY_SYNTAX = re.compile(r'File "[^"]*", line (\d+)\n(?:.*\n){0,3}?(SyntaxError|IndentationError|TabError): (.*)')
_SH_SYNTAX = re.compile(r"^(?!\s*(?:[gmn]?awk|sed|bc|jq)\b).*?line (\d+): (syntax error.*)", re.M)  # not awk's
_CODE = frozenset({".py", ".sh", ".bash", ".js", ".mjs", ".ts", ".rb", ".pl", ".php", ".lua", ".r", ".awk", ".sed"})
"""A missing file of these is a program to write; of any other (an input, a page) no content is suggested."""
_PORT_IN_USE = re.compile(r"address already in use|EADDRINUSE|port is already allocated|already in use", re.I)
_PORT = re.compile(r"(?:port\s*[=:]?\s*|:)(\d{2,5})\b", re.I)
_MISSING_FILE = re.compile(r"""(?:['"`]([^'"`\n]+)['"`]|(?:^|(?<=\s))([^\s'"`:]+)): (?:\[Errno 2\] )?No such file or """
                           r"""directory(?!: ['"])|No such file or directory: ['"]([^'"]+)['"]|([^\s'"`:]+/)['"`]?: """
                           r"""Not a directory""", re.MULTILINE)


NO_NETWORK = re.compile(r"Temporary failure in name resolution|Could not resolve host|Name or service not known|"
                         r"Network is unreachable|getaddrinfo (ENOTFOUND|EAI_AGAIN)|nodename nor servname")
_FETCH = re.compile(r"\b(?:curl|wget)\b[^\n]*?\bhttps?://")
_LOOPBACK = re.compile(r"https?://(?:127\.\d+\.\d+\.\d+|localhost|\[::1\])\b")
REFUSED = re.compile(r"Connection refused|ECONNREFUSED|Couldn't connect to server|Failed to connect to", re.I)
"""A connection refused: in the sandbox without network, by its own 127.0.0.1, not the host's (the user's servers)."""
OWN_LOOPBACK = ("the sandbox has its own network: 127.0.0.1 (localhost) inside it is not the host's, so a server "
                "running on the host (a database, a dev server) cannot be reached from here. Start the server in "
                "the same code_run, or tell the user the ways out: GA_SANDBOX_PORTS=PORT,... lets the host's ports "
                "they name through, GA_SANDBOX_NET=1 shares the host's whole network, --no-sandbox runs without it. "
                "To read a web page, use web_scan URL.")
OFFLINE = ("the sandbox has no network: do it offline, or tell the user that GA_SANDBOX_NET=1 allows the network "
           "(or --no-sandbox). To read a web page, use web_scan URL.")


def hints(output: str, exit_code: int | None, *, script: str, kind: str, sandbox: bool,
          network: bool = True, read_only: bool = False, cwd: Path | None = None,
          workspace: Path | None = None) -> list[str]:
    """Hints for the tail of the output (at exit 0: what the end hid); `read_only`: plan mode's; `cwd`: where it ran."""
    fetched = bool(_FETCH.search(script)) and (exit_code != 0 or not output.strip())  # curl -s: silent
    offline = sandbox and not network and (NO_NETWORK.search(output) or (fetched and not _LOOPBACK.search(script)))
    own_loopback = sandbox and not network and not offline and (REFUSED.search(output) or fetched)
    net = OWN_LOOPBACK if own_loopback else OFFLINE if offline else ""
    if exit_code == 0:  # ga's tool written as a command ("web_scan: not found"; echo), a missing file, no network
        tool = next((n for n in _NOT_FOUND.findall(output) if n in _IN_SHELL), "") if kind == "bash" else ""
        found = [_IN_SHELL[tool] if tool else "", _missing_file(output, cwd, cwd == workspace) if cwd else ""]
        return [f"hint: {h}" for h in [*found, net] if h]
    if read_only and (NO_NETWORK.search(output) or REFUSED.search(output) or _permission_denied(output, sandbox)):
        return ["hint: this is plan mode: code runs with the workspace read-only and no network, so it can look but "
                "not change or download anything. Put that step in your plan instead."]
    found = [_missing_module(output), _command_not_found(output, exit_code), _syntax_error(output, script, kind),
             _missing_file(output, cwd, cwd == workspace) if cwd else "",
             _permission_denied(output, sandbox), _port_in_use(output, script), _sandbox_limit(output, exit_code)
             if sandbox else "", net]
    return [f"hint: {h}" for h in found if h]


def _missing_module(output: str) -> str:
    if not (name := (_MISSING_MODULE.findall(output) or [""])[-1]):
        return ""
    package = PIP_NAMES.get(name) or PIP_NAMES.get(name.split(".")[0]) or name.split(".")[0].replace("_", "-")
    return (f"module `{name}` is not installed: install it with `{sys.executable} -m pip install {package}` "
            "(a bash code_run), then run again.")


def _command_not_found(output: str, exit_code: int | None) -> str:
    names = [n for n in _NOT_FOUND.findall(output) if "/" not in n or n.startswith(("./", "/"))]
    if not names:
        return "exit code 127 usually means a command was not found." if exit_code == 127 else ""
    name = names[-1]
    if name in _IN_SHELL:
        return _IN_SHELL[name]
    if _TEXT_WORD.fullmatch(name):
        return (f"`{name}` is not a command: this script holds text (list items, headings, a file's lines), not "
                "shell commands. To put text in a file, write it with a here-document: cat > FILE <<'EOF' (the "
                "whole new content) EOF; to change part of a file, use sed -i or python.")
    return (f"`{name}` is not installed or not on PATH: check with `command -v {name}`, install it "
            "(apt-get install / pip install / npm install -g), or do it another way.")


def _missing_file(output: str, cwd: Path, in_workspace: bool) -> str:
    """A file the script used, missing where it ran (not `cat a.txt/x`): a small model runs scripts not yet written."""
    names = [next(filter(None, m.groups())) for m in _MISSING_FILE.finditer(output)]
    lines = [n for n in names if ":" in n and (cwd / n.partition(":")[0]).is_file()]  # grep | xargs cp: FILE:LINE
    grep = (f"`{lines[0]}` is no file name: it is `{lines[0].partition(':')[0]}`, a colon and a line of it, as grep "
            "prints a match; `grep -l` prints only the names of the files that match. ") if lines else ""
    missing = [(w, p) for w in names if w not in lines and not re.search(r"[*?[]", w)  # `mv *.log x/`: none
               if (p := (cwd / w).resolve()).is_relative_to(cwd) and not (p == cwd or p.exists() or p.parent.is_file())]
    if not missing:
        return grep.strip()
    (written, path), where = missing[-1], "the workspace" if in_workspace else f"`{cwd}`"
    if written.endswith("/") or not path.parent.exists():  # `ls urgent/`, `echo 1 > out/n.txt`
        folder = (path if written.endswith("/") else path.parent).relative_to(cwd)
        said = f"the folder `{folder}` does not exist in {where}. If it is one to make, create it: mkdir -p {folder}"
    else:
        held, name = sorted(p.name for p in path.parent.iterdir() if p.name[0] != "."), path.relative_to(cwd)
        shown = f" (it holds: {', '.join(held[:8])}{', ...' * (len(held) > 8)})" * bool(held)
        write = f" If it is a program to write, write it first: cat > {name} <<'EOF' (its code) EOF."
        said = f"`{name}` does not exist in {where}{shown}.{write * (path.suffix.lower() in _CODE)}"
    return grep + (said[0].upper() + said[1:] if grep else said)


def shell_command(script: object) -> bool:
    """A shell command, not Python ("python3 -m unittest discover -s tests"): it does not compile as Python and its
    first word is a program on PATH or a shell builtin, never a Python keyword (ImageMagick's `import` is a program)."""
    first = script.split(maxsplit=1)[0] if isinstance(script, str) and script.split() else ""
    if not first or keyword.iskeyword(first) or not (first in SHELL_BUILTINS or shutil.which(first)):
        return False
    try:
        compile(script, "<script>", "exec")
    except SyntaxError:
        return True
    except ValueError:  # a NUL byte: let the run say what is wrong
        pass
    return False


def _syntax_error(output: str, script: str, kind: str) -> str:
    matches = (_PY_SYNTAX if kind == "python" else _SH_SYNTAX).findall(output)
    if not matches:
        return ""
    if kind == "python" and shell_command(script):
        return 'the script is a shell command, not Python: send it again with type="bash".'
    line, error, message = matches[-1] if kind == "python" else (matches[-1][0], "bash syntax error", matches[-1][1])
    lines, number = script.splitlines(), int(line)
    code = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    shown, first = f": `{code[:200]}`" if code else "", code.split(maxsplit=1)[0] if code else ""
    tip = (f"`{first}` is no command: a line of what a command prints is no part of a script; leave it out and run"
           " again." if kind == "bash" and _SPOKEN.fullmatch(first) and first not in SHELL_BUILTINS
           and not shutil.which(first) and not re.search(rf"\b{re.escape(first)}\s*\(\)", script) else "")
    return f"{error} at line {number} of the script{shown} — {message.strip()}. {tip or 'Fix that line and run again.'}"


def _permission_denied(output: str, sandbox: bool) -> str:
    if not any(s in output for s in ("Permission denied", "PermissionError", "Operation not permitted",
                                     "Read-only file system")):
        return ""
    tmp = "" if "Read-only file system" in output else ", and /tmp private"
    where = f" The sandbox makes everything outside the workspace read-only{tmp}." if sandbox else ""
    if sandbox and re.search(rf"{re.escape(os.path.expanduser('~'))}/(\.|bin/)\S*'?:? Read-only file system", output):
        return ("in the sandbox HOME's dotfiles, dot-folders and ~/bin are read-only, even when the workspace is HOME "
                "(a start-up file written there would run on the host later): put the file in the workspace's own "
                "folders, or tell the user the change to make.")
    if sandbox and re.search(r"\.git/\S*(lock|config|hooks)\S*'?:? Read-only file system|\.git\S*: Read-only", output):
        return ("in the sandbox the repository's .git is read-only (hooks and config written there would run on "
                "the host later): git can read but not commit, branch or configure. Leave the git step to the "
                "user and say so, or ask for a run with --no-sandbox.")
    return ("permission denied: check the path and its permissions; run scripts with `bash file.sh` / "
            f"`python file.py` or `chmod +x` them; write inside the workspace.{where}")


def _port_in_use(output: str, script: str) -> str:
    if (line := next((ln for ln in reversed(output.splitlines()) if _PORT_IN_USE.search(ln)), None)) is None:
        return ""
    if (port := _PORT.search(line) or _PORT.search(script)) is None:
        return "the port is already in use: pick another port, or find what holds it with `ss -ltnp` and stop it."
    number = port.group(1)
    return (f"port {number} is already in use: pick another port, or find what holds it with "
            f"`ss -ltnp | grep :{number}` (or `lsof -i :{number}`) and stop it if it is yours.")


_LIMITS = (
    (re.compile(r"File size limit exceeded|File too large|EFBIG"), "GA_SANDBOX_FILE_SIZE",
     "a file reached the sandbox's file size limit"),
    (re.compile(r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory|ENOMEM", re.I), "GA_SANDBOX_MEMORY",
     "the sandbox limits the memory of each process"),
    (re.compile(r"No space left on device|ENOSPC"), "GA_SANDBOX_TMP",
     "the sandbox's private /tmp, /dev/shm and HOME are small (write big files in the workspace instead)"),
    (re.compile(r"fork: (retry|Resource temporarily unavailable)|can't start new thread|EAGAIN"), "GA_SANDBOX_PROCS",
     "the sandbox limits the number of processes"),
)
_SIGXFSZ = 25


def _sandbox_limit(output: str, exit_code: int | None) -> str:
    """A limit of the sandbox was reached: say which, and which variable raises it (the user's call)."""
    for pattern, variable, what in _LIMITS:
        if pattern.search(output) or (variable == "GA_SANDBOX_FILE_SIZE" and exit_code in (128 + _SIGXFSZ, -_SIGXFSZ)):
            return (f"{what}: do with less, or tell the user that {variable} raises it (e.g. {variable}="
                    f"{'4096' if variable == 'GA_SANDBOX_PROCS' else '32G'}; 0: no limit).")
    return ""
