"""Text files read for learning: the body, and the source and date the file declares.

Front matter is read by :mod:`moot.text.frontmatter` (YAML between ``---`` lines, TOML between
``+++`` lines, or a first line ``Date: …``), so a file's title, publisher and date become its
metadata and never part of what is learned. A folder is collected recursively, with include and
exclude globs; every file is checked before any model work.
"""

from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from moot.errors import MootError
from moot.files import read_bytes, wide_unicode
from moot.text.frontmatter import FrontMatterError, read_front_matter
from moot.text.sentences import split_units

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Files above this are refused: at ~30 tokens/s a 5 MB file would take days on the embedded model."""

DEFAULT_INCLUDE = ("*.md", "*.markdown", "*.txt", "*.rst")
"""What ``moot learn FOLDER`` takes when no ``--include`` is given: text and Markdown files."""


@dataclass(frozen=True)
class Document:
    """A text file read for learning: its body, and the source and date it declares."""

    path: Path
    text: str
    """The body, without front matter."""
    source: str
    published: date | datetime | None
    title: str = ""
    provenance: tuple[str, ...] = ()
    """Who published or wrote it, as the front matter names them: provenance, not entities."""
    sha256: str = ""
    """The hash of the bytes this text was read from (not of the file now: it may have been saved since)."""
    given: str = ""
    """The file's text as read, front matter and all (what the plain draft reads when it is small)."""


def read_document(path: str | Path) -> Document:
    """Read a UTF-8 text file and its metadata, refusing what cannot be learned.

    The source is ``source: title`` when the front matter gives both, else whichever is given
    (``source``, ``publisher`` …, or ``title``), else the first heading, else the file name.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise MootError(f"{path}: no such file", fix="check the path (learn takes text or Markdown files, or a folder)")
    if path.is_dir():
        raise MootError(f"{path} is a directory", fix="learn the folder with `moot learn FOLDER` or pass the files inside it")
    # The one safe reader: a regular file only (never a FIFO or /dev/zero), capped, no credentials.
    raw = read_bytes(path, max_bytes=MAX_FILE_BYTES)
    wide = wide_unicode(raw)
    if wide is not None and _decodes(raw, wide):  # Windows editors save "Unicode" text so: its NULs are not binary
        raise MootError(
            f"{path} is {wide.upper()} text, not UTF-8",
            fix=f"convert it to UTF-8, e.g. iconv -f {wide} -t utf-8 {path.name} > {path.stem}.utf8{path.suffix}",
        )
    if b"\x00" in raw[:8192]:
        raise MootError(f"{path} is a binary file, not text", fix="convert it to UTF-8 text (e.g. Markdown or .txt) first")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MootError(
            f"{path} is not UTF-8 text (invalid byte at position {exc.start})",
            fix=f"convert it to UTF-8, e.g. iconv -f latin1 -t utf-8 {path.name} > {path.stem}.utf8{path.suffix}",
        ) from None
    front = read_front_matter(text)
    body = front.body
    if not body.strip():
        raise MootError(f"{path} is empty: there is nothing to learn", fix="pass a file with some text in it")
    try:
        published = front.published
    except FrontMatterError as exc:
        raise MootError(f"{path}: published date {exc}", fix="write the date as published: YYYY-MM-DD") from None
    heading = next((u.text for u in split_units(body) if u.kind == "heading"), "")
    title = front.title or heading
    source = front.source or title or path.name
    if front.source and front.title:
        source = f"{front.source}: {front.title}"
    return Document(path=path, text=body, source=source, published=published, title=title,
                    provenance=tuple(front.provenance_names()), sha256=hashlib.sha256(raw).hexdigest(), given=text)


def _decodes(raw: bytes, encoding: str) -> bool:
    try:
        raw.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def collect_files(
    paths: list[str | Path], *, include: list[str] | None = None, exclude: list[str] | None = None
) -> list[Path]:
    """The files to learn: files as given, folders searched recursively, in a stable order.

    A folder takes the files whose name matches an ``include`` glob (default: text and Markdown)
    and skips those whose path relative to the folder matches an ``exclude`` glob; hidden files
    and folders (``.git``) are skipped, and so is a link that leads out of the folder
    (``notes/x.md -> ~/private.md``): learning a folder sends only that folder's text to the model.
    A path given twice is learned once.
    """
    include = list(include or DEFAULT_INCLUDE)
    exclude = list(exclude or [])
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.is_dir():
            found.setdefault(path, None)
            continue
        matched = 0
        root = path.resolve()
        for candidate in sorted(path.rglob("*")):
            relative = candidate.relative_to(path)
            if any(part.startswith(".") for part in relative.parts) or not candidate.is_file():
                continue
            if not candidate.resolve().is_relative_to(root):
                continue
            if not any(fnmatch.fnmatch(candidate.name, glob) for glob in include):
                continue
            if any(_excluded(relative, glob) for glob in exclude):
                continue
            found.setdefault(candidate, None)
            matched += 1
        if not matched:
            raise MootError(f"{path}: no files to learn in this folder (looked for {', '.join(include)})",
                            fix="pass --include 'GLOB' for other file names, or check --exclude")
    return list(found)


def _excluded(relative: Path, glob: str) -> bool:
    """Whether an ``--exclude`` glob covers a file (its path relative to the folder): a glob
    matches the path or a folder above it (``drafts/*``, ``drafts``, ``drafts/``, ``./drafts``),
    and a glob without a slash also matches a file or folder name at any depth (``*.bak``)."""
    glob = glob.strip().removeprefix("./").rstrip("/")
    if not glob:
        return False
    parts = relative.parts
    paths = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    if any(fnmatch.fnmatch(path, glob) for path in paths):
        return True
    return "/" not in glob and any(fnmatch.fnmatch(part, glob) for part in parts)


__all__ = ["DEFAULT_INCLUDE", "MAX_FILE_BYTES", "Document", "collect_files", "read_document"]
