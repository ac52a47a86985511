"""Prompt templates are data: `$name` placeholders, and an undefined one is an error, never blank text."""

from __future__ import annotations

import platform
import time
from pathlib import Path
from string import Template

from ga.config import Settings
from ga.protocols import Memory

_HERE = Path(__file__).parent


def render(name: str, **values: object) -> str:
    template = Template((_HERE / name).read_text(encoding="utf-8"))
    try:
        return template.substitute(values).strip()
    except KeyError as e:
        raise KeyError(f"prompt {name} uses ${e.args[0]}, which was not given") from None
    except ValueError as e:
        raise ValueError(f"prompt {name} is malformed: {e}") from None


def system_prompt(memory: Memory | None = None, listing: str = "", *, deferred: bool = False) -> str:
    """The same for every run and workspace (the L1 memory index changes only when memory does), so a
    prompt-caching server reuses it. What varies per run (workspace, platform, date, the SOPs and facts that fit
    the task) goes into the first user message. `listing`: a run begun before that kept it here. `deferred`: name
    the tools whose schemas are not sent up front."""
    head = render("system.md") + ("\n" + render("deferred.md") if deferred else "")
    return "\n\n".join(filter(None, [head, memory.system_section() if memory else "", listing]))


def first_message(settings: Settings, task: str, *notes: str) -> str:
    """The run's first user message: where and when, the task, then `notes` (the project's AGENTS.md, what memory
    has for it: beside the task, where a small model reads them), empty ones left out."""
    head = render("task.md", workdir=settings.workdir, platform=f"{platform.system()} {platform.machine()}",
                  date=time.strftime("%Y-%m-%d"), task=task)
    return "\n\n".join([head, *filter(None, notes)])
