"""The memory rules (data: memory/rules.md) and what start_long_term_update hands the model."""

from __future__ import annotations

from pathlib import Path
from string import Template

from memory.index import index_text
from sop import retrieval, store
from sop.library import load

RULES_FILE = Path(__file__).with_name("rules.md")
"""The memory rules: a protected path (tools must not rewrite the rules they are judged by)."""
CLOSEST = 3


def rules(home: Path) -> str:
    text = RULES_FILE.read_text(encoding="utf-8")
    return Template(text).substitute(sop_dir=store.sop_dir(home), facts=store.facts_path(home),
                                     index=store.index_path(home)).strip()


def briefing(home: Path, task: str, skills_path: list[Path] = ()) -> str:
    """The rules, the L1 index and the SOPs closest to this run's task, with their paths."""
    lib = load(home, skills_path)
    parts = [rules(home), index_text(home, lib, every_sop=True) or "Memory index: empty (no SOPs or facts yet)."]
    closest = retrieval.relevant(lib.skills, task, home=home, floor=0, limit=CLOSEST)
    if closest:
        parts.append("SOPs closest to this task (read one before patching it):\n" + "\n".join(
            f"- {s.path}{' (external: read-only)' if s.origin == 'external' else ''}: {s.description}"
            for s, _ in closest))
    else:
        parts.append("No existing SOP is close to this task.")
    return "\n\n".join(parts)
