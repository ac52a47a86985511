"""Paths through symbolic links: a command acts where a link leads. `rm -rf link/` and `rm -rf link/*` empty the
folder the link names (`rm -rf link` takes the link alone), and `> link` writes its target, so the policy places
such a path where it leads. Links on disk are read; links the script itself makes (`ln -s ~ h`) are remembered, as
they do not exist yet when it is checked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from tools.guard.places import Places, Target, normpath

MAX_LINKS = 16


@dataclass(kw_only=True)
class LinkedPlaces(Places):
    links: dict[Path, Path] = field(default_factory=dict)
    """Links the script makes, by where they are: where they lead."""

    def target(self, text: str, *, selective: bool = False, follow: bool = False) -> Target:
        """The path placed where it leads. `follow`: a link at its end is followed too (a write); otherwise only
        when something comes after it (`link/`, `link/*`)."""
        text = text.replace("\x00", "")  # no path holds one (bash drops them from what it reads)
        found = super().target(text, selective=selective)
        last = follow or os.path.basename(self.expand(text) or text) != found.path.name
        real = self.resolve(found.path, follow_last=last)
        if real == found.path:
            return found
        there = super().target(str(real), selective=found.deep_glob)
        return replace(there, text=text, unknown=found.unknown, anchored=found.anchored)

    def expand(self, text: str) -> str | None:
        return super().expand(text.replace("\x00", ""))

    def link(self, to: str, name: str) -> None:
        """`ln -s TO NAME`: TO is read from the folder the link is in."""
        where = super().target(name).path
        self.links[where] = Path(normpath(str(where.parent / (self.expand(to) or to))))

    def resolve(self, path: Path, *, follow_last: bool) -> Path:
        head, tail = (path, "") if follow_last else (path.parent, path.name)
        for _ in range(MAX_LINKS):
            made = next((link for link in self.links if head == link or head.is_relative_to(link)), None)
            if made is None:
                break
            head = Path(normpath(str(self.links[made] / head.relative_to(made))))
        real = Path(os.path.realpath(head))
        for base in (self.workspace, self.home):  # a workspace or home reached through a link keeps its own name
            real_base = Path(os.path.realpath(base))
            if real.is_relative_to(real_base):
                real = base / real.relative_to(real_base)
                break
        return real / tail if tail else real
