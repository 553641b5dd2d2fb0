"""Python proposes: entity candidates from each sentence, and the pairs of entities a sentence
(or two adjacent sentences) may link, with where the text hedges or says something is unknown.

Candidates are the noun phrases of a sentence (:func:`moot.text.noun_phrases`) and the names
it capitalises that no noun phrase covers (:func:`moot.text.names_in`). A candidate that names
a document's publisher, author or title (its front matter's provenance) is never proposed:
provenance is metadata, not the world the documents describe. Quantities
(:func:`moot.text.find_quantities`) are not candidates; they are measures of the entity
written nearest before them. Nor are times ("July", "hours", "the past decade":
:func:`moot.text.names_a_time`): a time dates what a sentence says, it is not a thing in it.

A pair is two chosen entities in one sentence, or one in a sentence and one in the sentence
right after it when that sentence opens by pointing back ("They have a child called Edward",
"It feeds the lake"): the two sentences are then one statement. The sentence (or the two) is
the pair's quote, so every edge is grounded by construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from moot.text import find_cues, find_quantities, names_a_time, names_in, noun_phrases
from moot.text.words import STOPWORDS, refers_back, words
from moot.teams.graph.evidence import Sentence
from moot.teams.graph.scaffold import label_key, label_tokens

_CLAUSE = re.compile(r"[;:,\u2014()]|\s-\s")
MAX_LABEL_WORDS = 6


@dataclass
class Candidate:
    """A phrase some sentence names, proposed to the model as a possible entity."""

    key: str
    """Its identity key (case, articles and plural ``s`` ignored)."""
    label: str
    """As first written."""
    sentences: list[int] = field(default_factory=list)
    """Ids of the sentences that name it, in reading order."""


@dataclass(frozen=True)
class Mention:
    """Where a candidate is written in one sentence."""

    key: str
    start: int
    end: int


@dataclass(frozen=True)
class Pair:
    """Two entities a text may link, with the text (one sentence or two adjacent ones)."""

    a: str
    """Node id of the entity written first."""
    b: str
    sentences: tuple[int, ...]
    text: str
    hedged: bool
    """A hedge cue ("may", "is suspected") lies in the stretch of text that holds both mentions."""
    unknown: bool
    """The text says that something is not known or not measured."""

    @property
    def key(self) -> tuple[str, str, tuple[int, ...]]:
        return (self.a, self.b, self.sentences)


def _clean(text: str) -> str:
    return " ".join(text.split()).strip(" .,;:!?\"'()[]")


def is_provenance(label: str, provenance: list[str], titles: list[str] = ()) -> bool:  # type: ignore[assignment]
    """Whether a label names a publisher or author of the documents (or part of one: "the
    Y" for a publisher named "X Y"), or is a document's whole title."""
    tokens = label_tokens(label)
    if tokens and any(tokens <= label_tokens(p) for p in provenance if p):
        return True
    return any(label_key(label) == label_key(t) for t in titles if t)


def mentions_in(sentence: str, provenance: list[str], titles: list[str] = ()) -> list[tuple[str, Mention]]:  # type: ignore[assignment]
    """The candidate phrases of one sentence as ``(label, mention)``, in order."""
    out: list[tuple[str, Mention]] = []
    spans: list[tuple[int, int]] = []
    for phrase in noun_phrases(sentence):
        out.append((phrase.text, Mention(label_key(phrase.text), phrase.start, phrase.end)))
        spans.append((phrase.start, phrase.end))
    cursor = 0
    for name, _ in names_in(sentence):
        start = sentence.find(name, cursor)
        if start < 0:
            continue
        cursor = start + len(name)
        if not any(a <= start and cursor <= b for a, b in spans):
            out.append((name, Mention(label_key(name), start, cursor)))
    kept = []
    for label, mention in out:
        label = _clean(label)
        tokens = [w for w in words(label) if w not in STOPWORDS]
        if (not tokens or len(label) < 2 or len(words(label)) > MAX_LABEL_WORDS or all(t.replace(".", "").isdigit() for t in tokens)
                or is_provenance(label, provenance, titles) or names_a_time(label) or not mention.key):
            continue
        kept.append((label, mention))
    return sorted(kept, key=lambda lm: (lm[1].start, -lm[1].end))


def propose(sentences: list[Sentence], provenance: list[str], titles: list[str] = ()  # type: ignore[assignment]
            ) -> tuple[dict[str, Candidate], dict[int, list[Mention]]]:
    """Candidates over a window of sentences (by identity key, first spelling kept) and each sentence's mentions."""
    candidates: dict[str, Candidate] = {}
    mentions: dict[int, list[Mention]] = {}
    for sentence in sentences:
        found = mentions_in(sentence.text, provenance, titles)
        mentions[sentence.id] = [m for _, m in found]
        for label, mention in found:
            cand = candidates.setdefault(mention.key, Candidate(mention.key, label))
            if sentence.id not in cand.sentences:
                cand.sentences.append(sentence.id)
    return candidates, mentions


def resolve(mentions: list[Mention], chosen: dict[str, str]) -> list[tuple[str, Mention]]:
    """The entities written in one sentence: ``(node id, mention)`` for every mention whose key
    was chosen as an entity, the longest winning where two overlap ("paper mill at Ostby" over "Ostby")."""
    picked: list[tuple[str, Mention]] = []
    for m in sorted(mentions, key=lambda m: -(m.end - m.start)):
        node = chosen.get(m.key)
        if node is None or any(m.start < o.end and o.start < m.end for _, o in picked):
            continue
        picked.append((node, m))
    return sorted(picked, key=lambda nm: nm[1].start)


def _clause_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The stretch from the start of the clause holding ``start`` to the end of the clause holding ``end``."""
    left = max((m.end() for m in _CLAUSE.finditer(text, 0, start)), default=0)
    right = next((m.start() for m in _CLAUSE.finditer(text, end)), len(text))
    return left, right


def pairs_in(sentence: Sentence, entities: list[tuple[str, Mention]], following: Sentence | None = None,
             following_entities: list[tuple[str, Mention]] = ()) -> list[Pair]:  # type: ignore[assignment]
    """The pairs one sentence offers: every two entities in it, and, when the next sentence opens
    by pointing back, each entity here with each entity there."""
    cues = find_cues(sentence.text)
    unknown = any(c.kind == "unknown" for c in cues)
    out: list[Pair] = []
    for i, (a, ma) in enumerate(entities):
        for b, mb in entities[i + 1:]:
            if a == b:
                continue
            left, right = _clause_bounds(sentence.text, ma.start, mb.end)
            hedge = any(c.kind == "hedge" and left <= c.start and c.end <= right for c in cues)
            out.append(Pair(a, b, (sentence.id,), sentence.text, hedge, unknown))
    if following is not None and following_entities and refers_back(following.text):
        next_cues = find_cues(following.text)
        text = f"{sentence.text} {following.text}"
        for a, _ in entities:
            for b, mb in following_entities:
                if a == b:
                    continue
                left, right = _clause_bounds(following.text, 0, mb.end)
                hedge = any(c.kind == "hedge" and left <= c.start and c.end <= right for c in next_cues)
                out.append(Pair(a, b, (sentence.id, following.id), text, hedge,
                                any(c.kind == "unknown" for c in next_cues)))
    return out


def measures_in(sentence: str, entities: list[tuple[str, Mention]]) -> list[tuple[str, str, float, str]]:
    """Quantities of one sentence, each given to the entity written nearest before it (else after):
    ``(node id, as written, value, unit)``."""
    out = []
    for q in find_quantities(sentence):
        before = [(node, m) for node, m in entities if m.end <= q.start]
        after = [(node, m) for node, m in entities if m.start >= q.end]
        owner = before[-1][0] if before else after[0][0] if after else None
        if owner is not None:
            out.append((owner, q.text, q.value, q.unit))
    return out


__all__ = ["Candidate", "Mention", "Pair", "is_provenance", "measures_in", "mentions_in", "pairs_in", "propose", "resolve"]
