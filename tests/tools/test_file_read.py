"""file_read on real files: windows, keyword, long lines, folders, binaries, missing paths, confinement, 50 MB."""

from __future__ import annotations

import json
import os
import stat
import tracemalloc
from pathlib import Path

import pytest

from ga.errors import ToolError
from ga.protocols import ToolCall
from ga.tooling.dispatch import Dispatcher
from ga.tooling.spec import ToolResult
from ga.tooling.stamps import digest_of
from tools import file_patch, file_read, file_write
from tools.files import fileio

SPECS = [file_read.SPEC, file_patch.SPEC, file_write.SPEC]


def dispatch(ctx, name: str, arguments: str | dict) -> ToolResult:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Dispatcher(SPECS).dispatch([ToolCall(id="c1", name=name, arguments=raw)], ctx)[0]


@pytest.fixture
def numbered(workspace: Path) -> Path:
    path = workspace / "notes.txt"
    path.write_text("".join(f"row {i}\n" for i in range(1, 501)))
    return path


def test_numbered_window_says_total_and_how_to_continue(make_ctx, numbered):
    result = file_read.run({"path": "notes.txt", "start": 10, "count": 5}, make_ctx())
    lines = result.content.splitlines()
    assert lines[:5] == ["10|row 10", "11|row 11", "12|row 12", "13|row 13", "14|row 14"]
    assert "of 500" in lines[-1] and "start=15" in lines[-1]
    assert result.details["lines"] == 500


def test_default_window_and_end_of_file(make_ctx, workspace):
    (workspace / "short.txt").write_text("a\nb\nc")  # no final newline: still 3 lines
    content = file_read.run({"path": "short.txt"}, make_ctx()).content
    assert content.splitlines() == ["1|a", "2|b", "3|c", "[lines 1-3 of 3; end of file]"]


def test_keyword_jumps_to_first_match_with_context(make_ctx, numbered):
    content = file_read.run({"path": "notes.txt", "keyword": "ROW 42", "count": 2}, make_ctx()).content
    lines = content.splitlines()
    assert lines[:5] == ["39|row 39", "40|row 40", "41|row 41", "42|row 42", "43|row 43"]
    assert "line 42" in lines[-1] and "start=44" in lines[-1] and "of 500" in lines[-1]


def test_keyword_searches_from_start(make_ctx, numbered):
    content = file_read.run({"path": "notes.txt", "keyword": "row 1", "start": 50, "count": 1}, make_ctx()).content
    assert "100|row 100" in content.splitlines()
    assert "50|" not in content  # context lines come from the searched range only when they precede the match


def test_keyword_not_found_says_total(make_ctx, numbered):
    result = file_read.run({"path": "notes.txt", "keyword": "absent"}, make_ctx())
    assert "absent" in result.content and "500 lines" in result.content
    assert "1|row 1" not in result.content  # a long file is not shown on a miss


def test_a_keyword_missing_from_a_short_file_gets_the_whole_file(make_ctx, workspace):
    (workspace / "customers.csv").write_text("email,name\nana@example.com,Ana\n")
    result = file_read.run({"path": "customers.csv", "keyword": "customers.csv"}, make_ctx())  # a 1.5B model's call
    assert result.content.splitlines() == [
        "[no line of customers.csv matches 'customers.csv' from line 1 on; the file has 2 lines, all shown]",
        "1|email,name", "2|ana@example.com,Ana", "[lines 1-2 of 2; end of file]"]
    assert result.details["match"] is None and result.details["shown"] == [1, 2]
    later = file_read.run({"path": "customers.csv", "keyword": "absent", "start": 2}, make_ctx())
    assert "Try another keyword" in later.content and "1|" not in later.content  # searched from a chosen line


def test_start_past_end_is_an_error(make_ctx, numbered):
    with pytest.raises(ToolError, match="500 lines"):
        file_read.run({"path": "notes.txt", "start": 900}, make_ctx())


def test_long_line_is_cut_and_marked(make_ctx, workspace):
    (workspace / "wide.txt").write_text("short\n" + "é" * 51234 + "\nafter\n")
    content = file_read.run({"path": "wide.txt"}, make_ctx()).content
    second = content.splitlines()[1]
    assert second.startswith("2|éé") and second.endswith("… [line cut: 51234 chars]")
    assert len(second) < 2100
    assert "3|after" in content and "of 3" in content


def test_output_budget_is_respected(make_ctx, workspace):
    (workspace / "big.txt").write_text("".join(f"{i} " + "y" * 300 + "\n" for i in range(1000)))
    ctx = make_ctx()
    ctx.output_budget = 10_000
    content = file_read.run({"path": "big.txt", "count": 1000}, ctx).content
    assert len(content) <= 10_000
    assert "output limit reached" in content and "of 1000" in content and "continue with start=" in content


