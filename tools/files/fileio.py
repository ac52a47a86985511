"""What the file tools share: per-file locks, change stamps, regular-file checks, binary sniffing, path hints.
Opening, creating and replacing files happens in ga/tooling/boundary/confined.py, never by path."""

from __future__ import annotations

import codecs
import contextlib
import difflib
import itertools
import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ga.errors import PermissionDenied, ToolError
from ga.tooling import stamps
from ga.tooling.boundary import confined
from ga.tooling.boundary.confined import Place
from ga.tooling.spec import ToolContext

SNIFF_BYTES = 8192
DIFF_CONTEXT = 3
COPY_CHUNK = 1 << 20
WALK_LIMIT = 20_000
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
             ".mypy_cache", ".pytest_cache", ".ruff_cache"}
_MAGIC = (
    (b"\x89PNG", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF8", "GIF image"),
    (b"%PDF", "PDF document"), (b"PK\x03\x04", "ZIP archive (or docx/xlsx/jar)"), (b"\x1f\x8b", "gzip archive"),
    (b"\x7fELF", "ELF executable"), (b"SQLite format 3", "SQLite database"), (b"\xff\xfe", "UTF-16 text"),
    (b"\xfe\xff", "UTF-16 text"), (b"BZh", "bzip2 archive"), (b"\xfd7zXZ", "xz archive"), (b"RIFF", "RIFF media"),
    (b"\x00asm", "WebAssembly module"), (b"OggS", "Ogg media"),
)
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
SPECIAL_ADVICE = "If you really need its data, read it with code_run and a timeout (`timeout 5 head -c 4096 PATH`)."
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\f\b\x1b") + b"\x7f"

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


@contextlib.contextmanager
def os_errors(verb: str, shown: str) -> Iterator[None]:
    """An OS refusal (permissions, full disk...) as a message the model can act on, not a crash."""
    try:
        yield
    except OSError as e:
        raise ToolError(f"Could not {verb} {shown}: {e.strerror or e}. Check the path and its permissions, "
                        "or try another file.") from None


def path_lock(real: Path) -> threading.Lock:
    """One lock per real path, so writes to one file from parallel calls never interleave."""
    with _locks_guard:
        return _locks.setdefault(str(real), threading.Lock())


def ensure_unchanged(ctx: ToolContext, place: Place, st: os.stat_result, shown: str, action: str) -> None:
    """Refuse to `action` a file that changed on disk since the model last read or wrote it (never-seen files pass)."""
    def content() -> Iterator[bytes]:
        return read_chunks(open_regular(place, st, shown, "this tool"))
    if stamps.changed_since_seen(ctx.state, place.real, st, content):
        raise ToolError(f"{shown} changed on disk since you last read or wrote it, so {action} could undo that "
                        "change. Read it again with file_read, then make your change to the current content.")


def encode(text: str) -> bytes:
    """UTF-8; bytes that came in undecodable go back as they were; a stray surrogate becomes '?'."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def is_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
        return False
    except UnicodeDecodeError:
        # not UTF-8: still text (latin-1, cp1252...) unless control bytes are common
        return len(sample) - len(sample.translate(None, _CONTROL)) > len(sample) // 10


def sniff_type(sample: bytes) -> str:
    return next((kind for magic, kind in _MAGIC if sample.startswith(magic)), "binary data")


def plural(count: int, noun: str, many: str = "") -> str:
    return f"{count} {noun if count == 1 else many or noun + 's'}"


def human_size(size: int) -> str:
    value, unit = float(size), 0
    while value >= 1024 and unit < 4:
        value, unit = value / 1024, unit + 1
    return f"{size}B" if unit == 0 else f"{value:.1f}{'BKMGT'[unit]}"


def shown_path(real: Path, workspace: Path) -> str:
    return os.path.relpath(real, workspace) if real.is_relative_to(workspace) else str(real)


def diff_names(shown: str) -> tuple[str, str]:
    """A unified diff's two names: a/PATH and b/PATH as git writes them, an absolute path as it is (not a//var/x)."""
    return (shown, shown) if shown.startswith("/") else (f"a/{shown}", f"b/{shown}")


def diff_lines(text: str) -> list[str]:
    """Lines with their "\n", a last one without marked as git marks it (str.splitlines would also split on form
    feeds and the like, which shifts line numbers)."""
    *lines, last = text.split("\n")
    return [line + "\n" for line in lines] + ([last + "\n\\ No newline at end of file\n"] if last else [])


def unified(old: str, new: str, names: tuple[str, str], offset: int = 0) -> str:
    """A unified diff, its line numbers shifted by `offset` (the diff of a region past the file's first line)."""
    def shift(m: re.Match) -> str:
        return f"@@ -{int(m[1]) + offset}{m[2] or ''} +{int(m[3]) + offset}{m[4] or ''} @@"

    hunks = difflib.unified_diff(diff_lines(old), diff_lines(new), *names, n=DIFF_CONTEXT)
    return "".join(_HUNK.sub(shift, h) if offset and h.startswith("@@") else h for h in hunks)


def not_regular(shown: str, mode: int, tool: str, advice: str = SPECIAL_ADVICE) -> ToolError:
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return ToolError(f"{shown} is {kind}, not a regular file; {tool} works on regular files only (reading or "
                     f"writing anything else can block forever or never end). {advice}")


def require_regular(st: os.stat_result, shown: str, tool: str, advice: str = SPECIAL_ADVICE) -> None:
    """Refuse a FIFO, device, socket... by its stat, before anything opens it (opening alone can block); and a hard
    link that may be another user's or a private file's second name (see refuse_linked)."""
    if not stat.S_ISREG(st.st_mode):
        raise not_regular(shown, st.st_mode, tool, advice)
    refuse_linked(st, shown, tool)


def refuse_linked(st: os.stat_result, shown: str, tool: str, *, append: bool = False) -> None:
    """A file with several names (hard links) is one file: its other names may lie outside the workspace, where
    confinement cannot see them (`ln /etc/shadow x`). It is used only when it is the user's own and anyone may
    read it (pnpm's and uv's linked packages are); an append, which would change every name, never."""
    if st.st_nlink <= 1:
        return
    if append:
        raise PermissionDenied(
            f"Refused to append to {shown}: it has {st.st_nlink} names (hard links), and its other names may lie "
            "outside the workspace; an append would change them all (rule: hard-link). Write the whole new content "
            "with mode=overwrite, which replaces this name only.")
    if st.st_uid != os.geteuid() or not st.st_mode & stat.S_IROTH:
        why = "belongs to another user" if st.st_uid != os.geteuid() else f"is private (mode {st.st_mode & 0o777:o})"
        raise PermissionDenied(
            f"Refused: {shown} has {st.st_nlink} names (hard links) and {why}, so its other names may be a file "
            f"outside the workspace that {tool} must not reach (rule: hard-link). Leave it, or ask the user.")


def open_regular(place: Place, st: os.stat_result, shown: str, tool: str, advice: str = SPECIAL_ADVICE) -> BinaryIO:
    """Open a regular file for reading, never blocking on what is not one: checked by stat first (opening some
    devices has effects of its own), opened with O_NONBLOCK (a FIFO swapped in meanwhile opens at once instead of
    waiting for a writer) and checked again on the open descriptor."""
    require_regular(st, shown, tool, advice)
    f = confined.read_file(place)
    try:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(shown, mode, tool, advice)
    except BaseException:
        f.close()
        raise
    return f


def read_chunks(f: BinaryIO) -> Iterator[bytes]:
    with f:
        while chunk := f.read(COPY_CHUNK):
            yield chunk


def walk(root: Path) -> Iterator[Path]:
    """Every path under `root`, top down, skipping VCS, cache and environment folders."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        yield from (Path(folder) / name for name in [*dirs, *files])


def suggest(real: Path, workspace: Path, limit: int = 5) -> list[str]:
    """Existing paths close to a missing one: siblings with a similar name, then similar names anywhere."""
    parent = real.parent
    while not parent.is_dir() and parent != parent.parent:
        parent = parent.parent
    try:
        siblings = {p.name: p for p in itertools.islice(parent.iterdir(), WALK_LIMIT)}
    except OSError:
        siblings = {}
    found = [siblings[n] for n in difflib.get_close_matches(real.name, list(siblings), n=limit, cutoff=0.6)]
    if workspace.is_dir() and real.is_relative_to(workspace):
        matcher = difflib.SequenceMatcher(None, "", real.name.lower())
        scored = []
        for p in itertools.islice(walk(workspace), WALK_LIMIT):
            matcher.set_seq1(p.name.lower())
            if matcher.real_quick_ratio() >= 0.75 and matcher.quick_ratio() >= 0.75 and matcher.ratio() >= 0.75:
                scored.append((matcher.ratio(), p))
        found += [p for _, p in sorted(scored, key=lambda pair: -pair[0])[:limit]]
    names = [shown_path(p, workspace) + ("/" if p.is_dir() else "") for p in found]
    return list(dict.fromkeys(names))[:limit]


def missing(real: Path, workspace: Path, shown: str, hint: str) -> ToolError:
    close = suggest(real, workspace)
    return ToolError(f"No such file: {shown}. " + (f"Did you mean: {', '.join(close)}? " if close else "") + hint)
