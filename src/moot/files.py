"""Reading files that someone else may have put there: the one path every loader reads through.

``moot learn``, ``moot index`` (and the code tools over an index), graph sources, deliberation
data folders and the board's agent tools all read files a user pointed at, and a folder may
hold more than the user meant: a link to ``/etc/passwd`` or to a key outside the folder, a FIFO
that blocks ``open`` forever, ``/dev/zero``, a 20 GB log, a ``.env`` file. Every loader goes
through :func:`open_regular` / :func:`read_bytes`, which:

- **resolve the path and refuse what leaves the allowed root** (``root=``): a link that stays
  inside the root is read as its target, one that leads out is refused;
- **open without following links and without blocking**: with a root, every folder on the way
  down is opened relative to the one above with ``O_NOFOLLOW`` (so a folder swapped for a link
  after the check is refused, not followed), and the file itself with
  ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO opens at once instead of waiting for a writer);
- **read only regular files**, checked with ``fstat`` on the opened descriptor (a device, a
  FIFO, a socket or a folder is refused), **and at most a byte cap** whose error names the
  limit (``st_size`` is not trusted: at most ``cap + 1`` bytes are ever read);
- **apply the credential filter**: a path that names a credentials file
  (:func:`looks_like_credentials`) or content that holds a private key or a known token format
  (:func:`contains_credentials`) is refused.

A refusal is an :class:`UnsafeFileError` (one line and a fix, like every :class:`MootError`)
whose :attr:`~UnsafeFileError.reason` lets a loader that skips files (the index, a data folder)
report why. Nothing here knows a team exists.
"""

from __future__ import annotations

import errno
import io
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Literal

from moot.errors import MootError

Reason = Literal["missing", "outside", "symlink", "folder", "special", "too-large", "credentials", "unreadable"]

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC

# --------------------------------------------------------------------------- credentials

SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".docker", ".kube", ".password-store", ".terraform.d"})
"""Folders that hold credentials: never walked into, whatever they contain."""

SECRET_DIR_PATHS = (".config/gh", ".config/gcloud", ".config/hub", ".config/op", ".config/git")
"""The same for folders known by their path (``.config`` itself also holds harmless settings)."""

SECRET_NAMES = frozenset(
    {
        ".env", ".envrc", ".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass", ".htpasswd",
        "credentials", "credentials.json", "credentials.yml", "credentials.yaml", "secrets.json", "secrets.yml",
        "secrets.yaml", "secrets.toml", "hosts.yml", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519",
        "service-account.json", "token.json", "auth.json", ".dockercfg", "kubeconfig",
    }
)
"""File names that hold credentials."""

SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".asc", ".gpg", ".ovpn")


def looks_like_credentials(rel: str) -> bool:
    """Whether a path (relative to the root, forward slashes) names a file that holds secrets.

    Such files are never read for a model: ``.env`` and ``.env.local``, SSH and cloud keys,
    token files, package-registry logins.
    """
    parts = rel.lower().split("/")
    name = parts[-1]
    if any(part in SECRET_DIRS for part in parts[:-1]):
        return True
    if any(f"/{d}/" in f"/{rel.lower()}" for d in SECRET_DIR_PATHS):
        return True
    if name in SECRET_NAMES or name.startswith((".env.", "id_rsa", "id_ed25519", "id_ecdsa", "service-account")):
        return not name.endswith((".example", ".sample", ".template", ".dist"))
    return name.endswith(SECRET_SUFFIXES)


_SECRET_CONTENT = re.compile(
    rb"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----"
    rb"|\baws_secret_access_key\s*[=:]"
    rb"|\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"
    rb"|\bxox[abpr]-[A-Za-z0-9-]{10,}"
    rb"|\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}"
    rb"|\bAKIA[0-9A-Z]{16}\b"
    rb"|\"auths\"\s*:\s*\{\s*\"[^\"]+\"\s*:\s*\{\s*\"auth\""
    rb"|\boauth_token\s*:"
)
_SECRET_SPAN = 4096
"""Longer than any match of the pattern above: the overlap between chunks of a streamed scan."""


def contains_credentials(data: bytes) -> bool:
    """Whether file content holds a private key, a cloud or API token, or a registry login."""
    return _SECRET_CONTENT.search(data) is not None


def stream_contains_credentials(handle: BinaryIO, *, chunk: int = 1 << 20) -> bool:
    """:func:`contains_credentials` over a whole file read in chunks (overlapping, so a token
    across a chunk boundary is found); the position is put back to the start afterwards."""
    handle.seek(0)
    tail = b""
    try:
        while block := handle.read(chunk):
            if contains_credentials(tail + block):
                return True
            tail = block[-_SECRET_SPAN:]
        return False
    finally:
        handle.seek(0)


