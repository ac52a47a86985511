"""memory import / export copy regular files and folders only, size-capped, all or nothing; the front-matter's
YAML cannot expand or nest without bound."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sop import transfer
from sop.skill import MAX_FRONT_DEPTH, MAX_SKILL_FILE, SkillError, parse, read
from tests.memory.helpers import JSON_REPLY, SOP_REPLY, skill_folder
from tests.memory.test_memory_cli import memory


def _two_skills(src: Path) -> Path:
    """A folder of two valid skills: the good one must not be imported when the other is refused."""
    skill_folder(src, "json-to-csv", JSON_REPLY)
    return skill_folder(src, "csv-summary", SOP_REPLY.format(name="csv-summary", extra=""))


def _nothing_imported(proc, home: Path) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "nothing imported" in proc.stderr and "Traceback" not in proc.stderr
    sop = home / "sop"
    assert not (sop / "json-to-csv").exists() and not (sop / "csv-summary").exists()
    assert not [p.name for p in sop.iterdir() if p.name.startswith(".import")]  # no staging left behind


def test_a_link_to_a_private_file_is_refused_not_copied(home, workspace, tmp_path):
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nhunter2hunter2\n")
    skill = _two_skills(tmp_path / "skills")
    (skill / "helper.sh").symlink_to(secret)
    proc = memory(["import", str(tmp_path / "skills")], home, workspace)
    _nothing_imported(proc, home)
    assert f"{skill / 'helper.sh'}: a symbolic link; only regular files and folders are copied" in proc.stderr
    assert not any("hunter2" in p.read_text(errors="replace") for p in (home / "sop").rglob("*") if p.is_file())


def test_devices_fifos_and_linked_folders_are_refused_by_name(home, workspace, tmp_path):
    skill = _two_skills(tmp_path / "skills")
    (skill / "zero").symlink_to("/dev/zero")
    os.mkfifo(skill / "pipe")
    (skill / "scripts").mkdir()
    (skill / "scripts/etc").symlink_to("/etc", target_is_directory=True)
    (tmp_path / "skills/linked").symlink_to(skill, target_is_directory=True)
    proc = memory(["import", str(tmp_path / "skills")], home, workspace)
    _nothing_imported(proc, home)
    assert f"{skill / 'zero'}: a symbolic link" in proc.stderr
    assert f"{skill / 'pipe'}: a FIFO" in proc.stderr
    assert f"{skill / 'scripts/etc'}: a symbolic link" in proc.stderr
    assert f"{tmp_path / 'skills/linked'}: a symbolic link" in proc.stderr
    assert sum(p.stat().st_size for p in (home / "sop").rglob("*") if p.is_file()) < 1_000_000


def test_a_file_or_a_skill_over_its_size_cap_is_refused(home, workspace, tmp_path):
    skill = _two_skills(tmp_path / "skills")
    with open(skill / "big.bin", "wb") as f:
        f.truncate(transfer.MAX_FILE_BYTES + 1)  # sparse: costs no disk
    proc = memory(["import", str(tmp_path / "skills")], home, workspace)
    _nothing_imported(proc, home)
    assert f"{skill / 'big.bin'}: over 8 MiB (the limit for one file of a skill)" in proc.stderr
    (skill / "big.bin").unlink()
    for i in range(transfer.MAX_SKILL_BYTES // transfer.MAX_FILE_BYTES + 1):
        with open(skill / f"part{i}.bin", "wb") as f:
            f.truncate(transfer.MAX_FILE_BYTES)
    proc = memory(["import", str(tmp_path / "skills")], home, workspace)
    _nothing_imported(proc, home)
    assert f"{skill}: over 32 MiB in all (the limit for one skill)" in proc.stderr


def test_regular_helpers_in_subfolders_are_imported_with_their_exec_bit(home, workspace, tmp_path):
    skill = _two_skills(tmp_path / "skills")
    (skill / "scripts").mkdir()
    (skill / "scripts/run.sh").write_text("#!/bin/sh\necho ok\n")
    (skill / "scripts/run.sh").chmod(0o755)
    proc = memory(["import", str(tmp_path / "skills")], home, workspace)
    assert proc.returncode == 0, proc.stderr
    copied = home / "sop/csv-summary/scripts/run.sh"
    assert copied.read_text() == "#!/bin/sh\necho ok\n" and os.access(copied, os.X_OK)
    assert (home / "sop/json-to-csv/SKILL.md").is_file()
    assert not [p.name for p in (home / "sop").iterdir() if p.name.startswith(".import")]


def test_export_refuses_a_link_planted_in_ga_home(home, workspace, tmp_path):
    skill = _two_skills(tmp_path / "skills")
    assert memory(["import", str(skill)], home, workspace).returncode == 0
    (home / "sop/csv-summary/key").symlink_to(tmp_path / "skills/json-to-csv/SKILL.md")
    proc = memory(["export", str(tmp_path / "out")], home, workspace)
    assert proc.returncode == 1 and "nothing exported" in proc.stderr
    assert f"{home / 'sop/csv-summary/key'}: a symbolic link" in proc.stderr
    assert not (tmp_path / "out/csv-summary").exists()


BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))


@pytest.mark.parametrize(("extra", "problem"), [
    (BOMB, "front-matter uses a YAML alias"),
    ("deep: " + "[" * 200_000 + "]" * 200_000 + "\n", f"front-matter is nested over {MAX_FRONT_DEPTH} levels deep"),
])
def test_an_alias_bomb_or_deep_nesting_in_front_matter_is_refused(extra, problem):
    text = f"---\nname: bomb\ndescription: Expands.\n{extra}---\n1. step\n"
    with pytest.raises(SkillError) as caught:
        parse(text, folder_name="bomb")
    (found,) = caught.value.problems
    assert found.startswith(problem)


def test_an_alias_bomb_skill_is_not_imported(home, workspace, tmp_path):
    skill_folder(tmp_path / "skills", "json-to-csv", JSON_REPLY)
    skill_folder(tmp_path / "skills", "bomb", f"---\nname: bomb\ndescription: Expands.\n{BOMB}---\n1. step\n")
    proc = memory(["import", str(tmp_path / "skills")], home, workspace)
    _nothing_imported(proc, home)
    assert f"{tmp_path / 'skills/bomb/SKILL.md'}: front-matter uses a YAML alias" in proc.stderr


def test_a_skill_md_that_is_a_fifo_or_too_big_is_an_error_not_a_wait(tmp_path):
    os.mkfifo(tmp_path / "SKILL.md")  # swapped in after the listing checked it was a file
    with pytest.raises(SkillError, match="not a regular file"):
        read(tmp_path / "SKILL.md")
    (tmp_path / "SKILL.md").unlink()
    with open(tmp_path / "SKILL.md", "wb") as f:
        f.truncate(MAX_SKILL_FILE + 1)
    with pytest.raises(SkillError, match="over 1024 KiB"):
        read(tmp_path / "SKILL.md")
