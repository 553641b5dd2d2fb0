"""What a knowledge base holds: facts, the episodes they came from, and SUPERSEDES links.

These are plain value objects. The store turns them into rows and back; nothing here touches
SQLite. Normalisation lives here too, because "are these the same entity / the same value /
the same statement?" is a property of the data, and the store, consolidation and retrieval
must all answer it the same way.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import KW_ONLY, dataclass, field
from datetime import date, datetime, timezone
from typing import Any

from moot.errors import MootError
from moot.text.dates import publication_date

SourceDate = date | datetime
"""A fact's or episode's date: a calendar day or an exact moment."""


@dataclass(frozen=True, slots=True)
class Fact:
    """One statement learned from content, as given to :meth:`KnowledgeBase.add_fact`."""

    content: str
    """The statement in plain words, e.g. ``"Norway has won 12 gold medals."``."""
    _: KW_ONLY
    concept: str = ""
    """The topic or context it belongs to, e.g. ``"medal standings"``."""
    entity: str = ""
    """What the statement is about, e.g. ``"Norway"``. Needed for supersession."""
    attribute: str = ""
    """Which property of the entity it states, e.g. ``"gold medals"``. Needed for supersession."""
    value: str = ""
    """The property's value, e.g. ``"12"``. When empty, the content stands for the value."""
    confidence: float = 0.8
    """How sure the learner is, from 0 to 1. Consolidation prunes low-confidence superseded facts."""
    tags: tuple[str, ...] = ()
    """Free labels, searchable like the content."""
    source: str = ""
    """Where it came from: an article title, a URL, ``"user"``."""
    source_date: SourceDate | None = None
    """When the source said it. Orders facts in time when no ``temporal_index`` is given."""
    temporal_index: int | None = None
    """An explicit order key (e.g. day 7 → 7). Larger is newer. Overrides ``source_date``."""
    episode_id: int | None = None
    """The episode (raw source text) this fact was extracted from, if stored."""
    created_at: datetime | None = None
    """When it was stored (set by the store)."""
    id: int | None = None
    """The row id (set by the store)."""

    def __post_init__(self) -> None:
        content = " ".join(str(self.content or "").split())
        if not content:
            raise MootError(
                "a fact's content is empty", fix="give the fact a statement in plain words"
            )
        object.__setattr__(self, "content", content)
        for name in ("concept", "entity", "attribute", "value", "source"):
            object.__setattr__(self, name, " ".join(str(getattr(self, name) or "").split()))
        if not 0.0 <= float(self.confidence) <= 1.0:
            raise MootError(
                f"a fact's confidence must be between 0 and 1, got {self.confidence}",
                fix="pass confidence=0.0…1.0",
            )
        object.__setattr__(self, "confidence", float(self.confidence))
        if isinstance(self.tags, str):
            raw_tags: list[str] = [self.tags]
        else:
            raw_tags = [str(t) for t in self.tags]
        object.__setattr__(self, "tags", normalise_tags(raw_tags))

    @property
    def supersedable(self) -> bool:
        """Whether supersession applies: only facts that name an entity and an attribute."""
        return bool(normalise_key(self.entity) and normalise_key(self.attribute))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (dates as ISO strings), for tool results and traces."""
        return {
            "id": self.id,
            "content": self.content,
            "concept": self.concept,
            "entity": self.entity,
            "attribute": self.attribute,
            "value": self.value,
            "confidence": round(self.confidence, 4),
            "tags": list(self.tags),
            "source": self.source,
            "source_date": self.source_date.isoformat() if self.source_date else None,
            "temporal_index": self.temporal_index,
            "episode_id": self.episode_id,
            "created_at": self.created_at.isoformat() if self.created_at else None,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredFact(Fact):
    """A fact as the knowledge base holds it: with its id and its place in history."""

    superseded_by: int | None = None
    """The id of the newer fact that replaced this one's value; ``None`` while it is current."""
    also_from: tuple[str, ...] = ()
    """Other sources that stated the same thing (kept when duplicates are merged)."""

    @property
    def is_current(self) -> bool:
        """True unless a newer fact about the same entity and attribute replaced it."""
        return self.superseded_by is None

    def to_dict(self) -> dict[str, Any]:
        data = Fact.to_dict(self)
        data["superseded_by"] = self.superseded_by
        data["is_current"] = self.is_current
        data["also_from"] = list(self.also_from)
        return data


@dataclass(frozen=True, slots=True)
class Episode:
    """The raw source text that facts derive from (an article, a message, a transcript)."""

    id: int
    """The row id."""
    source: str
    """Where the text came from (title, URL, ``"user"``)."""
    published: SourceDate | None
    """When the source was published; facts from it inherit this as their source date."""
    text: str
    """The text as given, unchanged."""
    summary: str = ""
    """A short summary, written by the learning step if it makes one."""
    created_at: datetime | None = None
    """When it was stored."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "published": self.published.isoformat() if self.published else None,
            "text": self.text,
            "summary": self.summary,
            "created_at": self.created_at.isoformat() if self.created_at else None,
        }


@dataclass(frozen=True, slots=True)
class SupersedesLink:
    """``newer`` SUPERSEDES ``older``: same entity and attribute, a different, later value."""

    newer_id: int
    """The fact that holds the newer value."""
    older_id: int
    """The fact it replaced; kept, so the history can be told."""
    entity: str
    """The entity both facts are about (as written on the newer fact)."""
    attribute: str
    """The attribute whose value changed."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A fact found by full-text search, with its BM25 relevance (higher is better)."""

    fact: StoredFact
    score: float


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """What the knowledge base knows about one source."""

    source: str
    facts: int
    """Facts from this source still in the knowledge base."""
    episodes: int
    first_date: SourceDate | None
    last_date: SourceDate | None
    summary: str = ""
    """The per-source summary set by :meth:`KnowledgeBase.set_source_summary`."""