# --------------------------------------------------------------------------- errors


class UnsafeFileError(MootError):
    """A file a loader refused to read: outside the allowed root, a link, not a regular file,
    over the byte cap, or holding credentials. :attr:`reason` says which."""

    def __init__(self, message: str, *, reason: Reason, fix: str | None = None, detail: str = "") -> None:
        super().__init__(message, fix=fix)
        self.reason: Reason = reason
        self.detail = detail or message
        """What is wrong without the file's name (``is a FIFO, not a regular file``), for lists of skipped files."""


_FIXES: dict[str, str] = {
    "missing": "check the path",
    "outside": "keep the files inside the folder you named (a link that leads out of it is not followed)",
    "symlink": "replace the link with the file itself",
    "folder": "name the files inside it",
    "special": "pass a regular file (not a device, FIFO, socket or folder)",
    "unreadable": "check the file's permissions",
    "credentials": "remove the key or token from it, or leave the file out: moot never sends credentials to a model",
}


def _refuse(reason: Reason, shown: str, detail: str, fix: str | None = None) -> UnsafeFileError:
    """The error for ``shown`` (the file as the user named it) and what is wrong with it."""
    sep = "" if detail.startswith((":", ",")) else " "
    return UnsafeFileError(f"{shown}{sep}{detail}", reason=reason, detail=detail.lstrip(":, "),
                           fix=fix if fix is not None else _FIXES.get(reason, ""))


