"""The workspace as it was before the run changed it, kept in the run folder so a learnt script can be replayed on it.

Taken once, just before the run's first call that may change files (a run that only reads never pays for it),
and only while the workspace is small: a repository with its dependencies is not copied, and then nothing is
learnt from the run (said in one line). Heavy folders that programs make (.git, virtualenvs, caches) are skipped."""

from __future__ import annotations

import filecmp
import os
import shutil
import stat
import tempfile
from pathlib import Path

FOLDER = "before"
MAX_FILES = 2_000
MAX_BYTES = 64 * 1024 * 1024
SKIPPED = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
                     ".pytest_cache", ".ruff_cache", ".tox", ".cache", ".ipynb_checkpoints"})
"""Folders neither copied nor compared: version control, environments and caches, never what a task asks for."""


class TooLarge(Exception):
    """The workspace is too large (or holds what cannot be copied) to keep a copy of."""


def files(root: Path) -> dict[str, os.stat_result]:
    """The regular files under `root` (relative path → stat), SKIPPED folders and symbolic links left out."""
    found: dict[str, os.stat_result] = {}
    for folder, folders, names in os.walk(root):  # a linked folder is listed, never entered
        folders[:] = [name for name in folders if name not in SKIPPED]
        for name in names:
            st = os.lstat(os.path.join(folder, name))
            if stat.S_ISREG(st.st_mode):
                found[os.path.relpath(os.path.join(folder, name), root)] = st
                if len(found) > MAX_FILES:
                    raise TooLarge(f"more than {MAX_FILES:,} files")
    return found


def take(workspace: Path, run_dir: Path) -> str:
    """Copy the workspace into the run folder; '' when done, else why not."""
    target = run_dir / FOLDER
    if target.exists():
        return ""
    try:
        found = files(workspace)
        size = sum(st.st_size for st in found.values())
        if size > MAX_BYTES:
            raise TooLarge(f"{size / 2**20:.0f} MiB of files (at most {MAX_BYTES // 2**20} MiB are copied)")
        staging = Path(tempfile.mkdtemp(prefix=f".{FOLDER}.", dir=run_dir))
        for rel in found:
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(workspace / rel, staging / rel, follow_symlinks=False)
        os.replace(staging, target)
    except TooLarge as e:
        return f"the workspace is too large to keep a copy of ({e})"
    except OSError as e:
        shutil.rmtree(run_dir / FOLDER, ignore_errors=True)
        return f"the workspace could not be copied ({e.strerror or e})"
    return ""


def changes(before: Path, after: Path, ignore: set[str] = frozenset()) -> dict[str, str]:
    """What differs between two trees: path → created, changed or deleted (paths in `ignore` left out)."""
    old, new = files(before), files(after)
    out = {}
    for rel in sorted(old.keys() | new.keys()):
        if rel in ignore or rel.endswith(".pyc"):
            continue
        if rel not in new:
            out[rel] = "deleted"
        elif rel not in old:
            out[rel] = "created"
        elif not filecmp.cmp(before / rel, after / rel, shallow=False):
            out[rel] = "changed"
    return out


def same(paths: dict[str, str], expected: Path, got: Path) -> list[str]:
    """The paths whose outcome in `got` differs from `expected` (a deleted file must be gone in both)."""
    return [rel for rel, how in paths.items()
            if ((got / rel).exists() if how == "deleted"
                else not (got / rel).is_file() or not filecmp.cmp(expected / rel, got / rel, shallow=False))]
