"""The rewriting extractor (before extraction by selection): the model writes each fact as JSON.

The schema is the model's output type (kept small for the 0.5B model); :func:`clean_facts`
turns its answer into :class:`~moot.memory.Fact` objects: statements without content dropped,
repeats removed, and an event date kept only when it is believable.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from typing import Any

from pydantic import BaseModel, Field

from moot.memory import Fact
from moot.memory.facts import normalise_key
from moot.teams.learning.ingest.chunking import Chunk

MAX_FACTS_PER_CHUNK = 16
SUMMARY_CHARS = 300


class ExtractedFact(BaseModel):
    """One fact as the extraction model writes it (the output schema, so keep it small)."""

    content: str = Field(description="One short sentence that makes sense on its own.")
    entity: str = Field(description="What the fact is about.")
    attribute: str = Field(description="Which property of the entity.")
    value: str = Field(description="The value, with its unit.")
    concept: str = Field(default="", description="The topic in one or two words.")
    date: str = Field(default="", description="YYYY-MM-DD when the text says when it happened, else empty.")
    confidence: float | None = Field(default=None, ge=0, le=1)
    tags: list[str] = Field(default_factory=list, max_length=5)


class ExtractedFacts(BaseModel):
    """The extraction model's whole answer for one chunk."""

    facts: list[ExtractedFact] = Field(max_length=MAX_FACTS_PER_CHUNK)


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _epoch_us(day: date) -> int:
    moment = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    return int(moment.timestamp()) * 1_000_000


def _event_date(raw: str, chunk_text: str, published: date | datetime | None) -> date | None:
    """An event date the model gave, if believable.

    A small model fills date fields eagerly, so a date counts only when it is a real ISO date,
    its year appears in the chunk, and it is not after the publication date (a future date is
    a plan, and ordering a plan after later reports would make it wrongly "newest").
    """
    raw = raw.strip()
    if not _ISO_DATE.match(raw):
        return None
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        return None
    if str(day.year) not in chunk_text:
        return None
    limit = published.date() if isinstance(published, datetime) else published
    if limit is not None and day > limit:
        return None
    return day


def clean_facts(
    extracted: ExtractedFacts | dict[str, Any] | None,
    chunk: Chunk,
    *,
    source: str,
    published: date | datetime | None,
    episode_id: int | None = None,
) -> tuple[list[Fact], int]:
    """Turn the model's answer for one chunk into :class:`Fact` objects; returns (facts, dropped).

    Drops items without a statement, collapses whitespace, falls back to the content as the
    value, fills a missing concept with the entity, and removes repeats within the chunk.
    """
    if extracted is None:
        return [], 0
    if isinstance(extracted, dict):
        extracted = ExtractedFacts.model_validate(extracted)
    facts: list[Fact] = []
    seen: set[tuple[str, str, str, str]] = set()
    dropped = 0
    for item in extracted.facts:
        content = " ".join(item.content.split())
        entity = " ".join(item.entity.split()).strip(" .,:;")
        attribute = " ".join(item.attribute.split()).strip(" .,:;")
        value = " ".join(item.value.split()).strip(" ,;")
        if len(content) < 3 or not re.search(r"[A-Za-z0-9]", content):
            dropped += 1
            continue
        if content[-1] not in ".!?":
            content += "."
        key = (content.lower(), normalise_key(entity), normalise_key(attribute), normalise_key(value))
        if key in seen:
            dropped += 1
            continue
        seen.add(key)
        event = _event_date(item.date, chunk.text, published)
        confidence = item.confidence if item.confidence is not None else 0.8
        facts.append(
            Fact(
                content,
                concept=" ".join(item.concept.split()) or entity,
                entity=entity,
                attribute=attribute,
                value=value,
                confidence=min(1.0, max(0.0, confidence)),
                tags=tuple(t for t in item.tags if t.strip()),
                source=source,
                source_date=published,
                temporal_index=_epoch_us(event) if event else None,
                episode_id=episode_id,
            )
        )
    return facts, dropped


def first_sentences(text: str, limit: int = SUMMARY_CHARS) -> str:
    """A summary without a model: the first sentences (headings and front matter skipped)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    flat = " ".join(" ".join(lines).split())
    sentences = re.split(r"(?<=[.!?])\s+", flat)
    out = ""
    for sentence in sentences:
        if out and len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    return out[:limit]


__all__ = ["MAX_FACTS_PER_CHUNK", "SUMMARY_CHARS", "ExtractedFact", "ExtractedFacts", "clean_facts", "first_sentences"]
