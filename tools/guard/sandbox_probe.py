"""Whether bubblewrap can build code_run's sandbox on this host: installed, allowed to make a user namespace, and
able to leave the process inside with no capability at all; and whether it can bound a tmpfs's size. Each is probed
once per process, by running bwrap with the same isolation flags the sandbox uses (sandbox.py)."""

from __future__ import annotations

import functools
import shutil
import subprocess

from ga.errors import ToolError

ISOLATION = ["--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc",
             "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session"]


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise ToolError(
            "code_run cannot start: the run uses the sandbox but bubblewrap (bwrap) is not installed. "
            "Tell the user to install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
            "bubblewrap) or to run with --no-sandbox. Nothing was run.")
    return path


@functools.lru_cache(maxsize=4)
def probe(bwrap: str) -> str:
    """Why this bubblewrap cannot build the sandbox ("" when it can)."""
    command = [bwrap, *ISOLATION, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "cat",
               "/proc/self/status"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap could not be started ({e})"
    if done.returncode != 0:
        return (f"bubblewrap cannot build the sandbox here ({done.stderr.strip().splitlines()[-1:] or ['no output']}"
                f"[0]); on hosts that forbid user namespaces, allow them (sysctl user.max_user_namespaces, "
                "kernel.unprivileged_userns_clone=1 or kernel.apparmor_restrict_unprivileged_userns=0)")
    caps = dict(line.split(":\t", 1) for line in done.stdout.splitlines() if line.startswith("Cap"))
    held = {k: v.strip() for k, v in caps.items() if k in ("CapEff", "CapPrm", "CapBnd") and int(v, 16)}
    if held or not caps:
        return f"bubblewrap could not drop the capabilities of the sandboxed process ({held or 'unknown'})"
    return ""


@functools.lru_cache(maxsize=4)
def sized_tmpfs(bwrap: str) -> bool:
    """Whether this bubblewrap bounds a tmpfs (--size: 0.7 and later, not when installed setuid)."""
    command = [bwrap, *ISOLATION, "--ro-bind", "/", "/", "--size", "65536", "--tmpfs", "/tmp", "--", "true"]
    try:
        return subprocess.run(command, capture_output=True, timeout=20, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def problem() -> str:
    """Why the sandbox cannot hold on this host ("" when it can). Probed once per process."""
    path = shutil.which("bwrap")
    if path is None:
        return "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    return probe(path)
