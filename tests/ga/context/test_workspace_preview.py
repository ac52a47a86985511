"""The workspace at a glance in a small model's first message (ModelSettings.workspace_preview)."""

from __future__ import annotations

import json

from ga.context.workspace import preview
from tests.ga.cli.test_cli import ga
from tests.scripted.script import ScriptedServer


def test_a_small_workspace_shows_its_files_first_lines_and_a_large_one_only_names(tmp_path):
    (tmp_path / "users.csv").write_text("name,email,role\nann,ann@ex.org,admin\nben,ben@ex.org,user\ncy,c@x,user\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# hi")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: x\n")
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    (tmp_path / "points.csv").write_text("1,2\n3,4\n")  # no header: no columns named
    (tmp_path / "sales.tsv").write_text("order\tprice\n1\t2.50\n")
    said = preview(tmp_path)
    assert "- points.csv (2 lines): 1,2 | 3,4" in said and "- sales.tsv (2 lines; columns $1 order, $2 price)" in said
    assert ("- users.csv (4 lines; columns $1 name, $2 email, $3 role): name,email,role | ann,ann@ex.org,admin | "
            "ben,ben@ex.org,user | …") in said  # numbered: a small model took $4 for the third column
    assert "- docs/a.md (1 line): # hi" in said and "binary" in said and ".git" not in said
    for n in range(20):
        (tmp_path / f"f{n}.txt").write_text("x\n")
    many = preview(tmp_path)
    assert many.startswith("Files in the workspace: ") and "name,email" not in many
    assert preview(tmp_path / "docs" / "nothing") == ""


def test_the_small_settings_show_it_in_the_first_message_and_the_default_does_not(tmp_path, workspace):
    (workspace / "users.csv").write_text("name,email,role\n")
    for settings, shown in (("small", True), ("default", False)):
        with ScriptedServer([{"content": "Hello!"}]) as server:
            proc = ga(["Hello", "--json"], server, tmp_path / settings, workspace, GA_MODEL_SETTINGS=settings)
        assert json.loads(proc.stdout)["status"] == "done", proc.stderr
        assert ("users.csv (1 line; columns $1 name" in server.requests[0]["messages"][1]["content"]) is shown
