"""Front matter: the metadata block at the top of a Markdown document, read as metadata.

YAML between ``---`` lines (read by PyYAML's safe loader), TOML between ``+++`` lines (read by
the standard library's tomllib), or a first line ``Date: 2026-05-18``. The title, the
publisher or source, the author and the publication date are provenance: who wrote the
document and when. None of it is content: the body is what follows the block.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

import yaml

from moot.text.dates import publication_date

_YAML = re.compile(r"\A\ufeff?---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_TOML = re.compile(r"\A\ufeff?\+\+\+[ \t]*\n(.*?)\n\+\+\+[ \t]*(?:\n|\Z)", re.S)
_DATE_LINE = re.compile(r"\A\ufeff?\s*(?:date|published)\s*:\s*(.+?)\s*(?:\n|\Z)", re.I)

_DATE_KEYS = ("published", "date", "pubdate", "publish_date", "published_at", "publication_date", "created")
_SOURCE_KEYS = ("source", "publisher", "publication", "site_name", "outlet", "newspaper")
_AUTHOR_KEYS = ("author", "authors", "by", "byline")


class FrontMatterError(ValueError):
    """A date in the front matter that is not a date (the message names the key and the value)."""


@dataclass(frozen=True)
class FrontMatter:
    """A document split into its metadata and its body."""

    body: str
    """The text after the metadata block (the whole text when there is none)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Every key of the block, lower-cased."""
    format: Literal["yaml", "toml", "date-line", "none"] = "none"
    raw: str = ""
    """The block as written, delimiters included."""

    @property
    def title(self) -> str:
        return _text(self.meta.get("title"))

    @property
    def source(self) -> str:
        """The publisher or source the block names (``source``, ``publisher``, …), else empty."""
        return next((_text(self.meta[k]) for k in _SOURCE_KEYS if _text(self.meta.get(k))), "")

    @property
    def author(self) -> str:
        return next((_text(self.meta[k]) for k in _AUTHOR_KEYS if _text(self.meta.get(k))), "")

    @property
    def published(self) -> date | datetime | None:
        """The publication date, or None; raises :class:`FrontMatterError` for a value that is no date."""
        for key in _DATE_KEYS:
            value = self.meta.get(key)
            if value is None or value == "":
                continue
            if isinstance(value, (date, datetime)):
                return value
            text = _text(value)
            parsed = publication_date(text)
            if parsed is None:
                raise FrontMatterError(f"{key}: {text!r} is not a date")
            return parsed
        return None

    def provenance_names(self) -> list[str]:
        """The names the block gives for who published or wrote the document (not entities of its world)."""
        names = [self.source, self.author]
        return [n for n in dict.fromkeys(names) if n]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value if _text(v))
    return " ".join(str(value).split()).strip("\"'")


def _lines_as_meta(block: str) -> dict[str, Any]:
    """``key: value`` lines, for a block that is not valid YAML (a colon in an unquoted title)."""
    meta: dict[str, Any] = {}
    for line in block.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "-")):
            meta[key.strip().lower()] = value.strip().strip("\"'")
    return meta


def read_front_matter(text: str) -> FrontMatter:
    """Split ``text`` into front matter and body; text without a block comes back whole as the body."""
    text = text.replace("\r\n", "\n")
    match = _YAML.match(text)
    if match:
        try:
            loaded = yaml.safe_load(match.group(1))
        except (yaml.YAMLError, ValueError, RecursionError):
            # ValueError: a timestamp that is no date (``published: 2026-13-45``); RecursionError:
            # nesting deeper than the parser's stack. Both are read as lines, like a YAML error.
            loaded = None
        meta = loaded if isinstance(loaded, dict) else _lines_as_meta(match.group(1))
        return FrontMatter(text[match.end():], {str(k).lower(): v for k, v in meta.items()}, "yaml", match.group(0))
    match = _TOML.match(text)
    if match:
        try:
            meta = tomllib.loads(match.group(1))
        except tomllib.TOMLDecodeError:
            meta = _lines_as_meta(match.group(1).replace(" = ", ": "))
        return FrontMatter(text[match.end():], {str(k).lower(): v for k, v in meta.items()}, "toml", match.group(0))
    match = _DATE_LINE.match(text)
    if match:
        return FrontMatter(text[match.end():], {"published": match.group(1)}, "date-line", match.group(0))
    return FrontMatter(text.lstrip("\ufeff"))


__all__ = ["FrontMatter", "FrontMatterError", "read_front_matter"]
