"""A symlink flipped in the background by a real thread never takes a file tool outside the workspace.

The flip is atomic (renameat2 RENAME_EXCHANGE): the entry always exists and is, from one instant to the next, a real
folder (or file) inside the workspace or a symlink to one outside. Each call either works inside, or is refused
with the usual precise message; none reads, lists or writes anything outside.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
from pathlib import Path

import pytest

from ga.protocols import ToolCall
from ga.tooling.dispatch import Dispatcher
from tools import file_patch, file_read, file_write

ATTEMPTS = 300
_libc = ctypes.CDLL(None, use_errno=True)


def exchange(a: Path, b: Path) -> None:
    if _libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        raise OSError(ctypes.get_errno(), "renameat2")


@pytest.fixture
def flipping(tmp_path):
    """flipping(entry, link): swap the two names again and again in a background thread until the test ends."""
    stop = threading.Event()
    threads = []

    def start(entry: Path, link: Path) -> None:
        def flip() -> None:
            while not stop.is_set():
                exchange(entry, link)

        thread = threading.Thread(target=flip, daemon=True)
        thread.start()
        threads.append(thread)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the flipper and the tool as finely as the GIL allows
    yield start
    stop.set()
    for thread in threads:
        thread.join()
    sys.setswitchinterval(old)


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("OUTSIDE SECRET\n")
    (folder / "log.txt").write_text("outside log\n")
    return folder


def calls(dispatcher: Dispatcher, ctx, name: str, arguments: list[dict]) -> list:
    return [dispatcher.dispatch([ToolCall(id=f"c{i}", name=name, arguments=json.dumps(a))], ctx)[0]
            for i, a in enumerate(arguments)]


def outside_state(outside: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in outside.iterdir()}


def test_writes_appends_and_patches_through_a_flipping_folder_stay_inside(make_ctx, workspace, outside, flipping):
    inside = workspace / "d"
    inside.mkdir()
    (inside / "log.txt").write_text("inside log\n")
    for i in range(ATTEMPTS // 3):
        (inside / f"p{i}.txt").write_text("patch me\n")
        (outside / f"p{i}.txt").write_text("patch me\n")
    (workspace / "swap").symlink_to(outside)
    before = outside_state(outside)
    ctx = make_ctx()
    dispatcher = Dispatcher([file_write.SPEC, file_patch.SPEC])
    flipping(inside, workspace / "swap")
    writes = calls(dispatcher, ctx, "file_write", [{"path": f"d/new{i}.txt", "content": "x"} for i in range(ATTEMPTS)])
    appends = calls(dispatcher, ctx, "file_write",
                    [{"path": "d/log.txt", "content": f"{i}\n", "mode": "append"} for i in range(ATTEMPTS)])
    patches = calls(dispatcher, ctx, "file_patch", [{"path": f"d/p{i}.txt", "old_content": "patch me",
                                                     "new_content": "patched"} for i in range(ATTEMPTS // 3)])
    assert outside_state(outside) == before  # nothing created or changed outside, in any attempt
    results = writes + appends + patches
    assert any(not r.is_error for r in results), "every attempt was refused: the race was not exercised"
    odd = [r.content for r in results if r.is_error and not any(
        known in r.content for known in ("outside the workspace", "kept changing", "changed on disk"))]
    assert odd == []  # each refusal is one of the precise ones


def test_reads_and_listings_through_a_flipping_entry_never_show_outside(make_ctx, workspace, outside, flipping):
    inside = workspace / "d"
    inside.mkdir()
    (inside / "secret.txt").write_text("inside text\n")
    (workspace / "f.txt").write_text("inside file\n")
    (workspace / "swap").symlink_to(outside)
    (workspace / "swap-file").symlink_to(outside / "secret.txt")
    ctx = make_ctx()
    dispatcher = Dispatcher([file_read.SPEC])
    flipping(inside, workspace / "swap")
    flipping(workspace / "f.txt", workspace / "swap-file")
    results = [*calls(dispatcher, ctx, "file_read", [{"path": "d/secret.txt"}] * ATTEMPTS),
               *calls(dispatcher, ctx, "file_read", [{"path": "f.txt"}] * ATTEMPTS),
               *calls(dispatcher, ctx, "file_read", [{"path": "d"}] * ATTEMPTS)]
    leaked = [r.content for r in results if "OUTSIDE" in r.content or "log.txt" in r.content]
    assert leaked == []
    assert sum(not r.is_error for r in results) > 0
    odd = [r.content for r in results
           if r.is_error and "outside the workspace" not in r.content and "kept changing" not in r.content]
    assert odd == []