def test_crlf_and_bom_are_not_shown(make_ctx, workspace):
    (workspace / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    assert file_read.run({"path": "win.txt"}, make_ctx()).content.splitlines()[:2] == ["1|one", "2|two"]


def test_empty_file(make_ctx, workspace):
    (workspace / "empty.txt").write_text("")
    assert "0 lines" in file_read.run({"path": "empty.txt"}, make_ctx()).content


def test_folder_lists_entries(make_ctx, workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "pkg").mkdir()
    (workspace / "src" / "main.py").write_text("x" * 2048)
    content = file_read.run({"path": "src"}, make_ctx()).content
    assert "pkg/" in content.splitlines() and "main.py 2.0K" in content.splitlines()
    assert "2 entries" in content


def test_folder_listing_is_bounded(make_ctx, workspace):
    for i in range(30):
        (workspace / f"f{i:02d}.txt").write_text("")
    content = file_read.run({"path": ".", "count": 10}, make_ctx()).content
    assert "f09.txt 0B" in content and "f10.txt" not in content and "start=11" in content


def test_empty_folder_and_start_past_its_end(make_ctx, workspace):
    (workspace / "void").mkdir()
    assert "empty folder" in file_read.run({"path": "void"}, make_ctx()).content
    (workspace / "void" / "one.txt").write_text("1")
    with pytest.raises(ToolError, match="has 1 entry"):
        file_read.run({"path": "void", "start": 5}, make_ctx())


def test_binary_file_is_described_not_dumped(make_ctx, workspace):
    (workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    result = file_read.run({"path": "logo.png"}, make_ctx())
    assert "binary" in result.content and "PNG" in result.content and "10248 bytes" in result.content
    assert "\x00" not in result.content and not result.is_error


def test_missing_file_suggests_close_names(make_ctx, workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "config.py").write_text("")
    (workspace / "README.md").write_text("")
    with pytest.raises(ToolError) as caught:
        file_read.run({"path": "src/confg.py"}, make_ctx())
    assert "Did you mean" in str(caught.value) and "src/config.py" in str(caught.value)
    result = dispatch(make_ctx(), "file_read", {"path": "docs/config.py"})  # right name, wrong folder
    assert result.is_error and "src/config.py" in result.content


def test_read_records_a_stamp(make_ctx, numbered):
    ctx = make_ctx()
    file_read.run({"path": "notes.txt", "count": 1}, ctx)
    stamp = ctx.state["file_stamps"][str(numbered.resolve())]
    assert stamp == [numbered.stat().st_mtime_ns, numbered.stat().st_size, digest_of([numbered.read_bytes()])]
    json.dumps(ctx.state)


def test_path_outside_workspace_is_refused(make_ctx, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    for path in (str(secret), "../secret.txt", "sub/../../secret.txt"):
        result = dispatch(make_ctx(), "file_read", {"path": path})
        assert result.is_error and "workspace-confinement" in result.content and "top secret" not in result.content


def test_a_hard_link_to_a_private_file_outside_is_refused_a_shared_public_one_is_read_not_appended(
        make_ctx, workspace, tmp_path):
    secret = tmp_path / "secret.txt"  # outside the workspace, private: a key, /etc/shadow
    secret.write_text("TOP-SECRET\n")
    secret.chmod(0o600)
    os.link(secret, workspace / "x.txt")
    for name, args in (("file_read", {"path": "x.txt"}),
                       ("file_patch", {"path": "x.txt", "old_content": "TOP", "new_content": "top"}),
                       ("file_write", {"path": "x.txt", "content": "new\n", "mode": "prepend"})):
        result = dispatch(make_ctx(), name, args)
        assert result.is_error and "rule: hard-link" in result.content and "TOP-SECRET" not in result.content, name
    assert secret.read_text() == "TOP-SECRET\n"
    store = tmp_path / "store.js"  # a package store's file (pnpm, uv): linked into the workspace, readable by all
    store.write_text("module.exports = 1\n")
    store.chmod(0o644)
    os.link(store, workspace / "pkg.js")
    ctx = make_ctx()
    assert "module.exports" in dispatch(ctx, "file_read", {"path": "pkg.js"}).content
    appended = dispatch(ctx, "file_write", {"path": "pkg.js", "content": "x\n", "mode": "append"})
    assert appended.is_error and "rule: hard-link" in appended.content and store.read_text() == "module.exports = 1\n"
    assert not dispatch(ctx, "file_write", {"path": "pkg.js", "content": "mine\n"}).is_error  # this name only
    assert store.read_text() == "module.exports = 1\n" and (workspace / "pkg.js").read_text() == "mine\n"


def test_symlink_pointing_out_is_refused(make_ctx, workspace, tmp_path):
    (tmp_path / "secret.txt").write_text("top secret\n")
    os.symlink(tmp_path / "secret.txt", workspace / "link.txt")
    result = dispatch(make_ctx(), "file_read", {"path": "link.txt"})
    assert result.is_error and "workspace-confinement" in result.content and "symlink" in result.content


def test_bad_arguments_through_the_dispatcher(make_ctx, numbered):
    ctx = make_ctx()
    repaired = dispatch(ctx, "file_read", '{"path": "notes.txt", "count": "30"}')
    assert not repaired.is_error and "continue with start=31" in repaired.content
    for bad in ('{"path": "notes.txt", "count": ""}', '{"path": "notes.txt", "count": null}'):
        result = dispatch(ctx, "file_read", bad)
        assert result.is_error and "count" in result.content
    extra = dispatch(ctx, "file_read", {"path": "notes.txt", "lines": 5})
    assert extra.is_error and "'lines'" in extra.content
    missing = dispatch(ctx, "file_read", {"start": 1})
    assert missing.is_error and "path" in missing.content
    too_many = dispatch(ctx, "file_read", {"path": "notes.txt", "count": 100_000})
    assert too_many.is_error and "count" in too_many.content


@pytest.fixture
def huge(workspace: Path) -> Path:
    """About 50 MB: 524,288 lines of 100 bytes; one NEEDLE near the end."""
    path = workspace / "huge.log"
    with path.open("w") as f:
        for block in range(0, 524_288, 8192):
            f.write("".join(f"row {i:07d} " + ("NEEDLE" if i == 524_000 else "x" * 6) + "." * 82 + "\n"
                            for i in range(block, block + 8192)))
    return path


def test_huge_file_is_streamed(make_ctx, huge):
    ctx = make_ctx()
    assert huge.stat().st_size >= 50 * 1024 * 1024
    tracemalloc.start()
    try:
        near_end = file_read.run({"path": "huge.log", "start": 524_280, "count": 5}, ctx)
        found = file_read.run({"path": "huge.log", "keyword": "needle", "count": 1}, ctx)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert near_end.content.startswith("524280|row 0524279 ")
    assert "of 524288" in near_end.content and "start=524285" in near_end.content
    assert "524001|row 0524000 NEEDLE" in found.content and "523998|" in found.content
    assert "of 524288" in found.content
    assert peak < 5 * 1024 * 1024, f"peak traced memory {peak} bytes"


def test_one_huge_line_is_never_held(make_ctx, workspace):
    with (workspace / "blob.txt").open("wb") as f:
        for _ in range(20):
            f.write(b"z" * (1 << 20))
    tracemalloc.start()
    try:
        content = file_read.run({"path": "blob.txt"}, make_ctx()).content
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f"[line cut: {20 << 20} chars]" in content and "of 1;" in content
    assert peak < 5 * 1024 * 1024, f"peak traced memory {peak} bytes"


@pytest.mark.timeout(10)  # before the fix, opening the FIFO waited for a writer forever
def test_fifo_is_refused_without_blocking(make_ctx, workspace):
    os.mkfifo(workspace / "pipe")
    os.symlink("pipe", workspace / "link")
    for path in ("pipe", "link"):
        result = dispatch(make_ctx(), "file_read", {"path": path})
        assert result.is_error, path
        assert f"{path} is a FIFO (named pipe), not a regular file" in result.content
        assert "lists folders" in result.content and "code_run" in result.content
    assert stat.S_ISFIFO((workspace / "pipe").stat().st_mode)


@pytest.mark.timeout(10)
def test_fifo_swapped_in_after_the_stat_check_is_still_refused(make_ctx, workspace, monkeypatch):
    os.mkfifo(workspace / "pipe")
    monkeypatch.setattr(fileio, "require_regular", lambda *args: None)  # as if it became a FIFO just after
    with pytest.raises(ToolError, match=r"pipe is a FIFO \(named pipe\), not a regular file"):
        file_read.run({"path": "pipe"}, make_ctx())


@pytest.mark.timeout(10)
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_device_is_refused_not_read(make_ctx):
    with pytest.raises(ToolError, match=r"/dev/zero is a character device, not a regular file"):
        file_read.run({"path": "/dev/zero"}, make_ctx(allow_paths=[Path("/dev")]))


def read_as(ctx, call_id: str, **args) -> ToolResult:
    return Dispatcher(SPECS).dispatch([ToolCall(id=call_id, name="file_read", arguments=json.dumps(args))], ctx)[0]


def test_an_unchanged_re_read_is_a_stub_naming_the_earlier_result(make_ctx, numbered):
    ctx = make_ctx()
    first = read_as(ctx, "r1", path="notes.txt", count=100)
    again = read_as(ctx, "r2", path="notes.txt", count=100)
    assert "100|row 100" in first.content
    assert again.content.startswith("[unchanged: lines 1-100 of notes.txt") and "(call r1)" in again.content
    assert len(again.content) < 200 and again.details["unchanged_since"] == "r1"
    assert "row 150" in read_as(ctx, "r3", path="notes.txt", start=101, count=100).content  # other lines: read


def test_a_changed_file_is_read_again_for_real(make_ctx, numbered):
    ctx = make_ctx()
    read_as(ctx, "r1", path="notes.txt", count=100)
    numbered.write_text(numbered.read_text().replace("row 50\n", "row fifty\n"))
    assert "50|row fifty" in read_as(ctx, "r2", path="notes.txt", count=100).content
