"""file_patch on real files: exact and tolerant matches, errors the model can act on, stamps, locks, modes."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from ga.errors import ToolError
from ga.protocols import ToolCall
from ga.tooling.dispatch import Dispatcher
from ga.tooling.spec import ToolResult
from tools import file_patch, file_read, file_write
from tools.files import fileio, matching

SPECS = [file_read.SPEC, file_patch.SPEC, file_write.SPEC]


def dispatch(ctx, name: str, arguments: dict) -> ToolResult:
    return Dispatcher(SPECS).dispatch([ToolCall(id="p1", name=name, arguments=json.dumps(arguments))], ctx)[0]


def patch(ctx, path: str, old: str, new: str) -> ToolResult:
    return file_patch.run({"path": path, "old_content": old, "new_content": new}, ctx)


@pytest.fixture
def source(workspace: Path) -> Path:
    path = workspace / "app.py"
    path.write_text("".join(f"value_{i} = {i}\n" for i in range(1, 41)))
    return path


def test_exact_patch_says_one_line_and_keeps_the_diff(make_ctx, source):
    result = patch(make_ctx(), "app.py", "value_10 = 10\nvalue_11 = 11\n", "value_10 = 100\nvalue_11 = 110\nnew = 1\n")
    assert result.content == "Patched app.py: replaced lines 10-11 (2 lines) with 3 lines."
    assert "\n" not in result.content
    assert "-value_10 = 10\n" in result.details["diff"] and "+new = 1\n" in result.details["diff"]
    assert "@@ -7,8 +7,9 @@" in result.details["diff"]
    text = source.read_text()
    assert "value_10 = 100\nvalue_11 = 110\nnew = 1\nvalue_12 = 12\n" in text and text.count("\n") == 41


def test_no_match_shows_the_closest_region_numbered(make_ctx, source):
    result = dispatch(make_ctx(), "file_patch", {"path": "app.py", "old_content": "value_20 = 20\nvalue_21 = 2l\n"
                                                 "value_22 = 22\n", "new_content": "x\n"})
    assert result.is_error and "not found" in result.content
    assert "closest region is lines 20-22" in result.content
    assert "\n21|value_21 = 21\n" in result.content and "18|value_18 = 18" in result.content
    assert source.read_text().count("value_21 = 21") == 1


def test_old_content_copied_with_line_numbers_is_found_at_the_lines_they_name(make_ctx, source):
    # the numbers from file_read on every line, in new_content too: both without them
    result = dispatch(make_ctx(), "file_patch", {"path": "app.py", "old_content": "5|value_5 = 5\n6|value_6 = 6\n",
                                                 "new_content": "5|value_5 = 50\n6|value_6 = 60\n"})
    assert result.content == ("[old_content had file_read's `N|` line numbers on every line: they were left out. "
                              "Send the file's text only.]\nPatched app.py: replaced lines 5-6 (2 lines) with 2 lines.")
    assert "value_4 = 4\nvalue_5 = 50\nvalue_6 = 60\nvalue_7 = 7\n" in source.read_text()
    # numbered old_content, plain new_content (one line: its number is checked against where it is)
    patch(make_ctx(), "app.py", "7|value_7 = 7", "value_7 = 70")
    assert "value_7 = 70\n" in source.read_text()


def test_numbered_old_content_naming_other_lines_gets_a_hint(make_ctx, source):
    with pytest.raises(ToolError, match="leave those out"):
        patch(make_ctx(), "app.py", "15|value_5 = 5\n16|value_6 = 6", "x")
    with pytest.raises(ToolError, match="leave those out"):  # the numbers skip a line
        patch(make_ctx(), "app.py", "5|value_5 = 5\n7|value_7 = 7", "x")
    assert source.read_text() == "".join(f"value_{i} = {i}\n" for i in range(1, 41))


def test_a_missing_file_is_looked_for_before_one_is_made(make_ctx, source, workspace):
    result = dispatch(make_ctx(), "file_patch", {"path": "sop/get_user/SKILL.md", "old_content": "get_user",
                                                 "new_content": "fetch_user"})
    assert result.is_error and result.content.startswith("No such file: sop/get_user/SKILL.md. file_patch edits a "
                                                         "file that exists: list a folder with file_read (path='.')")
    result = dispatch(make_ctx(), "file_patch", {"path": "ap.py", "old_content": "x", "new_content": "y"})
    assert "Did you mean: app.py?" in result.content and not (workspace / "sop").exists()


def test_three_matches_give_count_and_lines(make_ctx, workspace):
    (workspace / "dup.py").write_text("a\nx = 1\nb\nc\nx = 1\nd\ne\nf\nx = 1\n")
    result = dispatch(make_ctx(), "file_patch", {"path": "dup.py", "old_content": "x = 1", "new_content": "x = 2"})
    assert result.is_error and "3 places" in result.content and "lines 2, 5, 9" in result.content
    assert "more surrounding lines" in result.content
    assert (workspace / "dup.py").read_text().count("x = 1") == 3


def test_a_same_size_edit_with_its_mtime_put_back_is_still_a_change(make_ctx, source, workspace):
    ctx = make_ctx()
    file_read.run({"path": "app.py"}, ctx)
    before = source.stat()
    source.write_text(source.read_text().replace("value_1 = 1", "value_1 = 7"))  # same size
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert source.stat().st_mtime_ns == before.st_mtime_ns and source.stat().st_size == before.st_size
    result = dispatch(ctx, "file_patch", {"path": "app.py", "old_content": "value_2 = 2\n", "new_content": "v = 0\n"})
    assert result.is_error and "changed on disk" in result.content
    refused = dispatch(ctx, "file_write", {"path": "app.py", "content": "everything new\n"})
    assert refused.is_error and "changed on disk" in refused.content and "value_1 = 7" in source.read_text()


def test_refused_when_changed_since_read(make_ctx, source):
    ctx = make_ctx()
    file_read.run({"path": "app.py"}, ctx)
    source.write_text(source.read_text() + "added_by_someone_else = 1\n")
    result = dispatch(ctx, "file_patch", {"path": "app.py", "old_content": "value_1 = 1\n", "new_content": "v = 0\n"})
    assert result.is_error and "changed on disk" in result.content and "file_read" in result.content
    assert "value_1 = 1\n" in source.read_text()
    file_read.run({"path": "app.py"}, ctx)
    assert not dispatch(ctx, "file_patch", {"path": "app.py", "old_content": "value_1 = 1\n",
                                            "new_content": "v = 0\n"}).is_error


def test_own_writes_do_not_count_as_changes(make_ctx, workspace):
    ctx = make_ctx()
    file_write.run({"path": "n.txt", "content": "one\ntwo\n"}, ctx)
    patch(ctx, "n.txt", "one", "1")
    patch(ctx, "n.txt", "two", "2")
    assert (workspace / "n.txt").read_text() == "1\n2\n"


def test_never_read_file_may_be_patched(make_ctx, source):
    assert "Patched" in patch(make_ctx(), "app.py", "value_3 = 3", "value_3 = 33").content


def test_empty_old_content_points_to_file_write(make_ctx, source):
    result = dispatch(make_ctx(), "file_patch", {"path": "app.py", "old_content": "", "new_content": "x"})
    assert result.is_error and "file_write" in result.content


def test_missing_file_suggests_and_points_to_file_write(make_ctx, source):
    with pytest.raises(ToolError, match=r"Did you mean: app\.py.*file_write"):
        patch(make_ctx(), "ap.py", "a", "b")


def test_binary_file_is_refused(make_ctx, workspace):
    (workspace / "x.bin").write_bytes(b"\x00\x01abc\x00")
    with pytest.raises(ToolError, match="binary"):
        patch(make_ctx(), "x.bin", "abc", "def")


def _tolerant(ctx, path: Path, data: bytes, old: str, new: str, span: bytes, written: bytes) -> ToolResult:
    """Patch `old`, which matches `span` of `data` only tolerantly; all other bytes must stay as they were."""
    path.write_bytes(data)
    result = patch(ctx, path.name, old, new)
    head, tail = data.split(span)
    assert path.read_bytes() == head + written + tail
    assert "tolerant" in result.content and result.details["tolerant"]
    return result


def test_tolerant_crlf_takes_the_files_line_endings(make_ctx, workspace):
    data = b"keep  \r\nalpha\r\nbeta\r\ngamma\r\n\xe2\x80\x9ckept\xe2\x80\x9d\r\n"
    _tolerant(make_ctx(), workspace / "w.txt", data, "alpha\nbeta\n", "ALPHA\nnew\nBETA\n",
              b"alpha\r\nbeta\r\n", b"ALPHA\r\nnew\r\nBETA\r\n")


def test_tolerant_curly_quotes_both_ways(make_ctx, workspace):
    data = "x = “a”\nprint(‘hi’)\ny = ‘z’\n".encode()
    _tolerant(make_ctx(), workspace / "q.py", data, "print('hi')", "print('bye')",
              "print(‘hi’)".encode(), b"print('bye')")
    _tolerant(make_ctx(), workspace / "r.py", b"say('hi')\nsay(\"x\")\n", "say(“x”)", "say(1)", b'say("x")', b"say(1)")


def test_tolerant_nbsp_and_dashes(make_ctx, workspace):
    data = "a\u00a0=\u00a01\u2009\nrange 1\u20132 \u2014 ok\nz\u00a0\n".encode()
    _tolerant(make_ctx(), workspace / "n.txt", data, "a = 1 \nrange 1-2 - ok", "b = 2",
              "a\u00a0=\u00a01\u2009\nrange 1\u20132 \u2014 ok".encode(), b"b = 2")


def test_tolerant_trailing_spaces(make_ctx, workspace):
    data = b"def f():   \n    return 1  \n\t\nother   \n"
    _tolerant(make_ctx(), workspace / "t.py", data, "def f():\n    return 1\n", "def f():\n    return 2\n",
              b"def f():   \n    return 1  \n", b"def f():\n    return 2\n")


def test_tolerant_keeps_the_bom(make_ctx, workspace):
    data = b"\xef\xbb\xbffirst\r\nsecond\r\nthird\r\n"
    _tolerant(make_ctx(), workspace / "b.txt", data, "first\nsecond", "1st\n2nd", b"first\r\nsecond", b"1st\r\n2nd")
    assert (workspace / "b.txt").read_bytes().startswith(b"\xef\xbb\xbf1st")


def test_tolerant_full_width_forms(make_ctx, workspace):
    data = "标题：１２\nrest（a， b）\n".encode()
    _tolerant(make_ctx(), workspace / "f.txt", data, "标题:12", "标题:13", "标题：１２".encode(), "标题:13".encode())
    _tolerant(make_ctx(), workspace / "g.txt", b"call(a, b)\n", "call（a， b）", "call(b)", b"call(a, b)", b"call(b)")


def test_tolerant_match_must_be_unique_too(make_ctx, workspace):
    (workspace / "u.txt").write_text("‘a’\n’a‘\nx ‛a’\n")
    with pytest.raises(ToolError, match=r"3 places .*lines 1, 2, 3"):
        patch(make_ctx(), "u.txt", "'a'", "b")


def test_an_exact_match_wins_over_tolerant_ones(make_ctx, workspace):
    (workspace / "e.txt").write_text("say(“hi”)\nsay(\"hi\")\n")
    patch(make_ctx(), "e.txt", 'say("hi")', "done")
    assert (workspace / "e.txt").read_text() == "say(“hi”)\ndone\n"


def test_mode_is_kept(make_ctx, source):
    source.chmod(0o751)
    patch(make_ctx(), "app.py", "value_2 = 2", "value_2 = 22")
    assert stat.S_IMODE(source.stat().st_mode) == 0o751
    assert not [p for p in source.parent.iterdir() if p.name.endswith(".tmp")]


def test_patch_through_an_inner_symlink_edits_the_target(make_ctx, source, workspace):
    os.symlink(source, workspace / "alias.py")
    patch(make_ctx(), "alias.py", "value_4 = 4", "value_4 = 44")
    assert (workspace / "alias.py").is_symlink() and "value_4 = 44" in source.read_text()


def test_outside_workspace_and_links_out_are_refused(make_ctx, workspace, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    os.symlink(outside, workspace / "out.txt")
    for path in (str(outside), "../outside.txt", "out.txt", "a/../../outside.txt"):
        result = dispatch(make_ctx(), "file_patch", {"path": path, "old_content": "keep", "new_content": "lose"})
        assert result.is_error and "workspace-confinement" in result.content, path
    assert outside.read_text() == "keep me\n"


def test_a_path_outside_is_refused_never_rewritten_and_the_refusal_names_what_the_workspace_has(make_ctx, workspace,
                                                                                                   tmp_path):
    (workspace / "app.py").write_text("def load():\n    return 1\n")
    near = workspace.parent / "app.py"  # the workspace's absolute path with its last folder dropped
    result = dispatch(make_ctx(), "file_patch", {"path": str(near), "old_content": "load", "new_content": "fetch"})
    assert result.is_error and "workspace-confinement" in result.content
    assert "The workspace has app.py: if you meant it, pass path='app.py'" in result.content
    assert (workspace / "app.py").read_text().startswith("def load():") and not near.exists()
    # a new file beside the workspace (a 1.5B model's /w/hello.txt for /w/hello/hello.txt): refused, never made inside
    made = workspace.parent / "new.txt"
    result = dispatch(make_ctx(), "file_write", {"path": str(made), "content": "x"})
    assert result.is_error and "relative to it (e.g. path='new.txt')" in result.content
    assert not (workspace / "new.txt").exists() and not made.exists()
    # the workspace's own template at the same path (/etc/myapp/app.conf, workspace etc/myapp/app.conf): untouched
    (workspace / "etc" / "myapp").mkdir(parents=True)
    (workspace / "etc" / "myapp" / "app.conf").write_text("template\n")
    result = dispatch(make_ctx(), "file_write", {"path": "/etc/ga-test-no-such/app.conf", "content": "x"})
    assert result.is_error and (workspace / "etc" / "myapp" / "app.conf").read_text() == "template\n"
    result = dispatch(make_ctx(), "file_write", {"path": "/etc/myapp/app.conf", "content": "live\n"})
    assert result.is_error and "The workspace has etc/myapp/app.conf: if you meant it" in result.content
    assert (workspace / "etc" / "myapp" / "app.conf").read_text() == "template\n"


def test_a_stray_leading_slash_or_a_dropped_folder_is_refused_with_the_name_to_use(make_ctx, workspace, tmp_path):
    top = "ga-test-no-such-folder"
    (workspace / top).mkdir()
    (workspace / top / "notes.txt").write_text("inside\n")
    result = dispatch(make_ctx(), "file_read", {"path": f"/{top}/notes.txt"})
    assert result.is_error and f"The workspace has {top}/notes.txt: if you meant it" in result.content
    assert "inside" not in result.content
    (workspace / "logs").mkdir()
    made = workspace.parent / "logs" / "new.txt"  # its folder exists only in the workspace
    result = dispatch(make_ctx(), "file_write", {"path": str(made), "content": "fresh\n"})
    assert result.is_error and "The workspace has the folder logs: if you meant a new file there, pass " \
                               "path='logs/new.txt'" in result.content
    assert not (workspace / "logs" / "new.txt").exists() and not made.parent.exists()
    # a symlink in the workspace pointing out: the path it would lead to is refused, not reached
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.txt").write_text("top secret\n")
    os.symlink(tmp_path / "elsewhere", workspace / "out")
    for path in (str(workspace.parent / "out" / "secret.txt"), "/out/secret.txt"):
        result = dispatch(make_ctx(), "file_read", {"path": path})
        assert result.is_error and "workspace-confinement" in result.content and "top secret" not in result.content
        assert "The workspace has" not in result.content  # a link out is not something to point the model at


def test_parallel_patches_are_serialised(make_ctx, workspace):
    path = workspace / "slots.txt"
    path.write_text("".join(f"slot {i:02d} = empty\n" for i in range(24)))
    ctx = make_ctx()
    file_read.run({"path": "slots.txt"}, ctx)  # stamps exist, so every patch also checks freshness
    barrier = threading.Barrier(24)
    results: list[ToolResult | Exception] = [None] * 24

    def work(i: int) -> None:
        barrier.wait()
        try:
            results[i] = patch(ctx, "slots.txt", f"slot {i:02d} = empty", f"slot {i:02d} = filled by {i}")
        except Exception as e:
            results[i] = e

    threads = [threading.Thread(target=work, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(isinstance(r, ToolResult) and not r.is_error for r in results), results
    assert path.read_text() == "".join(f"slot {i:02d} = filled by {i}\n" for i in range(24))


@pytest.mark.parametrize("text, old", [("ab\nab\nab\n", "ab\nab\n"), ("}\n}\n}\n", "}\n}\n")])
def test_overlapping_matches_count(make_ctx, workspace, text, old):
    (workspace / "o.txt").write_text(text)
    result = dispatch(make_ctx(), "file_patch", {"path": "o.txt", "old_content": old, "new_content": "x\n"})
    assert result.is_error and "2 places" in result.content and "lines 1, 2; some overlap" in result.content
    assert (workspace / "o.txt").read_text() == text


def test_overlapping_tolerant_matches_count(make_ctx, workspace):
    (workspace / "crlf.txt").write_bytes(b"}\r\n}\r\n}\r\n")
    (workspace / "blank.txt").write_text("ab \nab \nab \n")
    for path, old in (("crlf.txt", "}\n}\n"), ("blank.txt", "ab\nab\n")):
        with pytest.raises(ToolError, match=r"2 places .*lines 1, 2; some overlap"):
            patch(make_ctx(), path, old, "x\n")


def test_starts_inside_one_folded_piece_are_one_place(make_ctx, workspace):
    (workspace / "e.txt").write_text("wait…\n")  # ".." is at folded 4 and 5 of "wait...", both inside the "…"
    result = patch(make_ctx(), "e.txt", "..", "!")
    assert result.content.startswith("Patched e.txt: replaced line 1 with 1 line.") and result.details["tolerant"]
    assert (workspace / "e.txt").read_text() == "wait!\n"


def test_periodic_matches_are_counted_up_to_a_cap(make_ctx, workspace, monkeypatch):
    monkeypatch.setattr(matching, "MAX_COUNTED", 5)
    (workspace / "p.txt").write_text("ab\n" * 20)
    with pytest.raises(ToolError, match=r"more than 5 places .*lines 1, 2, 3, 4, 5, 6; some overlap"):
        patch(make_ctx(), "p.txt", "ab\nab\n", "x\n")


@pytest.mark.timeout(10)  # before the fix, read_bytes waited for a writer forever
def test_fifo_is_refused_without_blocking(make_ctx, workspace, monkeypatch):
    os.mkfifo(workspace / "pipe")
    with pytest.raises(ToolError, match=r"pipe is a FIFO \(named pipe\), not a regular file"):
        patch(make_ctx(), "pipe", "a", "b")
    monkeypatch.setattr(fileio, "require_regular", lambda *args: None)  # as if it became a FIFO after the check
    with pytest.raises(ToolError, match=r"pipe is a FIFO \(named pipe\), not a regular file"):
        patch(make_ctx(), "pipe", "a", "b")
    assert stat.S_ISFIFO((workspace / "pipe").stat().st_mode)


def test_a_file_over_the_size_cap_is_refused_with_the_code_run_route(make_ctx, workspace):
    big = workspace / "big.csv"
    with open(big, "w") as f:
        f.write("id,value\n" * (file_patch.MAX_BYTES // 9 + 10))
    before = big.stat()
    result = dispatch(make_ctx(), "file_patch", {"path": "big.csv", "old_content": "id,value\nid",
                                                 "new_content": "x"})
    assert result.is_error and "big.csv is 16.0M, over file_patch's 16.0M limit" in result.content
    assert "code_run" in result.content and "sed -i" in result.content
    assert big.stat().st_mtime_ns == before.st_mtime_ns


def test_confirm_preview_is_the_diff_and_writes_nothing(make_ctx, source):
    ctx = make_ctx()
    shown = file_patch.preview({"path": "app.py", "old_content": "value_2 = 2", "new_content": "value_2 = 22"}, ctx)
    assert "-value_2 = 2\n+value_2 = 22\n" in shown and shown.startswith("--- a/app.py\n+++ b/app.py\n@@ -1,5")
    assert "value_2 = 2\n" in source.read_text()
    with pytest.raises(ToolError, match="not found"):
        file_patch.preview({"path": "app.py", "old_content": "nope nope", "new_content": "x"}, ctx)


def test_replace_all_changes_every_place_and_says_where(make_ctx, workspace):
    (workspace / "calc.py").write_text("def calc(x):\n    return x\n\n\nprint(calc(1))\nprint(calculate, calc(2))\n")
    ctx = make_ctx()
    refused = dispatch(ctx, "file_patch", {"path": "calc.py", "old_content": "calc(", "new_content": "total("})
    assert refused.is_error and "3 places" in refused.content and "replace_all=true" in refused.content
    result = dispatch(ctx, "file_patch", {"path": "calc.py", "old_content": "calc(", "new_content": "total(",
                                          "replace_all": True})
    assert result.content == "Patched calc.py: replaced all 3 places (at lines 1, 5, 6)."
    assert (workspace / "calc.py").read_text() == ("def total(x):\n    return x\n\n\nprint(total(1))\n"
                                                   "print(calculate, total(2))\n")
    assert result.details["lines"] == [1, 5, 6] and "-print(calc(1))\n" in result.details["diff"]


def test_replace_all_keeps_the_files_line_endings_and_bytes_between(make_ctx, workspace):
    (workspace / "w.txt").write_bytes(b"a\r\n\xff b\r\na\r\n")
    patch_all = {"path": "w.txt", "old_content": "a\n", "new_content": "c\nd\n", "replace_all": True}
    assert file_patch.run(patch_all, make_ctx()).details["tolerant"]
    assert (workspace / "w.txt").read_bytes() == b"c\r\nd\r\n\xff b\r\nc\r\nd\r\n"


def test_a_rename_in_one_place_says_where_the_old_name_still_is(make_ctx, workspace):
    (workspace / "app.py").write_text("def calc(x):\n    return x\n\n\nprint(calc(1), calc(2))\nvalue = calculate\n")
    result = patch(make_ctx(), "app.py", "def calc(x):", "def total(x):")
    assert result.content == ("Patched app.py: replaced line 1 with 1 line. `calc` still occurs 2 more times in "
                              "app.py (line 5); replace_all=true changes every match of old_content.")
    # a value changed, or a keyword: nothing to say
    assert patch(make_ctx(), "app.py", "return x", "return None").content.endswith("with 1 line.")
    assert matching.renamed_word("x = 10\n", "x = 11\n") == ""
    assert matching.renamed_word("if a and b:", "if a or b:") == ""
    assert matching.renamed_word("colour = colour + 1", "color = color + 1") == "colour"
