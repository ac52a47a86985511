"""File access that cannot be raced out of the workspace: what was checked is what is opened.

ga.tooling.permissions.confine decides whether a path may be touched (with its precise refusals) and returns the
path with every symlink resolved. The file tools then reach exactly that path from the directory descriptor of the
allowed root it lies in, one component at a time, never following a symlink (O_NOFOLLOW): the final open, create, rename
or listing happens relative to the descriptor of the folder that was walked. A component that changed in between
(a folder swapped for a symlink while a background process flips it) fails the walk; the path is then checked and
walked again, and after a few such failures in a row the call gives up with a clear message. Nothing is ever
opened through a link that appeared after the check."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TypeVar

from ga.errors import PermissionDenied, ToolError
from ga.tooling import stamps
from ga.tooling.boundary.protected import hidden_for
from ga.tooling.spec import ToolContext

T = TypeVar("T")
RACE_RETRIES = 5
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_WALK = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
"""Folders on the way: O_PATH needs no read permission, only the right to pass through."""
_CHANGED = (errno.ELOOP, errno.ENOTDIR)


class Raced(Exception):
    """A component of a checked path is now a symlink: check and walk again."""


@dataclass(kw_only=True)
class Place:
    """An entry reached safely: the descriptor of its folder and its name there (`.`: the root itself)."""

    dir_fd: int | None
    """None when a folder on the way does not exist (or is a file): the entry is missing."""
    name: str
    real: Path
    """The checked path, for messages, stamps and locks; never opened by name."""
    made: list[Path] = field(default_factory=list)
    """Folders the walk created (writes with parents=True), outermost first."""

    def lstat(self) -> os.stat_result | None:
        """The entry's own stat (None: missing); a symlink here appeared after the check: Raced."""
        if self.dir_fd is None:
            return None
        try:
            st = os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            raise Raced(self.real)
        return st

    def open(self, flags: int, mode: int = 0o666) -> int:
        """os.open of the entry itself, never through a symlink."""
        try:
            return os.open(self.name, flags | os.O_NOFOLLOW | _CLOEXEC, mode, dir_fd=self._fd())
        except OSError as e:
            # a symlink now: ELOOP, or ENOTDIR when a folder was asked for (and it may be a folder again already)
            if e.errno == errno.ELOOP or (e.errno == errno.ENOTDIR and self._changing()):
                raise Raced(self.real) from None
            raise

    def _changing(self) -> bool:
        try:
            mode = os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False).st_mode
        except OSError:
            return False
        return stat.S_ISLNK(mode) or stat.S_ISDIR(mode)

    def open_dir(self) -> int:
        """A readable descriptor of the entry as a folder (for os.scandir)."""
        return self.open(os.O_RDONLY | os.O_DIRECTORY)

    def replace(self, chunks: Iterable[bytes], keep: os.stat_result | None) -> list[int]:
        """Write through a temp file in the same folder, then rename it over the entry: readers never see half a
        file. An existing file keeps its permission bits (`keep`); a new one gets the umask-based mode. Returns the
        stamp taken before the rename (with the written digest), so a later change by someone else cannot hide in it."""
        mode = stat.S_IMODE(keep.st_mode) if keep is not None else new_file_mode()
        tmp = f".{self.name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, 0o600, dir_fd=self._fd())
        digest, written = hashlib.blake2b(digest_size=16), 0
        try:
            with os.fdopen(fd, "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
                    written += len(chunk)
                    if written <= stamps.DIGEST_LIMIT:
                        digest.update(chunk)
                f.flush()
                os.fchmod(f.fileno(), mode)
                os.fsync(f.fileno())
                info = os.fstat(f.fileno())
            os.replace(tmp, self.name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.dir_fd)
            raise
        return stamps.stamp(info, digest.hexdigest() if written <= stamps.DIGEST_LIMIT else "")

    def _fd(self) -> int:
        if self.dir_fd is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(self.real))
        return self.dir_fd


