"""The sandbox for code_run: bubblewrap in its own user namespace with every capability dropped (docs/sandbox.md).

Inside: the system read-only (/etc without what only root may read); the workspace and --allow-path folders
read-write but for git's metadata, ga's own code and the Python it runs on (git_meta.py) and HOME's start-up files
(home_files.py); the interpreter, PATH's tools and GA_SANDBOX_READ read-only; HOME, /tmp, /var/tmp, /dev/shm and /run
private and bounded; credential stores and shell histories hidden; GA_HOME absent but for its SOPs; its own pid
namespace; no network unless GA_SANDBOX_NET=1; limits from sandbox_limits.py. In plan mode the writable folders are
read-only too and there is no network. Root inside keeps uid 0 but no capability. Where this cannot be set up
(sandbox_probe.py), code_run refuses to run. Here: the Layout, the bwrap command line (wrap), and what code inside
may see or write of the host (shown_inside, writable_inside)."""

from __future__ import annotations

import functools
import os
import pwd
import site
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ga.errors import ToolError
from ga.tooling.boundary.hidden import Hidden
from ga.tooling.boundary.protected import own_code
from tools.guard.home_files import startup_entries
from tools.guard.sandbox_limits import Limits, limits_from, with_rlimits
from tools.guard.sandbox_probe import ISOLATION, bwrap_path, probe, sized_tmpfs

NETWORK_ENV = "GA_SANDBOX_NET"
READ_ENV = "GA_SANDBOX_READ"
"""Extra paths shown read-only inside the sandbox, separated by ':' (e.g. ~/.gitconfig:~/.cache/pip)."""
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys", "/nix", "/snap")
"""The host's folders shown read-only: programs, libraries and their configuration."""
PRIVATE = ("/tmp", "/var/tmp", "/dev/shm", "/run")
TOOLCHAINS_IN_HOME = (".rustup", ".cargo", ".pyenv", ".nvm", ".volta", ".bun", ".deno", ".local/bin", ".local/lib",
                      "go", ".sdkman", ".rbenv", ".gem", ".npm-global", ".conda", "miniconda3", "anaconda3")
"""Toolchains installed in HOME, shown read-only (beside the roots of PATH entries) so compilers keep working."""


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
    kept: tuple[Path, ...] = ()
    """Paths inside the writable folders kept read-only (git's metadata, found by git_meta)."""
    network: bool = False
    limits: Limits | None = None
    read_only: bool = False
    """Plan mode: the workspace and the allowed folders are read-only too, and there is no network."""

    @property
    def roots(self) -> list[Path]:
        return [self.workspace, *self.writable]


def layout_for(workspace: Path, ga_home: Path, allow_paths: list[Path], environ: dict[str, str] | None = None,
               kept: list[Path] | None = None, *, read_only: bool = False, offline: bool = False) -> Layout:
    env = os.environ if environ is None else environ
    readable = tuple(Path(p).expanduser() for p in env.get(READ_ENV, "").split(os.pathsep) if p.strip())
    network = network_allowed(env) and not read_only and not offline
    return Layout(workspace=workspace, ga_home=ga_home, writable=tuple(allow_paths), readable=readable,
                  kept=tuple(kept or ()), network=network, limits=limits_from(env),
                  read_only=read_only)


