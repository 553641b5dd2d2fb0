"""The stored sources as text units, and the units that best match a question.

Facts are what a knowledge base reasons with, but a question often needs the source's own
words: the order of a procedure's steps, which of two sources said which number, the "because"
of a causal sentence. The episodes still hold them. Here they are read back as text units
(sentences, list items, table rows: :mod:`moot.text`), each with its source, date and position,
and ranked against a question lexically: each shared word stem adds its inverse unit frequency,
so the words that say *what* is asked ("cost", "speed") outweigh the subject every sentence
names. Deterministic, no model call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from moot.memory.facts import date_to_text
from moot.text.names import names_in
from moot.text.sentences import TextUnit, split_units
from moot.text.words import content_words

if TYPE_CHECKING:
    from moot.memory.knowledge_base import KnowledgeBase

MAX_EPISODES = 400
"""Episodes read per question (the most recent); beyond that a knowledge base relies on facts."""

CHARS_PER_TOKEN = 4.0


@dataclass(frozen=True, slots=True)
class SourceUnit:
    """One sentence, list item, table row or heading of a stored source."""

    source: str
    published: date | datetime | None
    episode_id: int
    position: int
    """Its place among all the units read, in source order (episodes oldest first)."""
    text: str
    """As a reader needs it (a table row under its header)."""
    kind: str
    block: int
    """The paragraph, list or table it belongs to, within its episode."""
    score: float = 0.0
    shared: int = 0
    """How many of the query's word stems it holds."""

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "published": self.published.isoformat() if self.published else None,
                "episode_id": self.episode_id, "position": self.position, "text": self.text, "kind": self.kind,
                "score": round(self.score, 3)}


@dataclass(frozen=True, slots=True)
class SourceText:
    """One source whole: its episodes' text in order."""

    source: str
    published: date | datetime | None
    text: str

    @property
    def tokens(self) -> int:
        return int(len(self.text) / CHARS_PER_TOKEN) + 1


def _episodes(kb: KnowledgeBase) -> list[Any]:
    """The stored episodes, oldest source first; sources of one date (or none) by name, so that files
    learned side by side, which finish in any order, are always shown in the same order."""
    episodes = kb.episodes()[-MAX_EPISODES:]
    return sorted(episodes, key=lambda e: (str(e.published or ""), e.source, e.id))


def source_units(kb: KnowledgeBase) -> list[SourceUnit]:
    """Every unit of the stored sources, oldest source first; then each fact stored without a source
    text (``kb.add_fact`` by hand), as a unit of its own."""
    units: list[SourceUnit] = []
    for episode in _episodes(kb):
        for unit in split_units(episode.text):
            units.append(_unit(episode, unit, len(units)))
    loose = [f for f in kb.facts() if f.episode_id is None][:MAX_EPISODES]
    for block, fact in enumerate(sorted(loose, key=lambda f: (str(f.source_date or ""), f.id or 0))):
        units.append(SourceUnit(fact.source or "(no source)", fact.source_date, 0, len(units), fact.content, "sentence",
                                -1 - block))
    return units


def _unit(episode: Any, unit: TextUnit, position: int) -> SourceUnit:
    return SourceUnit(episode.source, episode.published, episode.id, position, unit.render(), unit.kind, unit.block)


def whole_sources(kb: KnowledgeBase) -> list[SourceText]:
    """Each source's text, oldest first (for a question whose sources fit a prompt whole): as it was
    written where the knowledge base keeps that (:meth:`KnowledgeBase.source_text`), else its
    episodes' text joined."""
    by_source: dict[tuple[str, str], list[Any]] = {}
    for episode in _episodes(kb):  # a source is a name and a date: two issues of one newsletter are two
        by_source.setdefault((episode.source, date_to_text(episode.published) or ""), []).append(episode)
    written = kb.source_texts()
    return [SourceText(key[0], items[0].published, written.get(key) or "\n\n".join(e.text for e in items))
            for key, items in by_source.items()]


def query_terms(query: str) -> list[frozenset[str]]:
    """The query's terms: each name it writes ("Hadley Canal Trust") is one term of its word stems,
    each other content word a term of one stem."""
    terms: list[frozenset[str]] = []
    in_names: set[str] = set()
    for name, _ in names_in(query):
        stems = frozenset(content_words(name))
        if stems:
            terms.append(stems)
            in_names |= stems
    terms += [frozenset([w]) for w in dict.fromkeys(content_words(query)) if w not in in_names]
    return list(dict.fromkeys(terms))


def rank_units(units: list[SourceUnit], query: str, *, min_shared: int = 1) -> list[SourceUnit]:
    """The units that hold at least ``min_shared`` of the query's terms, best first, scored.

    A term counts when the unit holds any of its stems; its weight is the square of its inverse
    unit frequency, so the word that says what is asked ("budget", in four sentences) outweighs
    the name every sentence repeats ("Hadley Canal Trust"), and a name counts once, not once
    a word."""
    terms = query_terms(query)
    if not terms:
        return []
    stems = [set(content_words(u.text)) for u in units]
    frequency = {t: sum(bool(t & s) for s in stems) for t in terms}
    weight = {t: math.log(1 + len(units) / n) ** 2 for t, n in frequency.items() if n}
    scored = []
    for unit, held in zip(units, stems):
        shared = [t for t in weight if t & held]
        if len(shared) >= min_shared and unit.kind != "heading":
            scored.append(replace(unit, score=sum(weight[t] for t in shared), shared=len(shared)))
    scored.sort(key=lambda u: (-u.score, u.position))
    return scored


__all__ = ["MAX_EPISODES", "SourceText", "SourceUnit", "rank_units", "source_units", "whole_sources"]
