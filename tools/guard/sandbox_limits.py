"""The sandbox's limits: memory, processes and file size per program (rlimits), and the size of its private
folders (bounded tmpfs). Each has an environment variable to raise it; 0 means no limit.

Memory is RLIMIT_DATA, the private writable memory of each process (what malloc, brk and anonymous mappings take;
address space only reserved, as V8, Go and the JVM do, is not counted, so they start as usual). Processes are
RLIMIT_NPROC, which the kernel does not apply to root: as root, a pids cgroup holds the count where the host lets
ga make one (tools/process/cgroup.py). The file size is RLIMIT_FSIZE (a write past it fails with EFBIG, the
program gets SIGXFSZ). The private /tmp, /var/tmp, /dev/shm and HOME are each a tmpfs of the given size."""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass

from ga.errors import ToolError

MEMORY_ENV = "GA_SANDBOX_MEMORY"
PROCS_ENV = "GA_SANDBOX_PROCS"
FILE_SIZE_ENV = "GA_SANDBOX_FILE_SIZE"
TMP_SIZE_ENV = "GA_SANDBOX_TMP"
GIB = 1 << 30
DEFAULT_PROCS = 1024
DEFAULT_FILE_SIZE = 8 * GIB
DEFAULT_TMP_SIZE = GIB
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", re.IGNORECASE)
_SETRLIMIT = ("import os, resource, sys\n"
              "for name, value in zip(sys.argv[1].split(','), map(int, sys.argv[2].split(','))):\n"
              "    resource.setrlimit(getattr(resource, name), (value, value))\n"
              "os.execvp(sys.argv[3], sys.argv[3:])")
"""Where util-linux's prlimit is missing: the interpreter sets the limits, then becomes the program."""


@dataclass(frozen=True, kw_only=True)
class Limits:
    memory: int
    """Bytes of private writable memory per process (RLIMIT_DATA); 0: none."""
    procs: int
    """Processes (RLIMIT_NPROC, and a pids cgroup as root); 0: none."""
    file_size: int
    """Bytes one file may reach (RLIMIT_FSIZE); 0: none."""
    tmp_size: int
    """Bytes each private tmpfs may hold; 0: as the kernel sizes it (half the memory)."""


def parse_size(text: str, name: str) -> int:
    """`512M`, `4G`, `4GiB`, `1073741824` (bytes), `0` (no limit)."""
    m = _SIZE.fullmatch(text.strip())
    if m is None:
        raise ToolError(f"{name}={text!r} is not a size: give bytes or a number with K, M, G or T (e.g. {name}=4G), "
                        "or 0 for no limit. Tell the user; nothing was run.")
    return int(float(m.group(1)) * 1024 ** "_kmgt".index(m.group(2).lower() or "_"))


def limits_from(environ: dict[str, str] | None = None) -> Limits:
    env = os.environ if environ is None else environ
    procs = env.get(PROCS_ENV, "").strip()
    if procs and not procs.isdigit():
        raise ToolError(f"{PROCS_ENV}={procs!r} is not a number of processes (0: no limit). Tell the user; nothing "
                        "was run.")
    return Limits(memory=parse_size(env[MEMORY_ENV], MEMORY_ENV) if env.get(MEMORY_ENV) else default_memory(),
                  procs=int(procs) if procs else DEFAULT_PROCS,
                  file_size=parse_size(env[FILE_SIZE_ENV], FILE_SIZE_ENV) if env.get(FILE_SIZE_ENV)
                  else DEFAULT_FILE_SIZE,
                  tmp_size=parse_size(env[TMP_SIZE_ENV], TMP_SIZE_ENV) if env.get(TMP_SIZE_ENV) else DEFAULT_TMP_SIZE)


def default_memory() -> int:
    """Half the machine's memory, so one runaway program leaves the rest of the host working."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError):
        return 4 * GIB


def with_rlimits(argv: list[str], limits: Limits) -> list[str]:
    """argv run under the limits (a limit of 0 is left as it is); core dumps are off."""
    chosen = {"RLIMIT_DATA": limits.memory, "RLIMIT_NPROC": limits.procs, "RLIMIT_FSIZE": limits.file_size}
    chosen = {name: value for name, value in chosen.items() if value}
    chosen["RLIMIT_CORE"] = 0
    if prlimit := shutil.which("prlimit"):
        flags = {"RLIMIT_DATA": "--data", "RLIMIT_NPROC": "--nproc", "RLIMIT_FSIZE": "--fsize",
                 "RLIMIT_CORE": "--core"}
        return [prlimit, *(f"{flags[name]}={value}:{value}" for name, value in chosen.items()), "--", *argv]
    names, values = ",".join(chosen), ",".join(str(v) for v in chosen.values())
    return [sys.executable, "-I", "-S", "-c", _SETRLIMIT, names, values, *argv]


def describe(limits: Limits) -> str:
    """One line for hints: the limits and the variables that raise them."""
    def size(value: int) -> str:
        return "none" if not value else f"{value / GIB:.3g} GiB"
    return (f"memory {size(limits.memory)} per process ({MEMORY_ENV}), {limits.procs or 'no limit on'} processes "
            f"({PROCS_ENV}), files up to {size(limits.file_size)} ({FILE_SIZE_ENV}), private /tmp and HOME of "
            f"{size(limits.tmp_size)} each ({TMP_SIZE_ENV})")