def new_file_mode() -> int:
    # os.umask can only be read by setting it; the window is tiny
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def walk(real: Path, roots: list[Path], *, parents: bool = False) -> Iterator[Place]:
    """The Place of checked path `real`, walked down from the allowed root that holds it (the innermost)."""
    root = max((r for r in roots if real == r or real.is_relative_to(r)), key=lambda r: len(r.parts), default=None)
    if root is None:  # confine returned it, so this cannot happen unless the roots changed
        raise ToolError(f"{real} is outside every allowed folder.")
    parts = real.relative_to(root).parts
    if parents and not os.path.lexists(root):  # a root of ga's own not made yet (GA_HOME/memory before any fact)
        os.makedirs(root, mode=0o700, exist_ok=True)
    fd = os.open(root, _WALK)
    place = Place(dir_fd=None, name=parts[-1] if parts else ".", real=real)
    try:
        for i, part in enumerate(parts[:-1]):
            step = _step(fd, part, create=parents)
            if step is None:
                break
            if step < 0:
                place.made.append(root.joinpath(*parts[: i + 1]))
                step = _step(fd, part, create=False)
                if step is None:  # removed again at once
                    raise Raced(real)
            os.close(fd)
            fd = step
        else:
            place.dir_fd = fd
        yield place
    finally:
        os.close(fd)


def _step(fd: int, part: str, *, create: bool) -> int | None:
    """The descriptor of folder `part` inside `fd`; None: missing or a file; -1: it was just created (open again)."""
    try:
        return os.open(part, _WALK, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            return None
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, dir_fd=fd)
        return -1
    except OSError as e:
        if e.errno not in _CHANGED:
            raise
        try:
            mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(mode) or stat.S_ISDIR(mode):  # a symlink now, or a folder again: it is changing
            raise Raced(part) from None
        return None  # a file where a folder should be: the path does not exist


def confined(ctx: ToolContext, path: str, body: Callable[[Place], T], *, write: bool, parents: bool = False) -> T:
    """Check `path` (ctx.resolve: the precise refusals), walk to it, run `body` on its Place; again if raced.

    `body` may raise Raced only before it changed anything (it comes from the first open or stat of the entry)."""
    for attempt in range(RACE_RETRIES):
        try:
            real = ctx.resolve(path, write=write)
        except OSError as e:  # a link on the way changed while it was being resolved
            if attempt < RACE_RETRIES - 1:
                continue
            if e.errno == errno.EINVAL:  # readlink of what was a symlink at its lstat: it is changing
                break
            raise
        try:
            with walk(real, ctx.roots(write=write), parents=parents) as place:
                _refuse_hidden_link(ctx, place, write=write)
                return body(place)
        except Raced:
            continue
    raise ToolError(f"{path} kept changing while it was being opened (a folder or file on the way turned into a "
                    f"symlink, {RACE_RETRIES} times in a row), so nothing was done. Something is rewriting it: "
                    "stop that first, then try again.")


def _refuse_hidden_link(ctx: ToolContext, place: Place, *, write: bool) -> None:
    """A hard link in the workspace to a hidden file (a key, GA_HOME's config) is that file: refused as it is."""
    st = place.lstat()
    if st is None or not stat.S_ISREG(st.st_mode) or st.st_nlink <= 1:
        return
    if (found := hidden_for(ctx.settings, ctx.run_dir, write=write).linked(st)) is not None:
        raise PermissionDenied(
            f"Refused: {place.real} has {st.st_nlink} names (hard links), and one is {found}, which the file tools "
            "never reach (rule: hidden-path). Nothing was done. Do the task without it, or ask the user.")


def read_file(place: Place, flags: int = os.O_RDONLY) -> BinaryIO:
    """The entry opened for reading, without blocking on a FIFO swapped in (O_NONBLOCK, cleared once open)."""
    fd = place.open(flags | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