def wrap(argv: list[str], *, layout: Layout, cwd: Path, read_only: list[Path],
         writable_files: list[Path] = ()) -> list[str]:
    """The bwrap command line that runs argv in the sandbox; `read_only` extra paths (e.g. the script) stay visible,
    `writable_files` (the check's report) writable. Mounts are made in order, a later one on top of an earlier one."""
    bwrap = bwrap_path()
    if reason := probe(bwrap):
        raise ToolError(f"code_run cannot start: the sandbox cannot hold here: {reason}. Tell the user, or ask "
                        "them to run with --no-sandbox. Nothing was run.")
    writable, limits = layout.roots, layout.limits or limits_from()
    box = [bwrap, *ISOLATION, *_system(), "--dev", "/dev", "--proc", "/proc"]
    size = ["--size", str(limits.tmp_size)] if limits.tmp_size and sized_tmpfs(bwrap) else []
    for path in _private(layout, writable):
        box += [*size, "--tmpfs", str(path)]
    box += ["--remount-ro", "/dev"]  # after /dev/shm: /dev itself is no place to store anything
    shown = [p for p in _shown(layout) if not _under(p, [*writable, *SYSTEM])]
    for path in _existing(shown):
        box += ["--ro-bind", str(path), str(path)]
    for path in _existing(writable):
        box += ["--ro-bind" if layout.read_only else "--bind", str(path), str(path)]
    startup = startup_entries(layout.home, writable, _path_entries())
    for path in _existing(startup):  # HOME's start-up files, when the workspace shows them (home_files.py)
        box += ["--ro-bind", str(path), str(path)]
    for path in _existing([w for w in writable if _under(w, startup) and w not in startup]):
        box += ["--ro-bind" if layout.read_only else "--bind", str(path), str(path)]  # named inside one: writable
    for path in _existing([p for p in [*layout.kept, *own_code()] if _under(p, writable)]):
        box += ["--ro-bind", str(path), str(path)]
    for path in _existing(_secrets(layout, writable, shown)):
        box += _mask(path)
    for path in read_only:  # after the private /tmp, so files kept under /tmp remain visible
        box += ["--ro-bind", str(path), str(path)]
    for path in writable_files:
        box += ["--bind", str(path), str(path)]
    box += ["--remount-ro", "/", "--chdir", str(cwd), "--setenv", "XDG_CACHE_HOME", "/tmp/.cache"]
    if not layout.network:
        box.append("--unshare-net")
    # the limits are set inside: RLIMIT_NPROC set before bwrap would also cap the user's own processes outside
    return [*box, "--", *with_rlimits(argv, limits)]


@functools.lru_cache(maxsize=1)
def _system() -> tuple[str, ...]:
    """The host's system folders, read-only, with /etc's root-only files masked. Read once per process (a file
    made root-only in /etc later is masked from the next ga on)."""
    args: list[str] = []
    for name in SYSTEM:
        if os.path.islink(name):  # merged /usr: /bin -> usr/bin
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    for path in _root_only(Path("/etc")):
        args += _mask(path)
    return tuple(args)


