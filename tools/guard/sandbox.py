"""The sandbox for code_run: bubblewrap in its own user namespace with every capability dropped.

Inside: `/` read-only; the workspace (and --allow-path folders) read-write except their `.git`, which stays
read-only (a hook or `core.fsmonitor` written there would run on the host at the user's next git command);
HOME, GA_HOME, /run and /tmp replaced by empty private folders, with the interpreter, the tools on PATH and
what GA_SANDBOX_READ names shown read-only again; ~/.ssh, ~/.aws and other credential stores hidden even when
the workspace holds them; fresh /dev and /proc; its own pid namespace (the tree dies with bwrap, and bwrap dies
with ga); no network unless GA_SANDBOX_NET=1.

As root, the process inside keeps uid 0 but holds no capability at all (effective and bounding sets empty,
no new privileges, no nested user namespaces): it cannot remount, load modules, change the network or signal
processes outside, and what it may write is only what is mounted writable. Where that cannot be set up,
code_run refuses to run rather than run unconfined under a flag that promised otherwise.
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ga.errors import ToolError

NETWORK_ENV = "GA_SANDBOX_NET"
READ_ENV = "GA_SANDBOX_READ"
"""Extra paths shown read-only inside the sandbox, separated by ':' (e.g. ~/.gitconfig:~/.cache/pip)."""
HIDDEN_IN_HOME = (".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker", ".config/gcloud", ".config/gh",
                  ".password-store", ".netrc", ".git-credentials", ".pgpass", ".pypirc", ".npmrc",
                  ".cargo/credentials", ".cargo/credentials.toml", ".local/share/keyrings")
"""Credential stores hidden wherever they would be visible (the workspace is HOME, a tool root shows them)."""
TOOLCHAINS_IN_HOME = (".rustup", ".cargo", ".pyenv", ".nvm", ".volta", ".bun", ".deno", ".local/bin", ".local/lib",
                      "go", ".sdkman", ".rbenv", ".gem", ".npm-global", ".conda", "miniconda3", "anaconda3")
"""Toolchains installed in HOME, shown read-only (beside the roots of PATH entries) so compilers keep working."""
ISOLATION = ["--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc",
             "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session"]


def network_allowed(environ: dict[str, str] | None = None) -> bool:
    """GA_SANDBOX_NET=1 lets sandboxed code reach the network (pip install, curl); default: no network."""
    return (os.environ if environ is None else environ).get(NETWORK_ENV, "") == "1"


@dataclass(frozen=True, kw_only=True)
class Layout:
    """What the sandbox shows, and how."""

    workspace: Path
    ga_home: Path
    home: Path = field(default_factory=Path.home)
    writable: tuple[Path, ...] = ()
    """Folders the user allowed besides the workspace (--allow-path): read-write, like the workspace."""
    readable: tuple[Path, ...] = ()
    """Paths the user named in GA_SANDBOX_READ: shown read-only."""
    network: bool = False


def layout_for(workspace: Path, ga_home: Path, allow_paths: list[Path], environ: dict[str, str] | None = None
               ) -> Layout:
    env = os.environ if environ is None else environ
    readable = tuple(Path(p).expanduser() for p in env.get(READ_ENV, "").split(os.pathsep) if p.strip())
    return Layout(workspace=workspace, ga_home=ga_home, writable=tuple(allow_paths), readable=readable,
                  network=network_allowed(env))


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise ToolError(
            "code_run cannot start: the run uses the sandbox but bubblewrap (bwrap) is not installed. "
            "Tell the user to install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
            "bubblewrap) or to run with --no-sandbox. Nothing was run.")
    return path


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> str:
    command = [bwrap, *ISOLATION, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--",
               "cat", "/proc/self/status"]
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


def problem() -> str:
    """Why the sandbox cannot hold on this host ("" when it can). Probed once per process."""
    path = shutil.which("bwrap")
    if path is None:
        return "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    return _probe(path)


def wrap(argv: list[str], *, layout: Layout, cwd: Path, read_only: list[Path]) -> list[str]:
    """The bwrap command line that runs argv in the sandbox; `read_only` extra paths (e.g. the script) stay visible."""
    bwrap = bwrap_path()
    if reason := _probe(bwrap):
        raise ToolError(f"code_run cannot start: the sandbox cannot hold here: {reason}. Tell the user, or ask "
                        "them to run with --no-sandbox. Nothing was run.")
    writable = [layout.workspace, *layout.writable]
    hidden = _hidden_roots(layout, writable)
    shown = [p for p in _shown(layout) if _under(p, [*hidden, Path("/tmp")]) and not _under(p, writable)]
    box = [bwrap, *ISOLATION, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for path in hidden:
        box += ["--tmpfs", str(path)]
    for path in _existing(shown):
        box += ["--ro-bind", str(path), str(path)]
    for path in _existing(writable):
        box += ["--bind", str(path), str(path)]
    for path in _existing([w / ".git" for w in writable]):
        box += ["--ro-bind", str(path), str(path)]
    for path in _existing(_secrets(layout, writable, shown)):
        box += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
    for path in read_only:  # after the private /tmp, so files kept under /tmp remain visible
        box += ["--ro-bind", str(path), str(path)]
    box += ["--chdir", str(cwd), "--setenv", "XDG_CACHE_HOME", "/tmp/.cache"]
    if not layout.network:
        box.append("--unshare-net")
    return [*box, "--", *argv]


def _hidden_roots(layout: Layout, writable: list[Path]) -> list[Path]:
    """HOME, GA_HOME, /run: replaced by empty folders, unless the workspace is (inside) one of them."""
    candidates = [layout.home, layout.ga_home, Path("/run"), Path("/var/run")]
    hidden = []
    for path in candidates:
        if path == Path("/") or path.is_symlink() or not path.is_dir() or _under(path, hidden):
            continue
        if any(w == path or path.is_relative_to(w) for w in writable):
            continue  # the workspace is this folder or holds it: its secrets are hidden one by one instead
        hidden.append(path)
    return sorted(hidden, key=lambda p: len(p.parts))


def _shown(layout: Layout) -> list[Path]:
    """What code needs from the hidden folders: the interpreter, the tools on PATH, what the user named."""
    prefixes = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    prefixes.add(Path(os.path.realpath(sys.executable)).parent.parent)
    user_site = Path(site.getusersitepackages()) if site.ENABLE_USER_SITE else None
    tools = [_tool_root(Path(p), layout.home) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    tools += [layout.home / name for name in TOOLCHAINS_IN_HOME]
    sop = layout.ga_home / "sop"  # helper scripts of SOPs; runs, memory and the policy stay hidden
    return [*sorted(prefixes), *filter(None, [user_site, *tools]), *layout.readable, sop]


def _tool_root(entry: Path, home: Path) -> Path | None:
    """~/.cargo/bin -> ~/.cargo; ~/.local/bin stays itself (~/.local keeps keyrings too); /tmp/v/bin -> /tmp/v."""
    if entry.is_relative_to(home) and entry != home:
        parts = entry.relative_to(home).parts
        return entry if parts[0] == ".local" else home / parts[0]
    return entry.parent if entry.name == "bin" else entry


def _secrets(layout: Layout, writable: list[Path], shown: list[Path]) -> list[Path]:
    """Credential stores and GA_HOME where they would still be visible, unless the user named them."""
    named = [*layout.readable, *layout.writable]
    found = [layout.home / p for p in HIDDEN_IN_HOME] + [layout.ga_home]
    visible = [*writable, *shown]
    return [p for p in found if _under(p, visible) and not _under(p, named)]


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


def _existing(paths: list[Path]) -> list[Path]:
    """The paths that exist, shallowest first, without those already inside an earlier one."""
    seen: list[Path] = []
    for path in sorted(paths, key=lambda p: len(p.parts)):
        if not _under(path, seen) and os.path.lexists(path):
            seen.append(path)
    return seen


def failure_hint(output_head: str) -> str:
    """bwrap prints `bwrap: ...` when it cannot build the sandbox."""
    if not output_head.startswith("bwrap: "):
        return ""
    reason = output_head.splitlines()[0]
    return (f"The sandbox could not start ({reason}). Tell the user: a path the sandbox binds may be missing, or "
            "the host forbids user namespaces; --no-sandbox runs without it.")
