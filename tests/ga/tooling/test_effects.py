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
    (tmp_path / "blank.txt").write_text("\n")
    said = unwritten(["gone.txt", "empty.txt", "full.txt", "blank.txt"], tmp_path)
    assert said == ["`gone.txt` does not exist", "`empty.txt` is empty", "`blank.txt` holds only blank space"]


def test_a_named_file_that_does_not_parse_as_its_kind_is_said_so(tmp_path):
    (tmp_path / "people.json").write_text('{"name": "Ann", "age": 31}\n{"name": "Ben", "age": 42}\n')
    (tmp_path / "ok.json").write_text('[{"name": "Ann", "age": 31}]\n')
    (tmp_path / "biggest.py").write_text("import sys\nprint(max(int(x) for x in sys.stdin if x.strip())\n")
    (tmp_path / "fine.py").write_text("print(1)\n")
    (tmp_path / "pyproject.toml").write_text("[project\nname = 'x'\n")
    (tmp_path / "notes.md").write_text("{ not json, not python\n")
    said = unwritten(["people.json", "ok.json", "biggest.py", "fine.py", "pyproject.toml", "notes.md"], tmp_path)
    assert said == ["`people.json` is not valid JSON: Extra data: line 2 column 1 (char 27)",
                    "`biggest.py` is not valid Python: '(' was never closed (biggest.py, line 2)",
                    "`pyproject.toml` is not valid TOML: Expected ']' at the end of a table declaration (at line 1, "
                    "column 9)"]
