"""The README a newcomer reads, and the docs/ pages it leads to: the two commands CI runs come first, the README stays
short, and every relative link leads to a file and a heading that exist."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 250
"""What a user needs in the first hour; the reference lives in docs/."""

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(?<!\!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def prose(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    lines, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line.lstrip()):
            inside = not inside
        elif not inside:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text lowercased, punctuation but hyphens and underscores dropped, spaces
    made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of the page's headings (a repeated heading gets -1, -2..., as on GitHub)."""
    found, seen = set(), {}
    for _, line in prose(page.read_text(encoding="utf-8")):
        if match := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line):
            base = slug(match.group(1))
            found.add(base if base not in seen else f"{base}-{seen[base]}")
            seen[base] = seen.get(base, 0) + 1
    return found


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of the page (outside code) whose file, or whose heading in a .md file, does not exist."""
    problems = []
    for number, line in prose(page.read_text(encoding="utf-8")):
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto: ...: not a file here
                continue
            path, _, anchor = target.partition("#")
            where = (page.parent / path).resolve() if path else page
            name = f"{page.relative_to(root)}:{number}: {target}"
            if not where.exists():
                problems.append(f"{name}: no such file")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                problems.append(f"{name}: {where.relative_to(root)} has no heading #{anchor}")
    return problems


def test_every_relative_link_in_the_readme_and_docs_leads_to_a_file_and_heading_that_exist():
    assert len(PAGES) > 1
    problems = [p for page in PAGES for p in broken_links(page)]
    assert not problems, "\n".join(problems)


def test_a_broken_link_and_a_missing_heading_are_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/a.md").write_text("# A page\n\n## What done means: `--check CMD`\n")
    page = tmp_path / "README.md"
    page.write_text("[ok](docs/a.md#what-done-means---check-cmd) [gone](docs/b.md) [bad](docs/a.md#nope)\n"
                    "`[in code](docs/c.md)`\n```\n[in a block](docs/d.md)\n```\n[web](https://example.com/x)\n")
    assert broken_links(page, tmp_path) == ["README.md:1: docs/b.md: no such file",
                                  "README.md:1: docs/a.md#nope: docs/a.md has no heading #nope"]


def test_the_readme_stays_short():
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines: move reference into docs/"


def test_the_two_commands_ci_runs_are_the_readmes_first_two_code_blocks():
    text = README.read_text(encoding="utf-8").splitlines()
    blocks = [i for i, line in enumerate(text) if line.startswith("```") and line != "```"]
    firsts = [text[i + 1] for i in blocks[:2]]
    markers = [text[i - 1] for i in blocks[:2]]
    assert markers == ["<!-- ci: run -->", "<!-- ci: test -->"]
    printed = [subprocess.run([ROOT / ".ci/readme-command", name], capture_output=True, text=True, timeout=30,
                              check=True).stdout.strip() for name in ("run", "test")]
    assert printed == firsts
    assert all("python3 -m venv .venv" in command for command in printed)
