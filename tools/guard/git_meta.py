"""git's metadata in the sandbox: what exists stays read-only, what a command creates is made harmless after it.

git runs commands from a repository's own files (hooks; config keys such as core.fsmonitor, core.pager, alias.x =
!cmd, filter drivers, include.path): written in the sandbox, they would run on the host at the user's next git
command. So, in every folder code_run may write: before the command, every `.git`, `.gitmodules`, folder git would
take for a repository (HEAD beside objects/ and refs/) and git config in HOME is mounted read-only, except
repositories this run created; after it, in every repository not mounted read-only, hooks are moved aside and config
keys outside a short list of harmless ones are removed (the original kept as `config.disabled-by-ga`), following a
`.git` file or `commondir` within the writable folders. A new `.gitmodules` is left alone (git takes only URLs and
paths from it since 2.24)."""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ga.tooling.boundary.protected import GIT_IN_HOME, GIT_NAMES, is_git_dir

DISABLED = ".disabled-by-ga"
SAFE_KEYS = (
    "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates", "core.ignorecase",
    "core.precomposeunicode", "core.symlinks", "core.autocrlf", "core.eol", "core.safecrlf", "core.quotepath",
    "core.sharedrepository", "core.compression", "core.bigfilethreshold", "extensions.objectformat",
    "extensions.refstorage", "extensions.worktreeconfig", "remote.*.url", "remote.*.pushurl", "remote.*.fetch",
    "remote.*.push", "remote.*.tagopt", "remote.*.prune", "remote.*.mirror", "branch.*.remote", "branch.*.merge",
    "branch.*.rebase", "branch.*.pushremote", "branch.*.description", "user.name", "user.email",
    "init.defaultbranch", "submodule.*.url", "submodule.*.active", "submodule.*.branch", "pull.rebase", "pull.ff",
    "push.default", "fetch.prune", "merge.ff", "status.showuntrackedfiles", "log.date", "gc.auto", "index.version",
    "color.ui", "i18n.commitencoding", "i18n.logoutputencoding")
"""Config keys git never turns into a command (fnmatch patterns on the lowercased key)."""
_TRANSPORTS = ("ext::", "fd::")
"""Remote helpers that run a command of the URL's choosing (off by default in git, but not everywhere)."""
_CONFIGS = ("config", "config.worktree")


@dataclass(kw_only=True)
class GitGuard:
    """Per run (a ToolContext resource): the repositories its commands created, which stay writable."""

    home: Path
    made: set[Path] = field(default_factory=set)
    seen: dict[tuple[Path, ...], list[Path]] = field(default_factory=dict)
    """What the last walk found, by roots: only the run's sandboxed commands change git metadata between two of
    them (the file tools may not), so the walk after one command serves as the walk before the next."""

    def read_only(self, roots: list[Path]) -> list[Path]:
        """What to mount read-only for the next command: the git metadata that exists, but the run's own repos."""
        found = self.seen.get(tuple(roots))
        found = find(roots, self.home) if found is None else found
        # a link cannot be mounted over (bwrap would follow it); what it points at is judged where it lies
        return [p for p in found if p not in self.made and not p.is_symlink()]

    def disarm(self, roots: list[Path], kept: list[Path]) -> list[str]:
        """After a command: make every repository it could write harmless; returns what changed, for the model."""
        changed: list[str] = []
        found = self.seen[tuple(roots)] = find(roots, self.home)
        for path in found:
            if path in kept:
                continue
            if path.name not in (".gitmodules", *GIT_IN_HOME) and not (path.name == ".git" and not path.is_dir()):
                self.made.add(path)
            changed += _disarm(path, roots, kept)
        return changed

    def close(self) -> None:
        pass


