"""The SOP library: GA_HOME/sop (ga's own, ledger kept), GA_SKILLS_PATH folders (read in place), the archive.

Parsing is cached per file (path, mtime, size), so a run that lists SOPs, builds its index and answers the ninth
tool reads each SKILL.md once.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from sop import ledger, store
from sop.skill import SKILL_FILE, Skill, SkillError, read

log = logging.getLogger(__name__)

_parsed: dict[str, tuple[tuple[int, int], Skill | SkillError]] = {}


@dataclass(kw_only=True)
class Library:
    skills: list[Skill] = field(default_factory=list)
    """Active SOPs: ga's own first, then external ones whose names ga does not already use."""
    archived: list[Skill] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """SKILL.md files that were skipped, and why."""

    def get(self, name: str) -> Skill | None:
        return next((s for s in [*self.skills, *self.archived] if s.name == name), None)

    def own(self) -> list[Skill]:
        return [s for s in self.skills if s.origin == "home"]


def _cached_read(path: Path, origin: str) -> Skill | SkillError:
    try:
        st = path.stat()
        hit = _parsed.get(str(path))
        if hit is None or hit[0] != (st.st_mtime_ns, st.st_size):
            try:
                hit = _parsed[str(path)] = ((st.st_mtime_ns, st.st_size), read(path))
            except SkillError as e:
                hit = _parsed[str(path)] = ((st.st_mtime_ns, st.st_size), e)
    except OSError as e:
        return SkillError(str(path), [e.strerror or str(e)])
    value = hit[1]
    if isinstance(value, Skill):
        value = dataclasses.replace(value, metadata=dict(value.metadata), origin=origin)
    return value


def skill_files(folder: Path, exists=os.path.isfile) -> list[Path]:
    """`folder/<name>/SKILL.md` files, or `folder/SKILL.md` when the folder is one skill itself (`exists` tells)."""
    if exists(folder / SKILL_FILE):
        return [folder / SKILL_FILE]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [folder / n / SKILL_FILE for n in names if not n.startswith(".") and exists(folder / n / SKILL_FILE)]


def load(home: Path, skills_path: list[Path] = ()) -> Library:
    lib = Library()
    sources = [(store.sop_dir(home), "home"), *((Path(p), "external") for p in skills_path),
               (store.archived_dir(home), "archived")]
    seen: set[str] = set()
    for folder, origin in sources:
        for path in skill_files(folder) if folder.is_dir() else []:
            found = _cached_read(path, origin)
            if isinstance(found, SkillError):
                lib.problems.append(str(found))
                continue
            if origin == "archived":
                lib.archived.append(found)
            elif found.name in seen:
                lib.problems.append(f"{path}: skipped, an SOP named {found.name!r} is already loaded")
            elif found.status == "archived":
                lib.archived.append(found)
            else:
                seen.add(found.name)
                lib.skills.append(found)
    for problem in lib.problems:
        log.info("SOP skipped: %s", problem)
    return lib


def save(home: Path, skill: Skill) -> Path:
    """Write one of ga's own SOPs (call with store.locked held). Returns its SKILL.md."""
    path = store.private_dir(store.sop_dir(home) / skill.name) / SKILL_FILE
    store.write_text(path, skill.text())
    skill.path = path
    return path


def archive(home: Path, skill: Skill) -> Path:
    """Move a failing SOP out of retrieval into GA_HOME/sop/.archived/<name>/ (a newer archive replaces an older)."""
    target = store.private_dir(store.archived_dir(home)) / skill.name
    if target.exists():
        shutil.rmtree(target)
    os.replace(skill.folder, target)
    return target / SKILL_FILE


def remove(home: Path, name: str) -> Path | None:
    for folder in (store.sop_dir(home) / name, store.archived_dir(home) / name):
        if (folder / SKILL_FILE).is_file():
            shutil.rmtree(folder)
            return folder
    return None


SEEDS = Path(__file__).parent / "seeds"
SEEDED_MARK = ".seeded"
"""In GA_HOME/memory: the seed SOPs were installed once; removing one later does not bring it back."""


def install_seeds(home: Path) -> list[str]:
    """On first use of a GA_HOME: copy the seed SOPs in, stamped with a fresh ledger. Returns the names installed."""
    mark = store.memory_dir(home) / SEEDED_MARK
    if mark.exists():
        return []
    installed = []
    with store.locked(home):
        if mark.exists():
            return []
        for path in skill_files(SEEDS):
            seed = read(path)
            if (store.sop_dir(home) / seed.name).exists():
                continue
            shutil.copytree(path.parent, store.private_dir(store.sop_dir(home)) / seed.name)
            seed.metadata = ledger.stamp(seed.metadata, run_id="", source="seed")
            save(home, seed)
            installed.append(seed.name)
        store.write_text(mark, "\n".join(installed) + "\n")
    return installed