@dataclass(frozen=True, slots=True)
class KnowledgeBaseSummary:
    """Counts and coverage, for ``get_memory_summary`` and for deciding how to retrieve."""

    path: str
    facts: int
    current_facts: int
    superseded_facts: int
    episodes: int
    supersedes_links: int
    entities: list[tuple[str, int]] = field(default_factory=list)
    """The most frequent entities with their current-fact counts, most first."""
    concepts: list[tuple[str, int]] = field(default_factory=list)
    """The most frequent concepts with their current-fact counts, most first."""
    sources: list[str] = field(default_factory=list)
    earliest: SourceDate | None = None
    latest: SourceDate | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "facts": self.facts,
            "current_facts": self.current_facts,
            "superseded_facts": self.superseded_facts,
            "episodes": self.episodes,
            "supersedes_links": self.supersedes_links,
            "entities": [list(e) for e in self.entities],
            "concepts": [list(c) for c in self.concepts],
            "sources": list(self.sources),
            "earliest": self.earliest.isoformat() if self.earliest else None,
            "latest": self.latest.isoformat() if self.latest else None,
        }


# ---------------------------------------------------------------------------- normalisation

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")
_WORD = re.compile(r"\w+", re.UNICODE)

STOPWORDS = frozenset(
    """a an and are as at be been being but by did do does for from had has have he her his i
    in is it its of on or our she that the their them then there these they this those to was
    were what which who whom whose will with would you your how when where why about into than
    also can could should may might must s""".split()
)
"""Words too common to say anything about a fact; dropped from searches and similarity."""


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def normalise_key(text: str) -> str:
    """Entity, attribute and value comparison key: case-folded, spaces collapsed, edge punctuation gone.

    ``"  Norway's "`` and ``"norway's"`` compare equal; ``"Norway"`` and ``"Norway's"`` do not
    (possessives are the extractor's job, and guessing here would merge distinct names).
    """
    return _EDGE_PUNCT.sub("", _SPACE.sub(" ", _fold(text)).strip())


def normalise_tags(tags: list[str]) -> tuple[str, ...]:
    """Tags lower-cased, trimmed, de-duplicated, in first-seen order."""
    seen: dict[str, None] = {}
    for tag in tags:
        key = _SPACE.sub(" ", _fold(tag)).strip()
        if key:
            seen.setdefault(key, None)
    return tuple(seen)


def words(text: str) -> list[str]:
    """The words of a text, case-folded, in order (punctuation and operators dropped)."""
    return _WORD.findall(_fold(text))


def _stem(word: str) -> str:
    # A light plural fold so "medals" and "medal" match in similarity; FTS uses Porter itself.
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_tokens(text: str) -> frozenset[str]:
    """The meaningful tokens of a statement: stop words dropped, plurals folded."""
    return frozenset(_stem(w) for w in words(text) if w not in STOPWORDS)


def stem(word: str) -> str:
    """A light suffix fold for matching a question's wording to a source's ("released" ~ "release",
    "checking" ~ "check", "stopped" ~ "stop"); stronger than :func:`content_tokens`' plural fold."""
    w = word.lower()
    for suffix in ("ing", "ed", "es", "s", "e"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return w


def match_terms(text: str) -> frozenset[str]:
    """The content words of a text, stemmed with :func:`stem` (stop words and bare numbers dropped)."""
    return frozenset(stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1 and not w.isdigit())


def normalise_content(text: str) -> str:
    """Exact-duplicate key for a statement: its words, case-folded, joined by single spaces."""
    return " ".join(words(text))


def temporal_order_key(
    temporal_index: int | None, source_date: SourceDate | None, learned_at: datetime
) -> int:
    """The integer that orders a fact in time (larger is newer).

    An explicit ``temporal_index`` wins. Otherwise the source date, as microseconds since
    1970-01-01 UTC (a plain date counts as its midnight). A fact with neither is taken to be true
    as of when it was learned, so a later, undated correction supersedes dated facts: that is
    what "remember that X is now Y" means.
    """
    if temporal_index is not None:
        return int(temporal_index)
    moment = source_date if source_date is not None else learned_at
    return _epoch_us(moment)


def _epoch_us(moment: SourceDate) -> int:
    if not isinstance(moment, datetime):
        moment = datetime(moment.year, moment.month, moment.day, tzinfo=timezone.utc)
    elif moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def date_to_text(value: SourceDate | None) -> str | None:
    """ISO text for storage; a date stays a date (``2026-02-20``), a datetime keeps its time."""
    return value.isoformat() if value is not None else None


def date_from_text(text: str | None) -> SourceDate | None:
    """Inverse of :func:`date_to_text`."""
    if not text:
        return None
    if len(text) == 10:
        return date.fromisoformat(text)
    return datetime.fromisoformat(text)


def coerce_date(value: SourceDate | str | None, *, what: str) -> SourceDate | None:
    """Accept a date, a datetime or a written date (:func:`moot.text.dates.publication_date`: an
    ISO day or moment, or a month or year read as its first day); refuse anything else with a clear error."""
    if value is None or isinstance(value, (date, datetime)):
        return value
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        parsed = publication_date(text)
        if parsed is not None:
            return parsed
    raise MootError(
        f"{what} {value!r} is not a date",
        fix="pass a datetime.date, a datetime or an ISO date like 2026-02-20 (or a month, 2026-02)")
