"""Python proposes: entity candidates from each sentence, and the pairs of entities a sentence
(or two adjacent sentences) may link, with where the text hedges or says something is unknown.

Candidates are the noun phrases of a sentence (:func:`moot.text.noun_phrases`) and the names
it capitalises that no noun phrase covers (:func:`moot.text.names_in`). A candidate that names
a document's publisher, author or title (its front matter's provenance) is never proposed:
provenance is metadata, not the world the documents describe. Quantities
(:func:`moot.text.find_quantities`) are not candidates; they are measures of the entity
written nearest before them. Nor are times ("July", "hours", "the past decade":
:func:`moot.text.names_a_time`): a time dates what a sentence says, it is not a thing in it.

**Salience.** A thing of the text's world is written about more than once: a reader draws the
depot that three sentences name, not the car park one sentence passes. So in sources longer than
:attr:`~moot.teams.graph.GraphConfig.short_sources` sentences (about one news article; in a short
text one mention matters), a candidate is offered to the model only when its *mention group* is
named in at least :attr:`~moot.teams.graph.vocabulary.Vocabulary.min_mentions` sentences of all the
sources (two by default), when it shares a word with the question, or when its sentence says
something is not known (the factor nobody measured is often named once). A mention group is a
name's own words ("Quell Yard"), else the stem of the phrase's head noun, as the tagger reads it
("the parcel depot" and "depots" are both depots; "shortage of clean water" is a
shortage). Counting is Python's; the model still chooses which salient candidates are entities.

A pair is two chosen entities in one sentence, or one in a sentence and one in the sentence
right after it when that sentence opens by pointing back ("They have a child called Edward",
"It feeds the lake"): the two sentences are then one statement. The sentence (or the two) is
the pair's quote, so every edge is grounded by construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from moot.text import find_cues, find_quantities, names_a_time, names_in, noun_phrases, says_unknown
from moot.text.words import STOPWORDS, stem, words
from moot.teams.graph.evidence import Sentence
from moot.teams.graph.scaffold import label_key, label_tokens

_CLAUSE = re.compile(r"[;:,\u2014()]|\s-\s")
MAX_LABEL_WORDS = 6
"""The most content words a candidate may have ("the sale of the Tolvik's Quay fish market" has five)."""


@dataclass
class Candidate:
    """A phrase some sentence names, proposed to the model as a possible entity."""

    key: str
    """Its identity key (case, articles and plural ``s`` ignored)."""
    label: str
    """As first written."""
    sentences: list[int] = field(default_factory=list)
    """Ids of the sentences that name it, in reading order."""
    group: str = ""
    """Its mention group (:func:`mention_group`)."""


@dataclass(frozen=True)
class Mention:
    """Where a candidate is written in one sentence."""

    key: str
    start: int
    end: int
    group: str = ""
    """Its mention group (:func:`mention_group`): what repeated mention of it is counted by."""
    label: str = ""
    """As written in the sentence."""


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
    window: tuple[int, ...] = ()
    """The sentences the model is shown when it judges the pair (the quote's, or the sentence before
    them too, whose pairs across into this one are judged with it); the quote's when empty."""
    context: str = ""
    """Those sentences' text; the quote when empty."""

    @property
    def shown(self) -> tuple[tuple[int, ...], str]:
        """The text the model judges the pair in: ``(sentence ids, text)``."""
        return (self.window or self.sentences, self.context or self.text)

    @property
    def key(self) -> tuple[str, str, tuple[int, ...]]:
        return (self.a, self.b, self.sentences)


def is_name(label: str) -> bool:
    """Whether a label is written as a name: every word capitalised ("Noah", "Ana Lima")."""
    words = label.split()
    return bool(words) and all(w[:1].isupper() for w in words)


def mention_group(label: str, head: str = "") -> str:
    """What repeated mention of a phrase is counted by: a name's own key ("quell yard"), else the
    stem of its head noun (``head``, from the tagger; the last word when none is given), so
    "depots" and "the depot" count together."""
    if is_name(label):
        return label_key(label)
    last = words(head or label)[-1:] or [""]
    return stem(last[0])


def _clean(text: str) -> str:
    return " ".join(text.split()).strip(" .,;:!?\"'()[]")


def is_provenance(label: str, provenance: list[str], titles: list[str] = ()) -> bool:  # type: ignore[assignment]
    """Whether a label names a publisher or author of the documents (or part of one: "the
    Y" for a publisher named "X Y"; or a phrase that holds one's whole name of two words or more,
    "readers of the X Y"), or is a document's whole title."""
    tokens = label_tokens(label)
    names = [label_tokens(p) for p in provenance if p]
    if tokens and any(tokens <= name or (len(name) >= 2 and name <= tokens) for name in names):
        return True
    return any(label_key(label) == label_key(t) for t in titles if t)


def mentions_in(sentence: str, provenance: list[str], titles: list[str] = ()) -> list[tuple[str, Mention]]:  # type: ignore[assignment]
    """The candidate phrases of one sentence as ``(label, mention)``, in order."""
    out: list[tuple[str, Mention]] = []
    spans: list[tuple[int, int]] = []
    for phrase in noun_phrases(sentence):
        out.append((phrase.text, Mention(label_key(phrase.text), phrase.start, phrase.end, mention_group(phrase.text, phrase.head))))
        spans.append((phrase.start, phrase.end))
    cursor = 0
    for name, _ in names_in(sentence):
        start = sentence.find(name, cursor)
        if start < 0:
            continue
        cursor = start + len(name)
        if not any(a <= start and cursor <= b for a, b in spans):
            out.append((name, Mention(label_key(name), start, cursor, mention_group(name))))
    kept = []
    for label, mention in out:
        label = _clean(label)
        tokens = [w for w in words(label) if w not in STOPWORDS]
        if (not tokens or len(label) < 2 or len(tokens) > MAX_LABEL_WORDS or all(t.replace(".", "").isdigit() for t in tokens)
                or is_provenance(label, provenance, titles) or names_a_time(label) or not mention.key):
            continue
        kept.append((label, replace(mention, label=label)))
    return sorted(kept, key=lambda lm: (lm[1].start, -lm[1].end))


