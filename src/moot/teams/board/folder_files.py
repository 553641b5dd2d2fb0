"""The folder board's files: durable writes, safe reads, and the leftovers a crash can leave.

Every write is all-or-nothing (a temp file in the same folder, fsync, rename, fsync of the
folder). Reads go through the one safe reader (:mod:`moot.files`) without following links.
A writer killed with ``kill -9`` can leave hidden files behind: a move's ``.commit~`` record
(written before its commit point), a submit's ``.submit~`` link source, an ``atomic_write``
temp file. :func:`clean_leftovers` removes them when no living writer can still need them:
a ``.commit~`` file is kept while its writer holds its ``flock`` (the lock dies with the
process), while a move marker names it, and for its first :data:`LEFTOVER_AGE_S` seconds.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
import uuid
from pathlib import Path

from moot.errors import MootError
from moot.files import UnsafeFileError, open_regular, read_capped
from moot.teams.board.task import MAX_TASK_BYTES, InvalidTaskError

LEFTOVER_AGE_S = 60.0
"""A hidden temp or commit file younger than this may belong to a writer at work: it is kept."""


class BoardWriteError(MootError):
    """A write to the board failed (disk full, permissions); the previous state is kept."""

    fix = "free disk space or fix the folder's permissions, then retry"


def new_nonce() -> str:
    return uuid.uuid4().hex[:12]


def fsync_dir(path: Path) -> None:
    """Make a rename durable; some filesystems refuse to fsync a directory, which is fine."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_new(path: Path, data: bytes, *, mtime: float | None = None) -> None:
    """Create ``path`` (which must not exist), write and fsync it; on any error remove it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if mtime is not None:
            os.utime(path, (mtime, mtime))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def atomic_write(path: Path, data: bytes, *, mtime: float | None = None, sync_dir: bool = True) -> None:
    """Replace ``path`` with ``data`` all-or-nothing: temp file in the same folder, fsync, rename,
    fsync of the folder (``sync_dir=False`` skips the last, for a rewrite whose loss in a power
    cut leaves a state the board already recovers from)."""
    tmp = path.parent / f".{path.name}.{new_nonce()}.tmp"
    try:
        write_new(tmp, data, mtime=mtime)
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise BoardWriteError(f"could not write {path}: {exc.strerror or exc}") from exc
    if sync_dir:
        fsync_dir(path.parent)


def read_regular(path: Path, limit: int = MAX_TASK_BYTES) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    Read through the one safe reader (:mod:`moot.files`) without following links: never a
    symlink (``O_NOFOLLOW``), never a wait on a FIFO (``O_NONBLOCK``), the opened file checked
    with ``fstat``, so a link to /dev/zero, a FIFO or a folder named ``x.json`` is refused with
    :class:`InvalidTaskError` instead of hanging or eating memory.
    """
    try:
        with open_regular(path, max_bytes=limit, what="", credentials=False, follow=False) as handle:
            data = read_capped(handle, limit, path.name)
    except UnsafeFileError as exc:
        if exc.reason == "missing":
            raise FileNotFoundError(errno.ENOENT, "no such file", str(path)) from None
        if exc.reason == "too-large":
            raise InvalidTaskError(f"{path.name} is over the limit of {limit} bytes") from None
        kind = {"symlink": "a symbolic link", "folder": "a folder"}.get(exc.reason)
        raise InvalidTaskError(f"{path.name} is {kind}, not a task file" if kind else f"{path.name} {exc.detail}") from None
    return data


def write_locked(path: Path, data: bytes) -> int:
    """Create ``path``, hold an exclusive ``flock`` on it, write and fsync ``data``; returns the
    open descriptor (the lock lasts until it is closed, or until the process dies)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        return fd
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def _is_locked(path: Path) -> bool:
    """Whether a living process holds the file's ``flock`` (a move still at work on it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return True  # gone or unreadable: not ours to remove
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)


def clean_leftovers(folders: list[Path], markers: set[str], *, now: float | None = None) -> list[str]:
    """Remove what killed writers left in ``folders``: ``.commit~`` records no move marker names
    and no living writer holds, ``.submit~`` and ``.tmp`` files; only files older than
    :data:`LEFTOVER_AGE_S` (or dated in the future). ``markers``: the nonces of move markers
    still in ``active/`` (their commit files are rolled forward, never removed). Returns the
    names removed."""
    now = time.time() if now is None else now
    removed: list[str] = []
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                hidden = [e for e in entries if e.name.startswith((".commit~", ".submit~")) or
                          (e.name.startswith(".") and e.name.endswith(".tmp"))]
        except FileNotFoundError:
            continue
        for entry in hidden:
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if abs(now - st.st_mtime) < LEFTOVER_AGE_S:
                continue
            path = folder / entry.name
            if entry.name.startswith(".commit~"):
                nonce = entry.name.split("~")[1] if entry.name.count("~") >= 2 else ""
                if nonce in markers or _is_locked(path):
                    continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
                removed.append(f"{folder.name}/{entry.name}")
    return removed


__all__ = [
    "LEFTOVER_AGE_S", "BoardWriteError", "atomic_write", "clean_leftovers", "fsync_dir", "new_nonce", "read_regular",
    "write_locked", "write_new",
]