def _size_text(n: int) -> str:
    """A size in the units people write (``5 MB`` is 5 × 1024 × 1024 bytes here, as in ``ls -h``)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{round(n / scale, 1):g} {unit}"
    return f"{n} bytes"


def credentials_error(shown: str) -> UnsafeFileError:
    """The error for content that holds a private key or an access token."""
    return _refuse("credentials", shown, "holds a private key or an access token")


def too_large(shown: str, limit: int, size: int | None = None) -> UnsafeFileError:
    """The error for a file over its byte cap; it names the limit (and the size when known)."""
    got = f"is {_size_text(size)}, " if size is not None else ""
    return _refuse("too-large", shown, f"{got}over the {_size_text(limit)} limit for one file",
                   fix="split it into smaller files and pass those")


# --------------------------------------------------------------------------- resolving and opening


def within(root: str | os.PathLike[str], path: str | os.PathLike[str], *, shown: str = "") -> Path:
    """``path`` (relative to ``root`` or absolute) resolved, refused when it leads outside ``root``."""
    base = Path(root).resolve()
    target = Path(path)
    resolved = (target if target.is_absolute() else base / target).resolve()
    if resolved != base and not resolved.is_relative_to(base):
        raise _refuse("outside", shown or str(path), f"leads outside {base}")
    return resolved


def _open_beneath(base: Path, rel: tuple[str, ...], shown: str) -> int:
    """Open ``base/rel…`` one component at a time, never through a link (a race that swaps a
    folder for a link after :func:`within` checked it is refused, not followed)."""
    fd = os.open(base, _DIR_FLAGS)
    try:
        for part in rel[:-1]:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refuse("symlink", shown, ": a folder on its path changed into a link while it was read") from None
                raise
            os.close(fd)
            fd = nxt
        return os.open(rel[-1], _READ_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def open_regular(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int | None,
    what: str = "",
    credentials: bool = True,
    follow: bool = True,
) -> BinaryIO:
    """Open a regular file for reading, the safe way (see the module docstring).

    ``root``: the folder the file must stay in (``path`` may be relative to it); without one
    the path is resolved and its final component opened with ``O_NOFOLLOW``. ``what`` names
    the file in messages (``"source"``, ``"data file"``). ``credentials``: refuse a path that
    names a credentials file (the content check is the caller's, or :func:`read_bytes`'s).
    ``follow=False`` (without a root): a link is refused even when the user named it (files in
    folders that others write to, like a task board's).
    The returned file is positioned at the start; its size was at most ``max_bytes`` when opened
    (``None``: any size, for a caller that reads only a bounded prefix).
    """
    given = Path(path).expanduser()
    shown = f"{what} {given}".strip()
    if root is not None:
        base = Path(root).expanduser().resolve()
        resolved = within(base, given, shown=shown)
        rel_parts = resolved.relative_to(base).parts
        if not rel_parts:
            raise _refuse("folder", shown, "is a folder")
        rel = "/".join(rel_parts)
    else:
        resolved = given.resolve() if follow else given
        rel_parts = ()
        rel = resolved.name
    if credentials and (looks_like_credentials(rel) or looks_like_credentials(given.name)):
        raise _refuse("credentials", shown, "looks like a credentials file")
    try:
        fd = _open_beneath(base, rel_parts, shown) if rel_parts else os.open(resolved, _READ_FLAGS)
    except UnsafeFileError:
        raise
    except OSError as exc:
        raise _open_error(exc, shown) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise _refuse("folder", shown, "is a folder")
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(
                st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
            raise _refuse("special", shown, f"is {kind}, not a regular file")
        if max_bytes is not None and st.st_size > max_bytes:
            raise too_large(shown, max_bytes, st.st_size)
        # A regular file never blocks; clearing O_NONBLOCK keeps reads ordinary on every filesystem.
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _open_error(exc: OSError, shown: str) -> UnsafeFileError:
    if exc.errno == errno.ENOENT:
        return _refuse("missing", shown, ": no such file")
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return _refuse("symlink", shown, "is a symbolic link")
    if exc.errno == errno.EISDIR:
        return _refuse("folder", shown, "is a folder")
    if exc.errno == errno.ENXIO:  # a socket, or a FIFO opened for writing with no reader
        return _refuse("special", shown, "is not a regular file")
    return _refuse("unreadable", shown, f": cannot be read ({exc.strerror or exc})")


def read_capped(handle: BinaryIO, max_bytes: int, shown: str) -> bytes:
    """At most ``max_bytes`` from ``handle``; a file that grew past the cap is refused."""
    data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise too_large(shown, max_bytes)
    return data


def read_bytes(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int,
    what: str = "",
    credentials: bool = True,
    follow: bool = True,
) -> bytes:
    """The bytes of a regular file (see :func:`open_regular`), refused when they hold credentials."""
    shown = f"{what} {Path(path).expanduser()}".strip()
    with open_regular(path, root=root, max_bytes=max_bytes, what=what, credentials=credentials, follow=follow) as handle:
        data = read_capped(handle, max_bytes, shown)
    if credentials and contains_credentials(data):
        raise credentials_error(shown)
    return data


def read_text(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int,
    what: str = "",
    credentials: bool = True,
    errors: str = "replace",
) -> str:
    """:func:`read_bytes` decoded as UTF-8 (a BOM dropped; ``errors`` as for ``bytes.decode``)."""
    data = read_bytes(path, root=root, max_bytes=max_bytes, what=what, credentials=credentials)
    return data.decode("utf-8-sig", errors=errors)


_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
"""Byte-order marks of the UTF-16 and UTF-32 encodings (UTF-32 first: its mark begins with UTF-16's)."""


def wide_unicode(head: bytes) -> str | None:
    """``"utf-16"`` or ``"utf-32"`` when a file's first bytes are that encoding's byte-order mark
    (Windows editors and Excel save "Unicode" text so), else None. Such text is full of NUL bytes
    without being binary, and a byte-level credential scan cannot see into it: loaders refuse it
    with the conversion as the fix rather than calling it binary or reading it unscanned."""
    return next((name for bom, name in _WIDE_BOMS if head.startswith(bom)), None)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file beside it and a rename, so a
    write that fails half-way (a full disk, a crash) leaves the file that was there whole; the
    folder is made when missing. New files are private (mode 0600, as ``mkstemp`` makes them)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def text_lines(handle: BinaryIO) -> Iterator[str]:
    """The lines of a file opened by :func:`open_regular`, decoded as strict UTF-8 (a
    ``UnicodeDecodeError`` names a file that is not text)."""
    yield from io.TextIOWrapper(handle, encoding="utf-8-sig", errors="strict", newline=None)


def regular_files(folder: str | os.PathLike[str]) -> Iterator[tuple[str, Reason | None]]:
    """The visible entries of one folder (not recursive, sorted by name), each with ``None``
    when it is a regular file or a link, else why it can never be read (``folder``, ``special``).

    Links are listed: whether one may be read depends on where it leads, which
    :func:`open_regular` decides with the root. Nothing is opened here, so a FIFO costs nothing.
    """
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                yield entry.name, None
            elif entry.is_dir(follow_symlinks=False):
                yield entry.name, "folder"
            else:
                yield entry.name, "special"
        except OSError:
            yield entry.name, "unreadable"


__all__ = [
    "SECRET_DIRS",
    "SECRET_DIR_PATHS",
    "SECRET_NAMES",
    "SECRET_SUFFIXES",
    "UnsafeFileError",
    "contains_credentials",
    "credentials_error",
    "looks_like_credentials",
    "open_regular",
    "read_bytes",
    "read_capped",
    "read_text",
    "regular_files",
    "stream_contains_credentials",
    "text_lines",
    "too_large",
    "wide_unicode",
    "within",
    "write_text_atomic",
]