def candidates_of(sentence_ids: list[int], mentions: dict[int, list[Mention]]) -> dict[str, Candidate]:
    """The candidates that these sentences' mentions make, in reading order (by identity key, the
    first spelling kept): a window's candidates, from mentions read once for the whole text."""
    candidates: dict[str, Candidate] = {}
    for sid in sentence_ids:
        for mention in mentions.get(sid, []):
            cand = candidates.setdefault(mention.key, Candidate(mention.key, mention.label, group=mention.group))
            if sid not in cand.sentences:
                cand.sentences.append(sid)
    return candidates


def propose(sentences: list[Sentence], provenance: list[str], titles: list[str] = ()  # type: ignore[assignment]
            ) -> tuple[dict[str, Candidate], dict[int, list[Mention]]]:
    """Candidates over a window of sentences (by identity key, first spelling kept) and each sentence's mentions."""
    mentions = {sentence.id: [m for _, m in mentions_in(sentence.text, provenance, titles)] for sentence in sentences}
    return candidates_of([s.id for s in sentences], mentions), mentions


def mention_counts(candidates: dict[str, Candidate]) -> dict[str, int]:
    """How many sentences name each mention group, over the candidates of the whole text."""
    named: dict[str, set[int]] = {}
    for cand in candidates.values():
        named.setdefault(cand.group, set()).update(cand.sentences)
    return {group: len(ids) for group, ids in named.items()}


@dataclass
class TextReading:
    """The whole text read once, without the model: each sentence's mentions, how often each mention group
    is named, and which sentences say something is not known (the salience rule's inputs)."""

    mentions: dict[int, list[Mention]]
    counts: dict[str, int]
    unknown: set[int]

    @classmethod
    def of(cls, sentences: list[Sentence], provenance: list[str], titles: list[str] = ()  # type: ignore[assignment]
           ) -> TextReading:
        candidates, mentions = propose(sentences, provenance, titles)
        return cls(mentions, mention_counts(candidates), {s.id for s in sentences if says_unknown(s.text)})

    def salient(self, cand: Candidate, min_mentions: int, question_words: frozenset[str]) -> bool:
        """Whether a candidate is offered to the model (the module docstring's salience rule)."""
        return (self.counts.get(cand.group, len(cand.sentences)) >= min_mentions
                or bool(label_tokens(cand.label) & question_words) or any(s in self.unknown for s in cand.sentences))


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


def pairs_in(sentence: Sentence, entities: list[tuple[str, Mention]], previous: Sentence | None = None,
             previous_entities: list[tuple[str, Mention]] = ()) -> list[Pair]:  # type: ignore[assignment]
    """The pairs one sentence offers: every two entities in it, and each entity of ``previous`` (the
    sentence before it in its paragraph, when the caller offers it: see
    :attr:`~moot.teams.graph.vocabulary.Vocabulary.links_across`) with each entity here. All of them
    are judged in one text, the two sentences, so that a sentence's entities are asked about once
    with the one before it; a pair's quote is still the sentence (or the two) that names both."""
    cues = find_cues(sentence.text)
    unknown = any(c.kind == "unknown" for c in cues)
    across = previous is not None and bool(previous_entities)
    window = (previous.id, sentence.id) if across else (sentence.id,)  # type: ignore[union-attr]
    context = f"{previous.text} {sentence.text}" if across else sentence.text  # type: ignore[union-attr]
    out: list[Pair] = []
    for i, (a, ma) in enumerate(entities):
        for b, mb in entities[i + 1:]:
            if a == b:
                continue
            left, right = _clause_bounds(sentence.text, ma.start, mb.end)
            hedge = any(c.kind == "hedge" and left <= c.start and c.end <= right for c in cues)
            out.append(Pair(a, b, (sentence.id,), sentence.text, hedge, unknown, window, context))
    if across:
        before_cues = find_cues(previous.text)  # type: ignore[union-attr]
        for a, ma in previous_entities:
            left_before, _ = _clause_bounds(previous.text, ma.start, ma.end)  # type: ignore[union-attr]
            for b, mb in entities:
                if a == b:
                    continue
                _, right = _clause_bounds(sentence.text, mb.start, mb.end)
                hedge = (any(c.kind == "hedge" and c.end <= right for c in cues)
                         or any(c.kind == "hedge" and c.start >= left_before for c in before_cues))
                out.append(Pair(a, b, window, context, hedge,
                                unknown or any(c.kind == "unknown" for c in before_cues), window, context))
    return out


def measures_in(sentence: str, entities: list[tuple[str, Mention]]) -> list[tuple[str, str, float, str]]:
    """Quantities of one sentence, each given to the entity written nearest before it (else after):
    ``(node id, as written, value, unit)``."""
    out = []
    for q in find_quantities(sentence):
        if not q.amount:
            continue  # a time of day, a time zone, the "16" of "under-16": no measure of anything
        before = [(node, m) for node, m in entities if m.end <= q.start]
        after = [(node, m) for node, m in entities if m.start >= q.end]
        owner = before[-1][0] if before else after[0][0] if after else None
        if owner is not None:
            out.append((owner, q.text, q.value, q.unit))
    return out


__all__ = ["Candidate", "Mention", "Pair", "TextReading", "candidates_of", "is_name", "is_provenance", "measures_in", "mention_counts", "mention_group",
           "mentions_in", "pairs_in", "propose", "resolve"]