def _root_only(top: Path) -> list[Path]:
    """What under `top` other users may not read (shadow, sudoers, ssh host keys, ssl/private...)."""
    found, stack = [], [str(top)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            need = 0o005 if stat.S_ISDIR(mode) else 0o004
            if not stat.S_ISLNK(mode) and mode & need != need:
                found.append(Path(entry.path))
            elif stat.S_ISDIR(mode):
                stack.append(entry.path)
    return sorted(found)


def _mask(path: Path) -> list[str]:
    if path.is_dir() and not path.is_symlink():  # empty, and read-only: nothing to fill
        return ["--tmpfs", str(path), "--remount-ro", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def _private(layout: Layout, writable: list[Path]) -> list[Path]:
    """HOME and the scratch folders: empty and private, unless the workspace is (inside) one of them (then it is
    shown itself, and its secrets are hidden one by one)."""
    found: list[Path] = []
    for path in [Path(p) for p in PRIVATE] + [layout.home]:  # HOME exists even when it lies in /tmp
        if path == Path("/") or path.is_symlink() or path in found:
            continue
        if any(w == path or path.is_relative_to(w) for w in writable):
            continue
        found.append(path)
    return sorted(found, key=lambda p: len(p.parts))


def _shown(layout: Layout) -> list[Path]:
    """What code needs besides the system: the interpreter, the tools on PATH, what the user named, SOP helpers;
    with the network on, the resolver's files where /etc/resolv.conf points into /run."""
    prefixes = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    prefixes.add(Path(os.path.realpath(sys.executable)).parent.parent)
    user_site = Path(site.getusersitepackages()) if site.ENABLE_USER_SITE else None
    tools = [_tool_root(p, layout.home) for p in _path_entries()]
    tools += [layout.home / name for name in TOOLCHAINS_IN_HOME]
    sop = layout.ga_home / "sop"  # helper scripts of SOPs; runs, memory and the policy stay hidden
    resolver = Path(os.path.realpath("/etc/resolv.conf")).parent if layout.network else None
    return list(dict.fromkeys([*sorted(prefixes), *filter(None, [user_site, *tools, resolver]), *layout.readable,
                               sop]))


def _path_entries() -> list[Path]:
    return [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]


def _tool_root(entry: Path, home: Path) -> Path | None:
    """What a PATH entry needs shown: the prefix above a bin/ (/opt/x/bin -> /opt/x, ~/.nvm/versions/node/v20/bin
    -> its version, ~/.config/composer/vendor/bin -> vendor), else the entry itself; never a home or a folder holding
    one, nor a whole folder at a home's top (~/.config keeps rclone's secrets and browsers' cookies): ~/.cargo/bin
    and ~/bin stay themselves. A relative entry, HOME or a folder holding it shows nothing."""
    homes = _homes(home)
    if not entry.is_absolute() or any(h == entry or h.is_relative_to(entry) for h in homes):
        return None
    top = entry.parent if entry.name in ("bin", ".bin") else entry
    if len(top.parts) <= 2 or top.parent in homes or any(h == top or h.is_relative_to(top) for h in homes):
        return entry
    return top


@functools.lru_cache(maxsize=4)
def _homes(home: Path) -> frozenset[Path]:
    """HOME, root's and every login user's home folder (PATH may name /home/other/bin); system accounts' homes
    (/bin, /var/www) are no one's files."""
    try:
        others = {Path(p.pw_dir) for p in pwd.getpwall() if (p.pw_uid == 0 or p.pw_uid >= 1000)
                  and p.pw_dir not in ("", "/", "/nonexistent")}
    except OSError:
        others = set()
    return frozenset({home, *others})


def _secrets(layout: Layout, writable: list[Path], shown: list[Path]) -> list[Path]:
    """The hidden places (ga/tooling/boundary/hidden.py: credential stores, histories, GA_HOME, the local model's
    key) where they would still be visible, unless the user named them."""
    found = Hidden(home=layout.home, ga_home=layout.ga_home, named=(*layout.readable, *layout.writable)).places()
    visible = [*writable, *shown, *SYSTEM]
    return [p for p in found if _under(p, visible)]


def _under(path: Path, roots: list[Path | str]) -> bool:
    """path is one of roots or inside one (on strings: pathlib's is_relative_to costs ~50 µs a call here)."""
    text = str(path)
    return any(text == root or text.startswith(root if root.endswith("/") else root + "/") for root in map(str, roots))


def _existing(paths: list[Path]) -> list[Path]:
    """The paths that exist, shallowest first, without those already inside an earlier one."""
    seen: list[Path] = []
    for path in sorted(set(paths), key=lambda p: str(p).count("/")):
        if not _under(path, seen) and os.path.lexists(path):
            seen.append(path)
    return seen


def writable_inside(path: Path, layout: Layout) -> bool:
    """Whether code in the sandbox may write `path`, as wrap() mounts it: the private folders (but what is shown
    in them), the workspace and the allowed folders (but what is kept read-only or hidden in them)."""
    writable = layout.roots
    shown = [p for p in _shown(layout) if not _under(p, [*writable, *SYSTEM])]
    startup = startup_entries(layout.home, writable, _path_entries())
    if _under(path, [*layout.kept, *own_code(), *_secrets(layout, writable, shown)]):
        return False
    if _under(path, startup) and not _under(path, [w for w in writable if _under(w, startup)]):
        return False
    if _under(path, writable):
        return not layout.read_only
    return _under(path, _private(layout, writable)) and not _under(path, shown)


def shown_inside(path: Path, layout: Layout) -> bool:
    """Whether the sandbox shows `path` of the host at all (the workspace, the system, what it shows read-only)."""
    if _under(path, [*layout.roots, *_shown(layout)]):
        return True
    return not _under(path, _private(layout, layout.roots)) and _under(path, list(SYSTEM))
