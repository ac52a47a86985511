"""One sandbox per run: what a code_run call starts in the background lives on until the run ends (a sandbox per
call would end its pid namespace, and every background process with it, when the call's command exits).

bubblewrap runs KEEPER inside once, with the run's layout (sandbox.wrap). Each call's program is CLIENT, outside: it
hands the keeper the call's request (argv, cwd, environment, the script's file) and its own output pipe over a Unix
socket; the keeper starts the command inside with that pipe as its output and sends back the exit code, which the
client exits with. A timeout or Ctrl-C still kills the call's own tree (its marker); the run's end kills the box."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from contextlib import ExitStack
from pathlib import Path

from tools.guard import sandbox, sandbox_ports
from tools.process import lifetime

KEEPER = r"""
import contextlib, json, os, socket, subprocess, sys, threading

def serve(conn):
    pipe, files = None, []
    try:
        _, fds, _, _ = socket.recv_fds(conn, 16, 1)
        pipe = fds[0]
        request = b""
        while data := conn.recv(65536):
            request += data
        request = json.loads(request)
        for path, text in request["files"].items():
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            files.append(path)
        try:
            proc = subprocess.Popen(request["argv"], cwd=request["cwd"], env=request["env"], stdin=subprocess.DEVNULL,
                                    stdout=pipe, stderr=pipe, start_new_session=True)
        except OSError as e:
            os.write(pipe, f"{request['argv'][0]}: {e.strerror}\n".encode())
            code = 127
        else:
            os.close(pipe)
            pipe = None
            code = proc.wait()
        conn.sendall(str(code).encode())
    except (OSError, ValueError):
        pass
    finally:
        for path in files:
            with contextlib.suppress(OSError):
                os.unlink(path)
        if pipe is not None:
            os.close(pipe)
        conn.close()

listener = socket.socket(fileno=int(sys.argv[1]))
while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""

CLIENT = r"""
import os, signal, socket, sys
path, request_path, log = sys.argv[1:4]
with open(request_path, "rb") as f:
    request = f.read()
os.unlink(request_path)
answer = b""
try:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    socket.send_fds(conn, [b"r"], [1])
    conn.sendall(request)
    conn.shutdown(socket.SHUT_WR)
    while data := conn.recv(64):
        answer += data
except OSError:
    pass
if not answer:
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            said = f.read()[-2000:].strip()
    except OSError:
        said = ""
    sys.stderr.write("ga: the run's sandbox is not running" + (f" (bubblewrap said: {said})" if said else "") + "\n")
    sys.exit(125)
code = int(answer)
if code < 0:  # killed by a signal: the client ends the same way
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""

SOCKET_PATH_MAX = 100
"""A Unix socket's path has room for 107 bytes: a long TMPDIR (a bench trial's) gets the folder in /tmp instead."""


def _private_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="ga-box-"))
    if len(str(folder / "keeper.sock").encode()) <= SOCKET_PATH_MAX:
        return folder
    folder.rmdir()
    return Path(tempfile.mkdtemp(prefix="ga-box-", dir="/tmp"))


class Box:
    """The run's sandbox, kept between code_run calls. A ToolContext resource: close() at the run's end."""

    def __init__(self, layout: sandbox.Layout, processes: lifetime.Lifetime, env: dict[str, str],
                 ports: tuple[int, ...]):
        self.layout, self.ports, self.run_id = layout, ports, processes.run_id
        self.folder = _private_folder()  # 0700: the keeper's socket and the requests
        self.socket, self.log = self.folder / "keeper.sock", self.folder / "box.log"
        self._stack, self._stop, self._started = ExitStack(), threading.Event(), threading.Event()
        self._error: BaseException | None = None
        self.proc: subprocess.Popen | None = None
        try:
            bridge = self._stack.enter_context(sandbox_ports.host_bridge(ports))
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(self.socket))
            listener.listen(16)
        except BaseException:
            self.close()
            raise
        with listener:
            argv = [sys.executable, "-I", "-S", "-c", KEEPER, str(listener.fileno())]
            argv = sandbox_ports.inside(argv, bridge, ports) if bridge else argv
            boxed = processes.contain(sandbox.wrap(argv, layout=layout, cwd=layout.workspace,
                                                   read_only=[bridge] if bridge else []), layout.limits.procs)
            env = {**env, lifetime.MARKER: processes.marker()}
            # held by a thread of its own: the box's parent-death signal follows the thread that started it
            threading.Thread(target=self._hold, args=(boxed, env, listener.fileno()), daemon=True).start()
            self._started.wait()
        if self._error is not None:
            self.close()
            raise self._error

    def _hold(self, argv: list[str], env: dict[str, str], listener: int) -> None:
        try:
            argv, tie = lifetime.tie(argv, os.getpid())
            with open(self.log, "wb") as log:
                self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                             pass_fds=[listener], start_new_session=True,
                                             preexec_fn=tie)  # noqa: PLW1509 (only without setpriv)
        except BaseException as e:
            self._error = e
        finally:
            self._started.set()
        self._stop.wait()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def command(self, argv: list[str], *, cwd: Path, env: dict[str, str], files: list[Path]) -> list[str]:
        """The client's command line that runs argv in the box; `files` (the script) are copied in for the call."""
        inside = {str(p): f"/tmp/{p.name}" for p in files}  # the box's private /tmp, whatever TMPDIR says here
        request = {"argv": [inside.get(a, a) for a in argv], "cwd": str(cwd), "env": env,
                   "files": {inside[str(p)]: p.read_text(encoding="utf-8") for p in files}}
        fd, path = tempfile.mkstemp(prefix="request-", dir=self.folder)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(request, f)
        return [sys.executable, "-I", "-S", "-c", CLIENT, str(self.socket), path, str(self.log)]

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            lifetime.sweep_run(self.run_id)  # what the calls left running in it, then the box
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        self._stop.set()
        self._stack.close()
        shutil.rmtree(self.folder, ignore_errors=True)
