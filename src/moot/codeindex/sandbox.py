"""Keeping file access inside the indexed root: no ``..``, no absolute path, no symlink escape.

The tools hand paths chosen by a model to the file system, so every path is checked twice:
lexically (it must be relative and must not climb with ``..``) and after resolution (the real
path, with every symlink followed, must still be under the root). The second check is the one
that matters; the first gives a clearer message for the common mistakes.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from moot.errors import MootError


class PathEscapeError(MootError, ValueError):
    """A path that would leave the indexed root (also a ``ValueError``, for callers that expect one)."""

    fix = "use a path relative to the repository root, as shown by search_code or read_map"


def confine(root: Path, path: str) -> Path:
    """The real file or directory for ``path`` (relative to ``root``), or :class:`PathEscapeError`."""
    text = (path or ".").strip().replace("\\", "/")
    pure = PurePosixPath(text)
    if pure.is_absolute() or (len(text) > 1 and text[1] == ":"):
        raise PathEscapeError(f"{path!r} is an absolute path; only paths inside the indexed root can be read")
    if ".." in pure.parts:
        raise PathEscapeError(f"{path!r} climbs out with '..'; only paths inside the indexed root can be read")
    candidate = root.joinpath(*[p for p in pure.parts if p not in ("", ".")])
    try:
        real = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise PathEscapeError(f"{path!r} cannot be resolved ({exc})") from None
    if real != root and root not in real.parents:
        raise PathEscapeError(f"{path!r} is a link that leads outside the indexed root")
    return real


def relative(root: Path, real: Path) -> str:
    """``real`` as a forward-slash path relative to ``root`` (``.`` for the root itself)."""
    rel = real.relative_to(root).as_posix()
    return rel or "."
