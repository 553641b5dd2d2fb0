"""Source passages: the paragraphs of stored episodes that best match a question.

Facts are what a knowledge base reasons with, but a small extraction model loses things on the
way: the order of a procedure's steps, which of two sources said which number, the "because" of
a causal sentence. The episodes (the raw text facts were extracted from) still hold them, so a
question can be given the one or two paragraphs that share the most informative words with it,
next to its facts. Scoring is lexical and deterministic: each question word found in a paragraph
adds its inverse paragraph frequency, so rare words ("Tannery", "filter") count more than common
ones ("river"). No model call, no index: episodes are few next to facts, and only the most
recent :data:`MAX_EPISODES` are read.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from moot.memory.facts import content_tokens

if TYPE_CHECKING:
    from moot.memory.knowledge_base import KnowledgeBase

MAX_EPISODES = 300
"""Episodes read per question (the most recent); beyond that a knowledge base relies on facts."""

MAX_PASSAGE_CHARS = 700
"""A paragraph longer than this is split into windows of whole sentences."""

_DATELINE = re.compile(r"^\s*[A-Z][\w .,'’&-]{0,60},\s*(?:\d{1,2}\s+[A-Z][a-z]+|[A-Z][a-z]+\s+\d{1,2})(?:,?\s+\d{4})?\.?\s*$")


def is_dateline(sentence: str) -> bool:
    """True for a report's dateline ("Varnby, 20 June 2023.", "Kelder Town Council notice, 20 August
    2024."): it dates the article and states nothing."""
    return _DATELINE.match(sentence) is not None


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“‘'(])")
"""A sentence ends at . ! or ? before a capital, a digit or a quote: "until 9 p.m. every evening"
stays one sentence."""


@dataclass(frozen=True, slots=True)
class Passage:
    """A paragraph of a stored episode, with where it came from and how well it matched."""

    source: str
    published: str | None
    text: str
    score: float
    episode_id: int

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "published": self.published, "text": self.text,
                "score": round(self.score, 3), "episode_id": self.episode_id}


def split_paragraphs(text: str, *, max_chars: int = MAX_PASSAGE_CHARS) -> list[str]:
    """Blank-line paragraphs without their Markdown heading lines; long ones cut at sentences."""
    pieces: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        # A heading line is no statement, and must not run into the paragraph under it.
        block = " ".join(" ".join(line for line in block.splitlines() if not line.lstrip().startswith("#")).split())
        if not block:
            continue
        if len(block) <= max_chars:
            pieces.append(block)
            continue
        window = ""
        for sentence in _SENTENCE_END.split(block):
            if window and len(window) + 1 + len(sentence) > max_chars:
                pieces.append(window)
                window = sentence
            else:
                window = f"{window} {sentence}".strip()
        if window:
            pieces.append(window)
    return pieces


def find_passages(kb: KnowledgeBase, question: str, *, limit: int = 2) -> list[Passage]:
    """The ``limit`` paragraphs that share the most informative words with the question, best first.

    A paragraph must share at least two question words (or the question's only word), so a
    passage is never added for one stray common word.
    """
    wanted = content_tokens(question)
    if not wanted or limit <= 0:
        return []
    episodes = kb.episodes()[-MAX_EPISODES:]
    candidates: list[tuple[Any, str, frozenset[str]]] = []
    for episode in episodes:
        for paragraph in split_paragraphs(episode.text):
            candidates.append((episode, paragraph, content_tokens(paragraph)))
    if not candidates:
        return []
    frequency = {word: sum(word in tokens for _, _, tokens in candidates) for word in wanted}
    total = len(candidates)
    weight = {word: math.log(1 + total / count) for word, count in frequency.items() if count}
    needed = min(2, len(wanted))
    scored: list[Passage] = []
    for episode, paragraph, tokens in candidates:
        shared = [word for word in weight if word in tokens]
        if len(shared) < needed:
            continue
        published = episode.published.isoformat() if episode.published else None
        scored.append(Passage(episode.source, published, paragraph, sum(weight[w] for w in shared), episode.id))
    scored.sort(key=lambda p: (-p.score, len(p.text), p.episode_id))
    return scored[:limit]


@dataclass(frozen=True, slots=True)
class SourceSentences:
    """The sentences of one episode that best match a question, best first."""

    source: str
    published: str | None
    episode_id: int
    sentences: tuple[str, ...]
    score: float
    """How well the best sentence matches (the sum of its shared words' weights)."""

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "published": self.published, "episode_id": self.episode_id,
                "sentences": list(self.sentences), "score": self.score}


@dataclass(frozen=True, slots=True)
class ScoredSentence:
    """One sentence of a stored episode and how well it matches a query."""

    text: str
    score: float
    """The sum of the inverse sentence frequencies of the query words it shares."""
    shared: int
    """How many of the query's words it shares."""
    source: str
    published: str | None
    episode_id: int
    position: int


def score_sentences(kb: KnowledgeBase, query: str, *, min_shared: int = 1) -> list[ScoredSentence]:
    """Every sentence of the (most recent :data:`MAX_EPISODES`) episodes that shares at least
    ``min_shared`` of the query's words, best first.

    Each shared word adds its inverse sentence frequency, so the words that say *what* is asked
    ("cost", "bridge") outweigh the subject every sentence names ("festival"); words are matched
    with a light stemmer ("opened" ~ "opens"). Lexical and deterministic, like :func:`find_passages`."""
    from moot.memory.facts import match_terms

    wanted = match_terms(query)
    if not wanted:
        return []
    rows: list[tuple[Any, str, frozenset[str]]] = []
    for episode in kb.episodes()[-MAX_EPISODES:]:
        for paragraph in split_paragraphs(episode.text):
            for sentence in _SENTENCE_END.split(paragraph):
                if sentence.lstrip().startswith("#") or is_dateline(sentence):
                    continue  # a heading or a dateline states nothing
                rows.append((episode, sentence.strip(), match_terms(sentence)))
    frequency = {w: sum(w in terms for _, _, terms in rows) for w in wanted}
    weight = {w: math.log(1 + len(rows) / n) for w, n in frequency.items() if n}
    scored: list[ScoredSentence] = []
    for position, (episode, sentence, terms) in enumerate(rows):
        shared = [w for w in weight if w in terms]
        if len(shared) >= min_shared:
            published = episode.published.isoformat() if episode.published else None
            scored.append(ScoredSentence(sentence, round(sum(weight[w] for w in shared), 3), len(shared),
                                         episode.source, published, episode.id, position))
    scored.sort(key=lambda s: (-s.score, s.position))
    return scored


def find_source_sentences(kb: KnowledgeBase, question: str, *, per_source: int = 3, min_shared: int = 2,
                          limit: int = 4) -> list[SourceSentences]:
    """Per episode, the ``per_source`` sentences that best match ``question`` (sharing at least
    ``min_shared`` of its words, scored by :func:`score_sentences`), for the ``limit`` best
    episodes, oldest first.

    What each source says about one thing, side by side: the material for telling a disagreement
    between sources from a later update of one source."""
    best: dict[int, list[ScoredSentence]] = {}
    for sentence in score_sentences(kb, question, min_shared=min_shared):
        best.setdefault(sentence.episode_id, []).append(sentence)
    found = [SourceSentences(items[0].source, items[0].published, episode_id,
                             tuple(s.text for s in items[:per_source]), items[0].score)
             for episode_id, items in best.items()]
    found.sort(key=lambda s: -s.score)
    kept = found[:limit]
    kept.sort(key=lambda s: (s.published or "", s.episode_id))
    return kept