def find(roots: list[Path], home: Path) -> list[Path]:
    """Git metadata in the folders: repositories (by name or by shape), `.git` files and links, `.gitmodules`,
    git config in HOME. Symlinked folders are not entered (the sandbox mounts them where they point)."""
    found: list[Path] = []
    stack = [r for r in roots if r.is_dir()]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        names = {e.name for e in entries}
        if "HEAD" in names and ("commondir" in names or {"objects", "refs"} <= names) and is_git_dir(folder):
            found.append(folder)
            continue
        for entry in entries:
            if entry.name in GIT_NAMES:
                found.append(Path(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    for root in roots:
        found += [home / name for name in GIT_IN_HOME if (home / name).is_relative_to(root)
                  and os.path.lexists(home / name)]
    return sorted(set(found))


def _disarm(path: Path, roots: list[Path], kept: list[Path]) -> list[str]:
    if path.name == ".gitmodules":
        return []
    if path.name in GIT_IN_HOME:
        return _sanitise(path / "config" if path.is_dir() else path, roots)
    if path.name == ".git" and not path.is_dir():  # a file `gitdir: X` or a link: what it points at
        target = _pointed(path)
        return _disarm_dir(target, roots, kept) if target is not None else []
    return _disarm_dir(path, roots, kept)


def _disarm_dir(folder: Path, roots: list[Path], kept: list[Path], depth: int = 0) -> list[str]:
    """A repository's own folder, unless it lies outside the writable folders or was mounted read-only (then the
    command could not have changed it: it is the user's, as the user left it)."""
    if not _inside(folder, roots) or _inside(folder, kept) or not folder.is_dir():
        return []
    changed: list[str] = []
    hooks = folder / "hooks"
    if hooks.is_symlink() or (hooks.is_dir() and any(not n.endswith(".sample") for n in os.listdir(hooks))):
        aside = aside_name(hooks)
        os.rename(hooks, aside)
        changed.append(f"{hooks}: moved to {aside.name} (git would run its hooks)")
    for name in _CONFIGS:
        changed += _sanitise(folder / name, roots)
    common = folder / "commondir"
    if common.is_file() and depth < 2:
        target = (folder / common.read_text(errors="replace").strip()).resolve()
        if target != folder:
            changed += _disarm_dir(target, roots, kept, depth + 1)
    return changed


def _sanitise(config: Path, roots: list[Path]) -> list[str]:
    """Keep only the harmless keys of a git config file; the original is kept beside it, disabled."""
    if not os.path.lexists(config):
        return []
    entries = None if config.is_symlink() or not config.is_file() else _entries(config)

    def safe(key: str, value: str) -> bool:  # a submodule's worktree (../../../lib) is fine within the folders
        if key.lower() == "core.worktree":
            return _inside((config.parent / value).resolve(), roots)
        return _safe(key, value)
    unsafe = [k for k, v in entries if not safe(k, v)] if entries is not None else ["(unreadable)"]
    if not unsafe:
        return []
    aside = aside_name(config)
    os.rename(config, aside)
    if entries is not None:
        config.write_text(_render([(k, v) for k, v in entries if safe(k, v)]), encoding="utf-8")
    return [f"{config}: {', '.join(sorted(set(unsafe)))} removed (git would run it); the original is {aside.name}"]


def _entries(config: Path) -> list[tuple[str, str]] | None:
    """(key, value) pairs as git reads them, or None when git cannot (then the whole file goes aside)."""
    git = shutil.which("git")
    if git is None:
        return None
    env = {"PATH": os.environ.get("PATH", ""), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "HOME": os.devnull}
    try:
        done = subprocess.run([git, "config", "--file", str(config), "--no-includes", "--list", "-z"], cwd="/",
                              env=env, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    pairs = [item.decode("utf-8", "surrogateescape").partition("\n") for item in done.stdout.split(b"\0") if item]
    return [(key, value) for key, _, value in pairs]


def _safe(key: str, value: str) -> bool:
    key = key.lower()
    if key.endswith((".url", ".pushurl")) and value.lower().startswith(_TRANSPORTS):
        return False
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in SAFE_KEYS)


def _render(entries: list[tuple[str, str]]) -> str:
    lines, section = [], None
    for key, value in entries:
        head, _, name = key.rpartition(".")
        top, _, sub = head.partition(".")
        if (top, sub) != section:
            section = (top, sub)
            lines.append(f'[{top} "{_quote(sub)}"]' if sub else f"[{top}]")
        lines.append(f'\t{name} = "{_quote(value)}"')
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def _pointed(gitfile: Path) -> Path | None:
    try:
        if gitfile.is_symlink():
            return gitfile.resolve()
        first = gitfile.read_text(errors="replace").split("\n", 1)[0]
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    return (gitfile.parent / first.removeprefix("gitdir:").strip()).resolve()


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


def aside_name(path: Path) -> Path:
    n, aside = 1, path.with_name(path.name + DISABLED)
    while os.path.lexists(aside):
        n += 1
        aside = path.with_name(f"{path.name}{DISABLED}-{n}")
    return aside
