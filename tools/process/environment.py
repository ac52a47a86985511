"""What a child program of code_run gets of the environment, and how ga keeps its own out of its children's reach.

Children get an allow-list (locale, terminal, paths, proxies, toolchain locations) plus what the user names in
GA_PASS_ENV, never a copy of ga's environment with a few names filtered out: DATABASE_URL or GH_PAT need no special
knowledge to stay out. ga's own environment stays readable in /proc/<ga>/environ for as long as it lives:
hide_own_environment() marks ga not dumpable and wipes there the values children would not get (os.environ keeps
them). A root child outside the sandbox could still read ga's memory (CAP_SYS_PTRACE): the sandbox closes that."""

from __future__ import annotations

import ctypes
import fnmatch
import os
import re
from collections.abc import Callable, Mapping

PASS_ENV = "GA_PASS_ENV"
"""Names (or globs) of extra variables children get, separated by commas or spaces: GA_PASS_ENV=DATABASE_URL,AWS_*."""
ALLOWED = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "COLORTERM", "NO_COLOR", "TZ",
    "TMPDIR", "TEMP", "TMP", "PWD", "HOSTNAME", "DISPLAY", "WAYLAND_DISPLAY", "EDITOR", "VISUAL", "PAGER",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE", "PYENV_ROOT", "PYENV_VERSION",
    "PYTHONPATH", "PYTHONHOME", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONDONTWRITEBYTECODE",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CACHE_DIR",
    "UV_INDEX_URL", "UV_CACHE_DIR", "NPM_CONFIG_REGISTRY", "NVM_DIR", "GOPATH", "GOROOT", "GOCACHE", "GOFLAGS",
    "CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "MAVEN_HOME", "GRADLE_HOME", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH",
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "MAKEFLAGS", "CUDA_HOME", "CUDA_VISIBLE_DEVICES",
    "OMP_NUM_THREADS", "HF_HOME", "TOKENIZERS_PARALLELISM", "MPLBACKEND", "CI", "DEBIAN_FRONTEND",
})
ALLOWED_PREFIXES = ("LC_", "XDG_", "GIT_AUTHOR_", "GIT_COMMITTER_")
_SPLIT = re.compile(r"[\s,]+")

PR_SET_DUMPABLE = 4
_STAT_ENV_START = 47
"""Index of env_start in /proc/self/stat after the `(comm)` field (field 50 of proc(5), 0-based from field 3)."""


def _allowed(environ: Mapping[str, str]) -> Callable[[str], bool]:
    """Whether children get a variable: the allow-list, or a name or glob GA_PASS_ENV gives."""
    passed = [n for n in _SPLIT.split(environ.get(PASS_ENV, "")) if n]
    return lambda name: name in ALLOWED or name.startswith(ALLOWED_PREFIXES) or any(
        fnmatch.fnmatchcase(name, p) for p in passed)


def child_env(environ: dict[str, str], **extra: str) -> dict[str, str]:
    """The environment for child code: the allow-list and GA_PASS_ENV's names, plus `extra`."""
    allowed = _allowed(environ)
    env = {k: v for k, v in environ.items() if allowed(k)}
    env.update(PYTHONUNBUFFERED="1", **extra)
    return env


def hide_own_environment() -> int:
    """Make ga not dumpable and wipe what children may not see from /proc/self/environ; returns entries wiped."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[_STAT_ENV_START]), int(fields[_STAT_ENV_START + 1])
    except (OSError, AttributeError, IndexError, ValueError):
        return 0  # not Linux, or a kernel that hides the addresses: nothing to wipe
    if not start or end <= start:
        return 0
    allowed = _allowed(os.environ)
    block = ctypes.string_at(start, end - start)
    wiped, offset = 0, 0
    for entry in block.split(b"\0"):
        name, eq, _value = entry.partition(b"=")
        if eq and not allowed(name.decode("utf-8", "replace")) and name in os.environb:
            os.environb[name] = os.environb[name]  # libc's environ now points at a copy on the heap
            ctypes.memset(start + offset, 0, len(entry))
            wiped += 1
        offset += len(entry) + 1
    return wiped
