"""Protected paths: places where a write takes effect later, outside the run, so no tool writes there unasked.

- git's metadata anywhere: a `.git` folder or file, `.gitmodules`, a folder git would take for a repository
  (HEAD beside objects/ and refs/, a bare or crafted one) or that the write would make one, and git's own
  configuration in HOME. A hook, or `core.fsmonitor` in a config, runs as the user's next git command, on the host,
  long after the run.
- ga's own code and the Python it runs on (its checkout or installed package, its virtualenv, the standard library
  and site-packages): a change there runs on the host the next time ga starts.
- ga's own configuration in GA_HOME: the command policy (`policy.json`, which decides what runs unattended),
  settings files, schedules (tasks that start by themselves) and the memory rules.
- for the file tools, HOME's dotfiles and dot-folders (`.bashrc`, `.profile`, `.local/bin`, `.config/autostart`,
  `.config/pip`...), whatever the workspace: shells, desktops and tools read them at start-up and run what they say.
  Not when the workspace itself lies in a dot-folder (`~/.dotfiles`, `~/.config/nvim`): the user chose those files.

A file tool's write there needs a human's approval (asked on a terminal, refused unattended); confirm mode
counts as approval, since the human already saw the change. Before that, `admit` refuses outright what the model
never reaches (hidden.py: credential stores, GA_HOME, the local model's key) and memory written outside
the memory path. code_run's policy flags the same paths (HOME's start-up files as outside the workspace), and all of
GA_HOME (tools/guard); inside the sandbox they are read-only or hidden, and git metadata a command creates is made
harmless after it (tools/guard/git_meta.py)."""

from __future__ import annotations

import fnmatch
import functools
import os
import site
import sys
import sysconfig
from pathlib import Path

from ga.config import Settings
from ga.errors import PermissionDenied
from ga.protocols import UI
from ga.tooling.boundary.hidden import Hidden

IN_GA_HOME = ("policy.json", "settings.*", "config.*", ".env", "schedule", "schedule/*", "memory/rules*",
              "memory/RULES*")
"""Globs relative to GA_HOME (a match on a folder covers what it holds)."""
OWN_CODE = ("ga", "tools", "memory", "sop", "bench/harness", "run.py", "pyproject.toml")
"""What of ga's checkout (or of the site-packages it is installed in) runs when ga starts."""
GIT_IN_HOME = (".gitconfig", ".config/git")
INSTRUCTIONS = ("AGENTS.md", "CLAUDE.md")
"""Agent instructions (ga/context/agents_md.py): protected in HOME and above the workspace, like start-up files."""
GIT_NAMES = (".git", ".gitmodules")
MEMORY = ("sop", "memory")
"""GA_HOME's folders the model writes through the memory path (start_long_term_update, then memory/guard.py)."""
_GIT = ("inside git's metadata: hooks and config written there run commands at the user's next git command, "
        "outside the run")


def why_protected(path: Path, ga_home: Path, home: Path | None = None) -> str:
    """Why `path` (absolute, normalised) is protected, or "" when it is not (HOME's start-up files: why_start_up)."""
    home = Path.home() if home is None else home
    if any(part in GIT_NAMES for part in path.parts) or makes_git_dir(path):
        return _GIT
    if any(path == home / name or path.is_relative_to(home / name) for name in GIT_IN_HOME):
        return "git's own configuration in HOME: what it sets runs at every git command of the user"
    if any(path == root or path.is_relative_to(root) for root in own_code()):
        return ("ga's own code or the Python it runs on: a change there runs on the host the next time ga "
                "starts")
    if path.is_relative_to(ga_home) and path != ga_home:
        relative = path.relative_to(ga_home)
        prefixes = [Path(*relative.parts[:n]).as_posix() for n in range(1, len(relative.parts) + 1)]
        if any(fnmatch.fnmatchcase(p, glob) for p in prefixes for glob in IN_GA_HOME):
            return "ga's own configuration (the command policy, settings, schedules or memory rules)"
    return ""


def why_start_up(path: Path, ga_home: Path, home: Path, workspace: Path) -> str:
    """Why `path` is one of HOME's dotfiles or dot-folders, or "": not in GA_HOME (rules of its own), nor in a
    workspace that itself lies in a dot-folder (the user chose those files)."""
    chosen = _in_dot_entry(workspace, home) and path.is_relative_to(workspace)
    if _in_dot_entry(path, home) and not chosen and not path.is_relative_to(ga_home):
        return "a dotfile or dot-folder of HOME: shells, desktops and tools read them at start-up and run what they say"
    if path.name in INSTRUCTIONS and (path.parent == home or (path.parent != workspace
                                                              and workspace.is_relative_to(path.parent))):
        return ("the agent instructions of HOME or of a folder above the workspace: every later run below it takes "
                "them as the user's own")
    return ""


