"""The --sandbox for code_run: bubblewrap with the workspace read-write and everything else read-only.

Layout inside: / read-only, the workspace read-write, a private /tmp, fresh /dev and /proc, its own pid
namespace (so the whole tree dies with bwrap), and no network unless GA_SANDBOX_NET=1.
Works as root and, where the kernel allows unprivileged user namespaces, as a normal user.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ga.errors import ToolError

NETWORK_ENV = "GA_SANDBOX_NET"


def network_allowed(environ: dict[str, str] | None = None) -> bool:
    """GA_SANDBOX_NET=1 lets sandboxed code reach the network (pip install, curl); default: no network."""
    return (os.environ if environ is None else environ).get(NETWORK_ENV, "") == "1"


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise ToolError(
            "code_run cannot start: the run uses --sandbox but bubblewrap (bwrap) is not installed. "
            "Tell the user to install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
            "bubblewrap) or to run without --sandbox. Nothing was run.")
    return path


def wrap(argv: list[str], *, workspace: Path, cwd: Path, read_only: list[Path], network: bool) -> list[str]:
    """The bwrap command line that runs argv in the sandbox; `read_only` extra paths (e.g. the script) stay visible."""
    box = [bwrap_path(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
           "--bind", str(workspace), str(workspace)]
    for path in read_only:  # after the private /tmp, so files kept under /tmp remain visible
        box += ["--ro-bind", str(path), str(path)]
    box += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--chdir", str(cwd),
            "--setenv", "XDG_CACHE_HOME", "/tmp/.cache"]
    if not network:
        box.append("--unshare-net")
    return [*box, "--", *argv]


def failure_hint(output_head: str) -> str:
    """bwrap prints `bwrap: ...` when it cannot build the sandbox (e.g. user namespaces disabled)."""
    if not output_head.startswith("bwrap: "):
        return ""
    reason = output_head.splitlines()[0]
    return (f"The sandbox could not start ({reason}). On hosts that forbid unprivileged user namespaces, "
            "enable them (sysctl kernel.unprivileged_userns_clone=1) or run without --sandbox.")
