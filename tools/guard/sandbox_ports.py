"""GA_SANDBOX_PORTS=8799,5432: the host's loopback ports the user names, reachable from the sandbox's own network.

The sandbox has a network namespace of its own (no network unless GA_SANDBOX_NET=1): its 127.0.0.1 is not the
host's, so a test against the user's database or dev server is refused. For each port named, a bridge on the host
listens on a Unix socket in a private folder (0700) and connects what arrives to the host's 127.0.0.1:PORT; inside
the sandbox, before the command starts, a forwarder listens on 127.0.0.1:PORT and passes each connection to that
socket (the folder is bound in read-only: connecting needs no write). Only the ports named are reachable, only on the
host's loopback, only while the run lasts (its box: tools/process/box.py); plan mode forwards none.

Both sides are one standard-library program (FORWARDER), run with `python -I -S -c`: inside the sandbox ga's own
files may not be visible, only the interpreter."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ga.errors import ToolError

PORTS_ENV = "GA_SANDBOX_PORTS"
READY_TIMEOUT = 10.0

FORWARDER = r"""
import os, socket, struct, sys, threading, time

def pump(source, sink):
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)  # the other side hears the end; its reply still comes back
    except OSError:
        pass

def join(one, other):
    ways = [threading.Thread(target=pump, args=pair, daemon=True) for pair in ((one, other), (other, one))]
    for way in ways:
        way.start()
    for way in ways:
        way.join()
    one.close()
    other.close()

def serve(listener, connect):
    while True:
        try:
            accepted, _ = listener.accept()
        except OSError:
            return
        try:
            outgoing = connect()
        except OSError:  # nothing listens on the host's port: the program sees its connection reset
            accepted.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            accepted.close()
            continue
        threading.Thread(target=join, args=(accepted, outgoing), daemon=True).start()

def unix_to(path):
    def connect():
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.connect(path)
        return unix
    return connect

side, folder, ports = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3].split(",")]
listeners = []
for port in ports:
    if side == "host":  # a socket per port in the folder; each connection goes to the host's 127.0.0.1:PORT
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(os.path.join(folder, f"port-{port}.sock"))
        connect = (lambda p=port: socket.create_connection(("127.0.0.1", p), timeout=10))
    else:  # inside: 127.0.0.1:PORT of the sandbox's own network, to the socket the host listens on
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        connect = unix_to(os.path.join(folder, f"port-{port}.sock"))
    listener.listen(64)
    listeners.append((listener, connect))

def forward():
    for listener, connect in listeners:
        threading.Thread(target=serve, args=(listener, connect), daemon=True).start()

if side == "host":
    forward()
    print("ready", flush=True)
    parent = os.getppid()
    while os.getppid() == parent:  # ga went away without stopping the bridge: it goes too
        time.sleep(1)
elif os.fork() == 0:  # the forwarder: it lives until the sandbox's pid namespace ends with the command
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # none of the command's output pipes held open
        os.dup2(devnull, fd)
    forward()
    threading.Event().wait()
else:  # the command itself, in this process: its exit code and signals are the command's
    for listener, _ in listeners:
        listener.close()
    argv = sys.argv[sys.argv.index("--") + 1:]
    os.execvp(argv[0], argv)
"""
"""The bridge (`host FOLDER PORTS`) and the forwarder in front of the command (`inside FOLDER PORTS -- ARGV`)."""


def ports_from(environ: dict[str, str] | None = None) -> tuple[int, ...]:
    """The ports GA_SANDBOX_PORTS names (comma-separated), or a ToolError saying what is wrong with it."""
    given = (os.environ if environ is None else environ).get(PORTS_ENV, "").strip()
    ports = []
    for part in filter(None, (p.strip() for p in given.split(","))):
        if not part.isdigit() or not 0 < int(part) < 65536:
            raise ToolError(f"{PORTS_ENV}={given!r}: {part!r} is not a port (1-65535; e.g. {PORTS_ENV}=8799,5432). "
                            "Tell the user; nothing was run.")
        ports.append(int(part))
    return tuple(dict.fromkeys(ports))


@contextlib.contextmanager
def host_bridge(ports: tuple[int, ...]) -> Iterator[Path | None]:
    """The host's side for one code_run call: the folder of port-N.sock sockets (None when no port is named)."""
    if not ports:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="ga-ports-"))  # 0700: only this user reaches the bridge
    bridge = subprocess.Popen([sys.executable, "-I", "-S", "-c", FORWARDER, "host", str(folder),
                               ",".join(map(str, ports))], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        ready = select.select([bridge.stdout], [], [], READY_TIMEOUT)[0] and bridge.stdout.readline().strip()
        if ready != "ready":  # bound and listening before the command starts
            bridge.kill()
            raise ToolError(f"The bridge to the host's ports ({PORTS_ENV}) could not start: "
                            f"{bridge.communicate()[1].strip()[-300:] or 'no reason given'}. Nothing was run.")
        yield folder
    finally:
        bridge.kill()
        bridge.wait()
        shutil.rmtree(folder, ignore_errors=True)


def inside(argv: list[str], folder: Path, ports: tuple[int, ...]) -> list[str]:
    """argv behind the forwarder that runs inside the sandbox (it listens on the ports, then becomes argv)."""
    return [sys.executable, "-I", "-S", "-c", FORWARDER, "inside", str(folder), ",".join(map(str, ports)), "--", *argv]
