"""Split a document into chunks a small model can read whole.

Two forms: :func:`chunk_units` groups a document's text units (sentences, list items, table
rows) for extraction by selection, keeping a paragraph, list or table together where it fits;
:func:`split_into_chunks` cuts raw text at blank lines, for the rewriting extractor kept as a
comparison (``extraction="rewrite"``).

The embedded 0.5B model extracts facts well from a few short paragraphs and badly from a long
page: it loses track, repeats itself and runs out of output tokens. So a document is cut at
paragraph boundaries (blank lines) into chunks of at most ``max_tokens`` estimated tokens; a
paragraph that is too long on its own is cut at sentence ends, and a sentence that is still
too long at word boundaries. A Markdown heading stays with the paragraph after it, because a
heading alone carries no fact and gives the next paragraph its context.

Token counts are estimated (about four characters a token for English prose) so chunking
needs no tokenizer and gives the same chunks for every model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from moot.text.sentences import TextUnit, split_sentences

DEFAULT_CHUNK_TOKENS = 320
"""Suits the 0.5B model: ~1,300 characters in, leaving room in its context for a long answer."""

_CHARS_PER_TOKEN = 4.0
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a document, sent to the model on its own."""

    index: int
    """Position in the document, from 0."""
    text: str
    """The chunk's text (paragraphs joined by blank lines)."""

    @property
    def tokens(self) -> int:
        """The estimated number of tokens."""
        return estimate_tokens(self.text)


def estimate_tokens(text: str) -> int:
    """A model-independent token estimate (about 4 characters a token)."""
    return int(len(text) / _CHARS_PER_TOKEN) + 1 if text else 0


def _pack(pieces: list[str], separator: str, max_tokens: int) -> list[str]:
    """Join consecutive pieces greedily while the estimate stays within ``max_tokens``."""
    packed: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current}{separator}{piece}" if current else piece
        if current and estimate_tokens(candidate) > max_tokens:
            packed.append(current)
            current = piece
        else:
            current = candidate
    if current:
        packed.append(current)
    return packed


def _split_long(text: str, max_tokens: int) -> list[str]:
    """Cut a paragraph that exceeds the budget at sentence ends, then at words."""
    sentences: list[str] = []
    for sentence in split_sentences(text):
        if estimate_tokens(sentence) <= max_tokens:
            sentences.append(sentence)
        else:
            sentences.extend(_pack(sentence.split(), " ", max_tokens))
    return _pack(sentences, " ", max_tokens)


def split_into_chunks(text: str, *, max_tokens: int = DEFAULT_CHUNK_TOKENS) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``max_tokens`` estimated tokens, in order.

    Paragraphs are packed greedily; nothing is dropped except surrounding whitespace.
    """
    if max_tokens < 16:
        raise ValueError("max_tokens must be at least 16")
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text.replace("\r\n", "\n")) if p.strip()]
    # Keep a heading with the paragraph that follows it.
    merged: list[str] = []
    pending_heading = ""
    for paragraph in paragraphs:
        if paragraph.startswith("#") and "\n" not in paragraph:
            pending_heading = f"{pending_heading}\n{paragraph}".strip()
            continue
        merged.append(f"{pending_heading}\n{paragraph}" if pending_heading else paragraph)
        pending_heading = ""
    if pending_heading:
        merged.append(pending_heading)

    pieces: list[str] = []
    for paragraph in merged:
        if estimate_tokens(paragraph) > max_tokens:
            pieces.extend(_split_long(" ".join(paragraph.split()), max_tokens))
        else:
            pieces.append(paragraph)

    chunks = _pack(pieces, "\n\n", max_tokens)
    return [Chunk(i, c) for i, c in enumerate(chunks)]


DEFAULT_CHUNK_UNITS = 14
"""Units labelled in one request: a small model's choices drift over a long list."""


@dataclass(frozen=True, slots=True)
class UnitChunk:
    """Consecutive text units of a document, labelled in one request and stored as one episode."""

    index: int
    units: tuple[TextUnit, ...]

    @property
    def text(self) -> str:
        """The units as Markdown again: a block's sentences on one line, blocks apart, list items as
        ``- `` items, a table under its header (so reading the episode back gives the same units)."""
        blocks: list[str] = []
        last_block: int | None = None
        last_header = ""
        for unit in self.units:
            piece = f"# {unit.text}" if unit.kind == "heading" else f"- {unit.text}" if unit.kind == "item" else unit.text
            if unit.kind == "row" and unit.header and (unit.block != last_block or unit.header != last_header):
                rule = "|" + "---|" * max(1, unit.header.strip().strip("|").count("|") + 1)
                piece = f"{unit.header}\n{rule}\n{unit.text}"
            if unit.block == last_block and blocks:
                sep = "\n" if unit.kind in ("row", "item") else " "
                blocks[-1] = f"{blocks[-1]}{sep}{piece}"
            else:
                blocks.append(piece)
            last_block, last_header = unit.block, unit.header
        return "\n\n".join(blocks)


def chunk_units(
    units: Sequence[TextUnit], *, max_units: int = DEFAULT_CHUNK_UNITS, max_tokens: int = DEFAULT_CHUNK_TOKENS
) -> list[UnitChunk]:
    """Group units into chunks of at most ``max_units`` labelled units and ``max_tokens`` estimated tokens.

    Whole blocks are kept together when they fit; a block that does not fit starts a new chunk,
    and one that is too big alone is cut between units. A heading goes with what follows it.
    """
    if max_units < 1 or max_tokens < 16:
        raise ValueError("a chunk needs max_units >= 1 and max_tokens >= 16")
    blocks: list[list[TextUnit]] = []
    for unit in units:
        if blocks and blocks[-1][-1].block == unit.block and blocks[-1][-1].kind != "heading":
            blocks[-1].append(unit)
        elif blocks and blocks[-1][-1].kind == "heading":
            blocks[-1].append(unit)
        else:
            blocks.append([unit])

    def counted(group: Sequence[TextUnit]) -> tuple[int, int]:
        labelled = sum(1 for u in group if u.kind != "heading")
        return labelled, estimate_tokens(" ".join(u.render() for u in group))

    chunks: list[list[TextUnit]] = []
    current: list[TextUnit] = []
    for block in blocks:
        labelled, tokens = counted([*current, *block])
        if current and (labelled > max_units or tokens > max_tokens):
            chunks.append(current)
            current = []
        for unit in block:
            labelled, tokens = counted([*current, unit])
            if current and unit.kind != "heading" and (labelled > max_units or tokens > max_tokens):
                chunks.append(current)
                current = []
            current.append(unit)
    if current:
        chunks.append(current)
    return [UnitChunk(i, tuple(group)) for i, group in enumerate(chunks)]
