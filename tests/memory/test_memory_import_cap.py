"""`memory import` keeps the library to a size every run can read at its start: an import that would pass the cap
is refused whole, with the count and what to do; one that fits goes in. Through the real run.py."""

from __future__ import annotations

from pathlib import Path

from tests.ga.cli.test_cli import ga

CAP = 500  # sop/transfer.py MAX_LIBRARY


def skills(root: Path, count: int, prefix: str) -> Path:
    for n in range(count):
        folder = root / f"{prefix}-{n:04d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {prefix}-{n:04d}\ndescription: Helper {n} of {prefix}, for "
                                         f"tests of the import cap.\n---\nSteps: none.\n")
    return root


def test_an_import_past_the_cap_is_refused_whole_and_one_that_fits_goes_in(home, workspace, tmp_path):
    assert ga(["memory", "list"], None, home, workspace, GA_LEARN="").returncode == 0  # the seeds go in first
    seeds = len([p for p in (home / "sop").iterdir() if (p / "SKILL.md").is_file()])
    too_many = ga(["memory", "import", str(skills(tmp_path / "many", CAP - seeds + 1, "many"))], None, home,
                  workspace, GA_LEARN="")
    assert too_many.returncode == 1, too_many.stdout
    assert f"the library would hold {CAP + 1} SOPs" in too_many.stderr and "memory rm NAME" in too_many.stderr
    assert not (home / "sop" / "many-0000").exists()
    fits = ga(["memory", "import", str(skills(tmp_path / "some", CAP - seeds, "some"))], None, home, workspace,
              GA_LEARN="")
    assert fits.returncode == 0, fits.stderr
    assert len([p for p in (home / "sop").iterdir() if (p / "SKILL.md").is_file()]) == CAP
