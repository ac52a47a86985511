"""file_write on real files: the three modes, parent folders, atomic rename, modes kept, confinement."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ga.errors import ToolError
from ga.protocols import ToolCall
from ga.tooling.dispatch import Dispatcher
from ga.tooling.spec import ToolResult, remember_result
from ga.tooling.stamps import digest_of
from tools import file_patch, file_read, file_write

SPECS = [file_read.SPEC, file_patch.SPEC, file_write.SPEC]


def dispatch(ctx, arguments: str | dict) -> ToolResult:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Dispatcher(SPECS).dispatch([ToolCall(id="w1", name="file_write", arguments=raw)], ctx)[0]


def write(ctx, path: str, content: str, mode: str | None = None) -> ToolResult:
    args = {"path": path, "content": content} | ({"mode": mode} if mode else {})
    return file_write.run(args, ctx)


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_create_makes_parent_folders(make_ctx, workspace):
    result = write(make_ctx(), "docs/guide/intro.md", "# Intro\nHello\n")
    assert (workspace / "docs/guide/intro.md").read_text() == "# Intro\nHello\n"
    assert result.content == "Created docs/guide/intro.md (and folder docs/): 14 bytes, 2 lines."
    assert result.details["created"] is True


def read(ctx, path: str) -> None:
    """What the model does before it rewrites a file: file_read it (the run now knows the file)."""
    assert not file_read.run({"path": path}, ctx).is_error


def test_overwrite_replaces_and_says_so(make_ctx, workspace):
    (workspace / "a.txt").write_text("old content\n")
    ctx = make_ctx()
    read(ctx, "a.txt")
    result = write(ctx, "a.txt", "new")
    assert (workspace / "a.txt").read_text() == "new"
    assert result.content == "Overwrote a.txt (was 12 bytes): now 3 bytes, 1 line (-1/+1 lines)."


def test_writing_what_the_file_already_holds_says_nothing_changed_and_leaves_it_alone(make_ctx, workspace):
    ctx = make_ctx()
    target = workspace / "report.md"
    write(ctx, "report.md", "- REGION: TOTAL\n")
    before = target.stat()
    same = write(ctx, "report.md", "- REGION: TOTAL\n")
    assert same.content == "report.md already holds exactly this content (16 bytes, 1 line): nothing changed."
    after = target.stat()  # an overwrite renames a new file into place: another inode
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    other = write(ctx, "report.md", "- REGION: TOTAX\n")  # same size, other bytes: written
    assert other.content.startswith("Overwrote report.md") and target.read_text() == "- REGION: TOTAX\n"


def test_overwriting_a_file_with_nothing_is_refused_and_loses_nothing(make_ctx, workspace):
    (workspace / "service.json").write_text('{"port": 8080,}\n')
    with pytest.raises(ToolError, match=r"Refused to overwrite service.json \(16 bytes\) with empty content"):
        write(make_ctx(), "service.json", "")  # what a 1.5B model did to the file it was asked to repair
    assert (workspace / "service.json").read_text() == '{"port": 8080,}\n'
    assert write(make_ctx(), "new.txt", "").content == "Created new.txt: 0 bytes, 0 lines."  # an empty new file
    (workspace / "empty.txt").write_text("")
    assert write(make_ctx(), "empty.txt", "").content.startswith("empty.txt already holds exactly this content")


def test_append_and_prepend(make_ctx, workspace):
    ctx = make_ctx()
    (workspace / "log.txt").write_text("middle\n")
    appended = write(ctx, "log.txt", "end\n", "append")
    prepended = write(ctx, "log.txt", "start\n", "prepend")
    assert (workspace / "log.txt").read_text() == "start\nmiddle\nend\n"
    assert appended.content == "Added 4 bytes (1 line) to the end of log.txt: now 11 bytes."
    assert prepended.content == "Added 6 bytes (1 line) at the start of log.txt: now 17 bytes."


def test_append_to_a_missing_file_creates_it(make_ctx, workspace):
    result = write(make_ctx(), "new/list.txt", "one\n", "append")
    assert (workspace / "new/list.txt").read_text() == "one\n" and result.content.startswith("Created")


def test_writes_are_atomic_and_keep_the_mode(make_ctx, workspace):
    path = workspace / "run.sh"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o750)
    ctx = make_ctx()
    read(ctx, "run.sh")
    for mode in ("overwrite", "append", "prepend"):
        write(ctx, "run.sh", "echo hi\n", mode)
        assert stat.S_IMODE(path.stat().st_mode) == 0o750, mode
    assert leftovers(workspace) == []


def test_new_file_gets_the_umask_mode(make_ctx, workspace):
    write(make_ctx(), "plain.txt", "x")
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE((workspace / "plain.txt").stat().st_mode) == 0o666 & ~mask


def test_unicode_and_crlf_are_written_exactly(make_ctx, workspace):
    write(make_ctx(), "u.txt", "naïve “quotes”\r\nline\r\n")
    assert (workspace / "u.txt").read_bytes() == "naïve “quotes”\r\nline\r\n".encode()


def test_a_stray_surrogate_does_not_crash(make_ctx, workspace):
    result = dispatch(make_ctx(), '{"path": "s.txt", "content": "half \\ud83d emoji"}')
    # the dispatcher makes parsed arguments UTF-8-safe (ga/tooling/encoding.py): the lone half becomes U+FFFD
    assert not result.is_error and (workspace / "s.txt").read_text(encoding="utf-8") == "half \ufffd emoji"


def test_write_updates_the_stamp(make_ctx, workspace):
    ctx = make_ctx()
    write(ctx, "s.txt", "abc")
    path = (workspace / "s.txt").resolve()
    assert ctx.state["file_stamps"][str(path)] == [path.stat().st_mtime_ns, path.stat().st_size, digest_of([b"abc"])]


def test_folder_path_is_an_error(make_ctx, workspace):
    (workspace / "dir").mkdir()
    with pytest.raises(ToolError, match="folder"):
        write(make_ctx(), "dir", "x")


def test_os_refusal_is_a_message_not_a_crash(make_ctx, workspace):
    (workspace / "plain").write_text("a file, not a folder")
    result = dispatch(make_ctx(), {"path": "plain/inner.txt", "content": "x"})
    assert result.is_error and result.content.startswith("Could not write plain/inner.txt")


def test_outside_workspace_is_refused(make_ctx, workspace, tmp_path):
    (tmp_path / "target").mkdir()
    os.symlink(tmp_path / "target", workspace / "escape")
    ctx = make_ctx()
    ctx.task = f"Write {tmp_path / 'evil.txt'}"  # named by the user: not a slip for a file in the workspace
    for path in ("../evil.txt", str(tmp_path / "evil.txt"), "escape/evil.txt", "sub/../../evil.txt"):
        result = dispatch(ctx, {"path": path, "content": "x"})
        assert result.is_error and "workspace-confinement" in result.content, path
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "target" / "evil.txt").exists()
    assert not (workspace / "evil.txt").exists()


def test_bad_arguments_through_the_dispatcher(make_ctx, workspace):
    ctx = make_ctx()
    bad_mode = dispatch(ctx, {"path": "a.txt", "content": "x", "mode": "insert"})
    assert bad_mode.is_error and "mode" in bad_mode.content
    empty_path = dispatch(ctx, {"path": "", "content": "x"})
    assert empty_path.is_error and "path" in empty_path.content
    no_content = dispatch(ctx, {"path": "a.txt"})
    assert no_content.is_error and "content" in no_content.content
    extra = dispatch(ctx, {"path": "a.txt", "content": "x", "overwrite": True})
    assert extra.is_error and "'overwrite'" in extra.content
    assert not (workspace / "a.txt").exists()
    as_string = dispatch(ctx, json.dumps(json.dumps({"path": "a.txt", "content": "x"})))
    assert not as_string.is_error and (workspace / "a.txt").read_text() == "x"


@pytest.mark.timeout(10)  # before the fix, append and prepend blocked opening the FIFO; overwrite replaced it
@pytest.mark.parametrize("mode", ["overwrite", "append", "prepend"])
def test_fifo_is_refused_and_kept(make_ctx, workspace, mode):
    os.mkfifo(workspace / "pipe")
    result = dispatch(make_ctx(), {"path": "pipe", "content": "x\n", "mode": mode})
    assert result.is_error and "pipe is a FIFO (named pipe), not a regular file" in result.content
    assert "rm PATH" in result.content
    assert stat.S_ISFIFO((workspace / "pipe").stat().st_mode)
    assert leftovers(workspace) == [] and sorted(p.name for p in workspace.iterdir()) == ["pipe"]


def test_overwrite_of_a_file_changed_since_it_was_read_is_refused(make_ctx, workspace):
    ctx = make_ctx()
    notes = workspace / "notes.txt"
    notes.write_text("draft\n")
    file_read.run({"path": "notes.txt"}, ctx)
    notes.write_text("draft\nthe user's own edit\n")
    refused = dispatch(ctx, {"path": "notes.txt", "content": "model's version\n"})
    assert refused.is_error and "notes.txt changed on disk since you last read" in refused.content
    assert "overwriting it could undo that change" in refused.content and "file_read" in refused.content
    assert notes.read_text() == "draft\nthe user's own edit\n"
    appended = dispatch(ctx, {"path": "notes.txt", "content": "added\n", "mode": "append"})
    assert not appended.is_error  # appending loses nothing
    file_read.run({"path": "notes.txt"}, ctx)
    assert not dispatch(ctx, {"path": "notes.txt", "content": "model's version\n"}).is_error


def test_append_writes_only_the_new_bytes_in_place(make_ctx, workspace):
    log = workspace / "big.log"
    log.write_bytes(b"x" * (8 << 20) + b"\n")
    inode, before = log.stat().st_ino, os.stat(workspace).st_mtime_ns  # no copy-and-rename: same file, same folder
    result = write(make_ctx(), "big.log", "one more\n", mode="append")
    assert result.content == f"Added 9 bytes (1 line) to the end of big.log: now {(8 << 20) + 10} bytes."
    assert log.stat().st_ino == inode and log.read_bytes().endswith(b"x\none more\n")
    assert os.stat(workspace).st_mtime_ns == before and leftovers(workspace) == []
    os.link(log, workspace / "hard-link.log")  # a file with another name: an append would change both
    refused = dispatch(make_ctx(), {"path": "big.log", "content": "again\n", "mode": "append"})
    assert refused.is_error and "rule: hard-link" in refused.content and not log.read_bytes().endswith(b"again\n")


def test_confirm_preview_is_a_diff_with_the_same_refusals(make_ctx, workspace, tmp_path):
    ctx = make_ctx()
    (workspace / "a.txt").write_text("one\ntwo\n")
    assert file_write.preview({"path": "a.txt", "content": "one\n2\n"}, ctx) == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n")
    assert file_write.preview({"path": "a.txt", "content": "three\n", "mode": "append"}, ctx).endswith(
        " two\n+three\n")
    assert file_write.preview({"path": "new/b.txt", "content": "hi"}, ctx) == (
        "--- /dev/null\n+++ b/new/b.txt\n@@ -0,0 +1 @@\n+hi\n\\ No newline at end of file\n")
    assert not (workspace / "new").exists()  # showing a change makes no folders
    with pytest.raises(ToolError, match="outside the workspace"):
        file_write.preview({"path": "../out.txt", "content": "x"}, ctx)


def test_a_rewrite_copied_with_file_reads_line_numbers_is_written_without_them(make_ctx, workspace):
    config = workspace / "config.json"
    config.write_text('{\n  "db_host": "db.internal",\n  "db_port": 5432\n}\n')
    numbered = '1|{\n2|  "database_host": "db.internal",\n3|  "db_port": 5432\n4|}\n'  # a 1.5B model's rewrite
    ctx = make_ctx()
    read(ctx, "config.json")
    result = dispatch(ctx, {"path": "config.json", "content": numbered})
    assert result.content.startswith("[content had file_read's `N|` line numbers on every line: they were left out.")
    assert config.read_text() == '{\n  "database_host": "db.internal",\n  "db_port": 5432\n}\n'
    assert result.content.endswith("now 56 bytes, 4 lines (-1/+1 lines).")


@pytest.mark.parametrize("name, before, content", [
    ("users.psv", "1|ana\n2|bo\n", "1|ana\n2|bo\n3|cy\n"),  # a data file of numbered rows keeps its own
    ("new.psv", None, "1|ana\n2|bo\n"),  # a new file: nothing says the numbers are not its content
    ("one.txt", "x\n", "1|only line\n"),  # one line: too little to tell
    ("gap.txt", "x\n", "1|a\n3|c\n"),  # numbers that skip are not file_read's
])
def test_numbered_lines_that_are_the_content_are_written_as_sent(make_ctx, workspace, name, before, content):
    ctx = make_ctx()
    if before is not None:
        (workspace / name).write_text(before)
        read(ctx, name)
    result = dispatch(ctx, {"path": name, "content": content})
    assert not result.is_error and "line numbers" not in result.content
    assert (workspace / name).read_text() == content


APP = ("import sys\n\n\ndef load(path):\n    return open(path).read()\n\n\n"
       "def count(text):\n    return len(text.splitlines())\n")


def test_an_overwrite_of_a_file_this_run_never_read_is_refused_and_loses_nothing(make_ctx, workspace):
    (workspace / "settings.json").write_text('{"theme": "dark", "port": 8080}\n')
    ctx = make_ctx()
    big = "".join(f"row {n}\n" for n in range(2000))
    (workspace / "big.txt").write_text(big)
    refused = dispatch(ctx, {"path": "big.txt", "content": "short\n"})
    assert refused.is_error and "this run has not read it" in refused.content and "row 5" not in refused.content
    assert "file_read" in refused.content and "file_patch" in refused.content and "mode=append" in refused.content
    assert dispatch(ctx, {"path": "big.txt", "content": "short\n"}).is_error  # still unseen: still refused
    assert (workspace / "big.txt").read_text() == big
    refused = dispatch(ctx, {"path": "settings.json", "content": '{"done": true}'})  # the 1.5B model's rewrite
    assert refused.is_error and "had not read it. It holds:\n{\"theme\": \"dark\", \"port\": 8080}" in refused.content
    assert "send the same file_write again" in refused.content and "Nothing was written." in refused.content
    assert (workspace / "settings.json").read_text() == '{"theme": "dark", "port": 8080}\n'
    assert not dispatch(ctx, {"path": "settings.json", "content": "x\n", "mode": "append"}).is_error
    assert not dispatch(ctx, {"path": "settings.json", "content": "y\n", "mode": "prepend"}).is_error
    (workspace / "empty.txt").write_text("")
    assert not dispatch(ctx, {"path": "empty.txt", "content": "z\n"}).is_error  # nothing there to lose
    assert not dispatch(ctx, {"path": "made.txt", "content": "one\n"}).is_error  # the run's own file
    assert not dispatch(ctx, {"path": "made.txt", "content": "two\n"}).is_error
    assert not dispatch(ctx, {"path": "settings.json", "content": '{"done": true}'}).is_error  # shown, now seen
    assert (workspace / "settings.json").read_text() == '{"done": true}'


def test_an_overwrite_says_how_many_lines_went_and_keeps_its_diff(make_ctx, workspace):
    (workspace / "app.py").write_text(APP)
    ctx = make_ctx()
    read(ctx, "app.py")
    dropped = APP.split("\n\n\ndef count", maxsplit=1)[0] + "\n"  # a rewrite that lost a function
    shown = file_write.preview({"path": "app.py", "content": dropped}, ctx)  # what --confirm showed before
    result = dispatch(ctx, {"path": "app.py", "content": dropped})
    said = f"Overwrote app.py (was {len(APP)} bytes): now {len(dropped)} bytes, 5 lines (-4/+0 lines)."
    assert result.content == said
    assert (result.details["removed"], result.details["added"]) == (4, 0)
    assert "-def count(text):" in result.details["diff"]
    assert result.details["diff"] == shown  # an approved change is not shown a second time


def test_a_write_of_gas_own_result_text_is_refused_with_the_reason(make_ctx, workspace):
    ctx = make_ctx()
    remember_result(ctx.state, "code_run", ToolResult(content="[exit code 0 · 0.04 s]\n(no output)"))
    remember_result(ctx.state, "file_patch", ToolResult(content="old_content was not found in a.txt.", is_error=True))
    remember_result(ctx.state, "file_read", ToolResult(content="The capital of France is Paris.\n"))
    for content in ("[exit code 0 · 0.04 s]\n(no output)\n", "[exit code 3 · 0.13 s]\nchecking\n",
                    "old_content was not found in a.txt.\n"):
        with pytest.raises(ToolError, match=r"ga's own result text .*Nothing was written"):
            file_write.run({"path": "out.txt", "content": content}, ctx)
    assert not (workspace / "out.txt").exists()
    # what a program printed, a file read, a value: written
    for content in ("(no output)\n", "The capital of France is Paris.\n", "checking\n3\n"):
        file_write.run({"path": "out.txt", "content": content, "mode": "append"}, ctx)
    assert (workspace / "out.txt").read_text() == "(no output)\nThe capital of France is Paris.\nchecking\n3\n"


def test_the_dispatcher_remembers_errors_so_an_error_copied_into_a_file_is_refused(make_ctx, workspace):
    from tools import file_patch

    ctx, dispatcher = make_ctx(), Dispatcher([file_patch.SPEC, file_write.SPEC])
    (workspace / "a.txt").write_text("one\n")
    failed = dispatcher.dispatch([ToolCall(id="1", name="file_patch", arguments=json.dumps(
        {"path": "a.txt", "old_content": "two", "new_content": "three"}))], ctx)[0]
    assert failed.is_error
    copied = dispatcher.dispatch([ToolCall(id="2", name="file_write", arguments=json.dumps(
        {"path": "b.txt", "content": failed.content}))], ctx)[0]
    assert copied.is_error and "ga's own result text" in copied.content and not (workspace / "b.txt").exists()
