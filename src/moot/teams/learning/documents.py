"""Text files read for learning: the body, and the source and date a file declares."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from moot.errors import MootError
from moot.files import read_bytes
from moot.memory.facts import coerce_date

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Files above this are refused: at ~30 tokens/s a 5 MB file would take days on the embedded model."""


@dataclass(frozen=True)
class Document:
    """A text file read for learning: its body, and the source and date it declares."""

    path: Path
    text: str
    """The body, without front matter."""
    source: str
    published: date | datetime | None


_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)
_DATE_LINE = re.compile(r"\A\s*(?:date|published)\s*:\s*(\S+)\s*(?:\n|\Z)", re.I)
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)


def read_document(path: str | Path) -> Document:
    """Read a UTF-8 text file and its metadata, refusing what cannot be learned.

    The convention (used by ``examples/learning/articles``): optional front matter between
    ``---`` lines with ``published: YYYY-MM-DD`` (or ``date:``), ``source:`` and ``title:``;
    or, without front matter, a first line ``Date: YYYY-MM-DD``. The source is ``source``,
    else ``title``, else the first ``# heading``, else the file name.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise MootError(f"{path}: no such file", fix="check the path (learn takes text or Markdown files)")
    if path.is_dir():
        raise MootError(f"{path} is a directory", fix="pass the files inside it, e.g. " + str(path / "*.md"))
    # The one safe reader: a regular file only (never a FIFO or /dev/zero), capped, no credentials.
    raw = read_bytes(path, max_bytes=MAX_FILE_BYTES)
    if b"\x00" in raw[:8192]:
        raise MootError(f"{path} is a binary file, not text", fix="convert it to UTF-8 text (e.g. Markdown or .txt) first")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MootError(
            f"{path} is not UTF-8 text (invalid byte at position {exc.start})",
            fix=f"convert it to UTF-8, e.g. iconv -f latin1 -t utf-8 {path.name} > {path.stem}.utf8{path.suffix}",
        ) from None
    text = text.replace("\r\n", "\n")
    meta: dict[str, str] = {}
    match = _FRONT_MATTER.match(text)
    if match:
        for line in match.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep:
                meta[key.strip().lower()] = value.strip().strip("\"'")
        text = text[match.end():]
    else:
        line = _DATE_LINE.match(text)
        if line:
            meta["published"] = line.group(1)
            text = text[line.end():]
    if not text.strip():
        raise MootError(f"{path} is empty: there is nothing to learn", fix="pass a file with some text in it")
    heading = _HEADING.search(text)
    source = meta.get("source") or meta.get("title") or (heading.group(1) if heading else "") or path.name
    if meta.get("source") and meta.get("title"):
        source = f"{meta['source']}: {meta['title']}"
    raw_date = meta.get("published") or meta.get("date")
    try:
        published = coerce_date(raw_date, what="published date") if raw_date else None
    except MootError as exc:
        raise MootError(f"{path}: {exc.message}", fix="write the date as published: YYYY-MM-DD") from None
    return Document(path=path, text=text, source=source, published=published)


__all__ = ["MAX_FILE_BYTES", "Document", "read_document"]