def _in_dot_entry(path: Path, home: Path) -> bool:
    return path.is_relative_to(home) and path != home and path.relative_to(home).parts[0].startswith(".")


def is_git_dir(folder: Path) -> bool:
    """A folder git would use as a repository: HEAD with objects/ and refs/, or a worktree's HEAD and commondir."""
    try:
        if not (folder / "HEAD").is_file():
            return False
        return (folder / "commondir").is_file() or ((folder / "objects").is_dir() and (folder / "refs").is_dir())
    except OSError:
        return False


def makes_git_dir(path: Path) -> bool:
    """`path` lies in a folder git takes for a repository, or writing it would make one: HEAD, objects/ and refs/
    (or HEAD and commondir) written a call at a time (with `core.fsmonitor` in a config beside, git status runs it)."""
    for folder in (path, *path.parents):
        if folder == Path("/"):
            break

        def has(name: str, folder: Path = folder) -> bool:
            return path.is_relative_to(folder / name) or os.path.lexists(folder / name)
        if has("HEAD") and (has("commondir") or (has("objects") and has("refs"))):
            return True
    return False


@functools.lru_cache(maxsize=1)
def own_code() -> tuple[Path, ...]:
    """ga's code (checkout or installed package), the standard library, site-packages and ga's virtualenv."""
    root = Path(__file__).resolve().parents[3]  # ga/tooling/boundary/ → the checkout or site-packages
    paths = [root / name for name in OWN_CODE]
    scheme = sysconfig.get_paths()
    paths += [Path(scheme[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in scheme]
    paths += [Path(p) for p in site.getsitepackages()] + [Path(os.path.realpath(sys.executable)).parent]
    if site.ENABLE_USER_SITE:
        paths.append(Path(site.getusersitepackages()))
    if sys.prefix != sys.base_prefix:  # a virtualenv: its bin/ (python, ga's entry point) too
        paths.append(Path(sys.prefix))
    found = {p.resolve() for p in paths if p.exists()}
    return tuple(sorted(found, key=lambda p: len(p.parts)))


def hidden_for(settings: Settings, run_dir: Path | None, *, write: bool) -> Hidden:
    """The hidden places as the file tools see them: GA_HOME's SOPs and memory stay open (to read; to write, see
    admit), and so does this run's own folder, to read (full outputs the model is pointed to)."""
    memory = tuple(settings.home / name for name in MEMORY)
    return Hidden(home=Path.home(), ga_home=settings.home, named=tuple(settings.allow_paths),
                  open=memory if write or run_dir is None else (*memory, run_dir))


def admit(path: Path, settings: Settings, ui: UI, *, write: bool, interactive: bool, run_dir: Path | None = None,
          memory_open: bool = False) -> None:
    """Let a file tool read or write `path` (absolute, symlinks resolved, inside an allowed folder), or raise
    PermissionDenied: what the sandbox hides never (rule: hidden-path), memory only through the memory path
    (rule: memory-path), a protected path only with a human's approval (rule: protected-path)."""
    if reason := hidden_for(settings, run_dir, write=write).why(path):
        verb = "write" if write else "read"
        raise PermissionDenied(
            f"Refused to {verb} {path}: it is {reason} (rule: hidden-path). The file tools never reach it, whatever "
            "the workspace; nothing was done. Do the task without it, or ask the user.")
    if not write:
        return
    if not memory_open and any(path.is_relative_to(settings.home / name) for name in MEMORY):
        why = ("call start_long_term_update first: it shows the memory rules, then your writes there are checked "
               "for secrets and stamped with this run" if settings.learn else "memory is read-only in this run "
               "(--no-learn or GA_LEARN=0)")
        raise PermissionDenied(f"Refused to write {path}: SOPs and memory change only through the memory path "
                               f"(rule: memory-path); {why}. Nothing was written.")
    approve_write(path, settings, ui, interactive=interactive)


def approve_write(path: Path, settings: Settings, ui: UI, *, interactive: bool) -> None:
    """Let a file tool write `path`, or raise PermissionDenied (rule: protected-path)."""
    home = Path.home()
    reason = why_protected(path, settings.home, home) or why_start_up(path, settings.home, home, settings.workdir)
    if not reason or settings.mode == "confirm":
        return
    if interactive and not settings.autonomous:
        answer, _ = ui.approve(f"write to a protected path: {reason} (rule: protected-path)", str(path))
        if answer == "approve":
            return
        raise PermissionDenied(f"The user did not approve writing {path} (rule: protected-path; {reason}). "
                               "Nothing was written. Leave it alone, or ask the user to make this change.")
    raise PermissionDenied(
        f"Refused to write {path}: it is {reason} (rule: protected-path), and only a human may approve that; "
        "no human is at a terminal. Nothing was written. Leave it alone, or ask the user to change it themselves.")
