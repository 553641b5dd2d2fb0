"""A document as a list of text units: its sentences, headings, list items and table rows.

Prose is cut into sentences by pysbd (rule-based sentence boundary detection that knows
abbreviations such as "Dr." and decimals such as "3.1"); the Markdown structure decides the
rest: a heading, a list item (all its sentences: a step is one unit) and a table row are units
of their own, a table row keeps its table's header row beside it (a row alone — ``| Tue | 61 |``
— means nothing), and a fenced code block is one unit. Every unit's text is the document's own
text, whitespace collapsed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

import pysbd

UnitKind = Literal["sentence", "heading", "item", "row", "code"]

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_ROW = re.compile(r"^\s*\|.*\|\s*$")
_ROW_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_QUOTE = re.compile(r"^\s{0,3}>\s?")


@dataclass(frozen=True, slots=True)
class TextUnit:
    """One sentence, heading, list item, table row or code block of a document."""

    index: int
    """Position in the document, from 0."""
    text: str
    """The document's own text, whitespace collapsed (a row: the row as written)."""
    kind: UnitKind
    block: int
    """The paragraph, list, table or code block it belongs to, from 0."""
    header: str = ""
    """For a table row: the table's header row."""

    def render(self) -> str:
        """The unit as a reader needs it: a table row under its header, anything else as it is."""
        return f"{self.header} {self.text}" if self.header else self.text


@functools.lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


_WINDOW = 2000
"""pysbd's time grows with the square of a paragraph's length (120,000 characters: 25 s; a text
export with no blank lines is one paragraph), so a longer paragraph is segmented a window at a
time: every sentence but the window's last is kept, and the next window starts where that last
one starts, so each boundary is still pysbd's own."""


def split_sentences(text: str) -> list[str]:
    """The sentences of one paragraph of prose, whitespace collapsed."""
    flat = " ".join(text.split())
    if not flat:
        return []
    sentences: list[str] = []
    start = 0
    while len(flat) - start > _WINDOW:
        window = flat[start:start + _WINDOW]
        pieces = [s for s in _segmenter().segment(window) if s.strip()]
        cut = window.rfind(pieces[-1].strip()) if len(pieces) > 1 else -1
        if cut <= 0:  # one "sentence" longer than the window: cut it at its last space
            cut = window.rfind(" ") + 1 or len(window)
            pieces = [window[:cut]]
        else:
            pieces = pieces[:-1]
        sentences.extend(pieces)
        start += cut
    sentences.extend(_segmenter().segment(flat[start:]))
    return [" ".join(s.split()) for s in sentences if s.strip()]


def _blocks(text: str) -> list[tuple[str, list[str]]]:
    """Group lines into blocks: ``("code", lines)``, ``("table", lines)`` or ``("text", lines)``."""
    blocks: list[tuple[str, list[str]]] = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    current: list[str] = []
    kind = "text"

    def close() -> None:
        nonlocal current, kind
        if any(line.strip() for line in current):
            blocks.append((kind, current))
        current, kind = [], "text"

    fence: str | None = None
    for line in lines:
        if fence is not None:
            if line.strip().startswith(fence):
                close()
                fence = None
            else:
                current.append(line)
            continue
        opening = _FENCE.match(line)
        if opening:
            close()
            fence, kind = opening.group(1), "code"
            continue
        is_row = bool(_ROW.match(line))
        if not line.strip():
            close()
        elif is_row != (kind == "table") and current:
            close()
            kind = "table" if is_row else "text"
            current.append(line)
        else:
            kind = "table" if is_row else kind
            current.append(line)
    close()
    return blocks


def split_units(text: str) -> list[TextUnit]:
    """Cut a (Markdown or plain) text into units, in document order; nothing but whitespace is lost.

    Front matter is not recognised here: read it off first with
    :func:`moot.text.read_front_matter`.
    """
    units: list[TextUnit] = []

    def add(body: str, kind: UnitKind, block: int, header: str = "") -> None:
        body = " ".join(body.split())
        if body:
            units.append(TextUnit(len(units), body, kind, block, header))

    for block_index, (kind, lines) in enumerate(_blocks(text)):
        if kind == "code":
            add("\n".join(lines), "code", block_index)
            continue
        if kind == "table":
            rows = [ln.strip() for ln in lines if not _ROW_RULE.match(ln)]
            has_rule = any(_ROW_RULE.match(ln) for ln in lines)
            header = rows[0] if has_rule and len(rows) > 1 else ""
            for row in rows[1:] if header else rows:
                add(row, "row", block_index, " ".join(header.split()))
            continue
        prose: list[str] = []

        def flush() -> None:
            for sentence in split_sentences(" ".join(prose)):
                add(sentence, "sentence", block_index)
            prose.clear()

        item: list[str] | None = None
        for raw in lines:
            line = _QUOTE.sub("", raw)
            heading = _HEADING.match(line)
            bullet = _ITEM.match(line)
            if heading or bullet:
                flush()
                if item is not None:
                    add(" ".join(item), "item", block_index)
                item = [bullet.group(1)] if bullet else None
                if heading:
                    add(heading.group(2), "heading", block_index)
            elif item is not None:
                item.append(line)  # a continuation line of the list item
            else:
                prose.append(line)
        flush()
        if item is not None:
            add(" ".join(item), "item", block_index)
    return units


__all__ = ["TextUnit", "UnitKind", "split_sentences", "split_units"]
