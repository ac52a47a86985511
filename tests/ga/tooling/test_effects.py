"""The files a task names to be written, read from its words against a real workspace."""

from __future__ import annotations

from ga.tooling.effects import named_outputs, unwritten


def test_the_files_a_task_asks_to_write_are_named_and_nothing_else(tmp_path):
    (tmp_path / "config.ini").write_text("[server]\nport = 8080\n")
    task = ("Read `config.ini` and write the port into `port.txt`. Then create a script report.py, save it to "
            "out/summary.md as well. See https://example.com/notes.txt and {{site_url}}/page.html, e.g. how "
            "Node.js does it, or mail help@example.com.")
    assert named_outputs(task, tmp_path) == ["port.txt", "report.py", "out/summary.md"]


def test_a_named_file_still_missing_or_empty_is_said_so(tmp_path):
    (tmp_path / "empty.txt").touch()
    (tmp_path / "full.txt").write_text("5\n")
    said = unwritten(["gone.txt", "empty.txt", "full.txt"], tmp_path)
    assert said == ["`gone.txt` does not exist", "`empty.txt` is empty"]
