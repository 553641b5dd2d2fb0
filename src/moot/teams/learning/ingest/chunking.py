"""Split a document into chunks a small model can read whole.

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
from dataclasses import dataclass

DEFAULT_CHUNK_TOKENS = 320
"""Suits the 0.5B model: ~1,300 characters in, leaving room in its context for a long answer."""

_CHARS_PER_TOKEN = 4.0
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


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


def _split_long(text: str, max_tokens: int) -> list[str]:
    """Cut a paragraph that exceeds the budget at sentence ends, then at words."""
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        if estimate_tokens(sentence) > max_tokens:
            words = sentence.split()
            part: list[str] = []
            for word in words:
                if part and estimate_tokens(" ".join([*part, word])) > max_tokens:
                    pieces.append(" ".join(part))
                    part = []
                part.append(word)
            sentence = " ".join(part)
            if current:
                pieces.append(current)
                current = ""
        candidate = f"{current} {sentence}".strip()
        if current and estimate_tokens(candidate) > max_tokens:
            pieces.append(current)
            current = sentence
        else:
            current = candidate
    if current:
        pieces.append(current)
    return pieces


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

    chunks: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current}\n\n{piece}" if current else piece
        if current and estimate_tokens(candidate) > max_tokens:
            chunks.append(current)
            current = piece
        else:
            current = candidate
    if current:
        chunks.append(current)
    return [Chunk(i, c) for i, c in enumerate(chunks)]
