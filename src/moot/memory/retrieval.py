"""Retrieval strategies, chosen from the question's wording, and the choice made visible.

One search does not fit every question. "How many golds did Norway win in total?" needs every
relevant fact counted, "When did the record change?" needs history in time order including
values that were later replaced, "What about Norway?" needs everything about one entity, and
a knowledge base of a dozen facts is best handed over whole. The choice is deterministic (no
model call) and comes back with a one-line reason, so an answer trace can say why these facts
were used:

=============  ==========================================================================
strategy       chosen when
=============  ==========================================================================
aggregation    "how many", "number of", "list all", "count the", "in total", …
temporal       "when", "before", "after", "latest", "first", "changed", "history", …, or a
               month or year ("in January 2026": the value then may since have changed)
all_facts      every current fact fits within ``limit`` (a small knowledge base)
entity         the question names a known entity
keyword        otherwise, for short questions (≤ 3 search terms): BM25 top ``limit``
two_phase      otherwise: broad BM25 search, then rerank by word coverage, BM25, confidence
               (and semantic similarity when an embedder is configured)
=============  ==========================================================================
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from moot.errors import MootError
from moot.memory.facts import StoredFact, content_tokens, normalise_key, words
from moot.memory.search import query_terms, search_facts
from moot.memory.store import select_facts

if TYPE_CHECKING:
    from moot.memory.knowledge_base import KnowledgeBase


class Strategy(StrEnum):
    """How facts were retrieved for a question."""

    ALL_FACTS = "all_facts"
    ENTITY = "entity"
    TEMPORAL = "temporal"
    AGGREGATION = "aggregation"
    KEYWORD = "keyword"
    TWO_PHASE = "two_phase"


AGGREGATION_CUES = (
    "how many", "count the", "count all", "count of", "number of", "total number",
    "list all", "list every", "list each", "list the",
    "name all", "enumerate", "in total", "altogether", "all of the", "what are all", "tally",
)  # fmt: skip
TEMPORAL_CUES = (
    "when", "before", "after", "latest", "first", "last", "earliest", "most recent", "recently",
    "changed", "change", "changes", "history", "timeline", "over time", "previously", "previous",
    "originally", "initially", "since", "until", "used to", "updated", "trend", "increase",
    "increased", "decrease", "decreased", "grew", "earlier", "later",
)  # fmt: skip
_QUESTION_NOISE = frozenset("many much tell know give show please me list name us about any all".split())
"""Words that say what *kind* of question it is, not what it is about; kept out of searches
(together with the words of the cue that chose the strategy)."""

BROAD_FACTOR = 5
"""Two-phase retrieval first fetches this many times ``limit`` candidates (at least 50)."""


@dataclass(frozen=True, slots=True)
class FactGroup:
    """Facts counted together for an aggregation question."""

    key: str
    """The entity or concept name, as written on the facts (``"(none)"`` when missing)."""
    by: str
    """``"entity"`` or ``"concept"``."""
    count: int
    facts: tuple[StoredFact, ...]


@dataclass(frozen=True, slots=True)
class StrategyChoice:
    """Which strategy a question gets, and why."""

    strategy: Strategy
    reason: str
    entities: tuple[str, ...] = ()
    """Normalised keys of known entities the question names."""
    cue: str = ""
    """The phrase that chose aggregation or temporal (its words are not searched for)."""


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What :meth:`KnowledgeBase.retrieve` found, and how."""

    strategy: Strategy
    facts: list[StoredFact]
    note: str
    """One line for an answer trace: the strategy, why, and what came back."""
    groups: list[FactGroup] = field(default_factory=list)
    """For aggregation: the facts grouped by entity or concept, largest group first."""
    entities: list[str] = field(default_factory=list)
    """Entities the question names (as written on the facts)."""

    def render(self) -> str:
        """The facts as numbered lines for a prompt, marking superseded values and dates."""
        lines = []
        for fact in self.facts:
            when = fact.source_date.isoformat() if fact.source_date else ""
            where = ", ".join(p for p in (fact.source, when) if p)
            status = "" if fact.is_current else f" (superseded by #{fact.superseded_by})"
            lines.append(f"#{fact.id}{f' [{where}]' if where else ''} {fact.content}{status}")
        if self.groups:
            lines.append("counts: " + "; ".join(f"{g.key}: {g.count}" for g in self.groups))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": str(self.strategy),
            "note": self.note,
            "entities": list(self.entities),
            "facts": [f.to_dict() for f in self.facts],
            "groups": [{"key": g.key, "by": g.by, "count": g.count, "fact_ids": [f.id for f in g.facts]} for g in self.groups],
        }


def _padded(text: str) -> str:
    return f" {' '.join(words(text))} "


@lru_cache(maxsize=65_536)
def _phrase(key: str) -> str:
    return " ".join(words(key))


def named_entities(question: str, known: dict[str, str]) -> list[str]:
    """Keys of known entities that appear in the question as whole words, longest first."""
    padded = _padded(question)
    found = []
    for key in known:
        phrase = _phrase(key)
        if len(phrase) >= 2 and f" {phrase} " in padded:
            found.append(key)
    # "New York City" should win over "York" when both are known.
    found.sort(key=lambda k: (-len(k), k))
    kept: list[str] = []
    for key in found:
        if not any(f" {_phrase(key)} " in f" {_phrase(longer)} " for longer in kept):
            kept.append(key)
    return kept


_DATE_CUE = re.compile(
    r" (january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|(?:19|20)\d\d) "
)
"""A month or a year in the question: it asks for the value *at a time*, which may since have
been superseded, so it needs the history (temporal), not only current facts. ("may" the verb is
rare in questions beside a date, and costs only a wider retrieval when it is one.)"""


def _first_cue(question: str) -> tuple[Strategy, str] | None:
    padded = _padded(question)
    best: tuple[int, int, Strategy, str] | None = None
    for kind, cues in ((Strategy.AGGREGATION, AGGREGATION_CUES), (Strategy.TEMPORAL, TEMPORAL_CUES)):
        for cue in cues:
            at = padded.find(f" {cue} ")
            if at >= 0 and (best is None or (at, -len(cue)) < (best[0], best[1])):
                best = (at, -len(cue), kind, cue)
    date = _DATE_CUE.search(padded)
    if date is not None and (best is None or date.start() < best[0]):
        best = (date.start(), 0, Strategy.TEMPORAL, date.group(1))
    return (best[2], best[3]) if best else None


def choose_strategy(kb: KnowledgeBase, question: str, *, limit: int = 20) -> StrategyChoice:
    """Pick the strategy for a question (see the module docstring for the rules, in order)."""
    entities = tuple(named_entities(question, kb.entities()))
    # The cue nearest the start wins: a question's opening says what kind it is
    # ("When did the total change?" is temporal, "How many times did it change?" counts).
    cue = _first_cue(question)
    if cue is not None:
        kind, phrase = cue
        if kind is Strategy.AGGREGATION:
            return StrategyChoice(kind, f"the question asks to count or list ({phrase!r})", entities, phrase)
        return StrategyChoice(kind, f"the question is about time or change ({phrase!r})", entities, phrase)
    current = kb.count(include_superseded=False)
    if current <= limit:
        return StrategyChoice(Strategy.ALL_FACTS, f"small knowledge base ({current} current facts ≤ limit {limit})", entities)
    if entities:
        names = ", ".join(kb.entities()[e] for e in entities)
        return StrategyChoice(Strategy.ENTITY, f"the question names a known entity ({names})", entities)
    terms = _topic_terms(question)
    if len(terms) <= 3:
        return StrategyChoice(Strategy.KEYWORD, f"short question ({len(terms)} search terms)", entities)
    return StrategyChoice(Strategy.TWO_PHASE, f"long question ({len(terms)} search terms): broad search, then rerank", entities)


def _topic_terms(question: str, *, drop: set[str] | None = None) -> list[str]:
    terms = [t for t in query_terms(question) if t not in _QUESTION_NOISE]
    if drop:
        terms = [t for t in terms if t not in drop]
    return terms


def retrieve(
    kb: KnowledgeBase, question: str, *, limit: int = 20, strategy: Strategy | str | None = None
) -> Retrieval:
    """Facts for a question; see :meth:`KnowledgeBase.retrieve`."""
    if not question or not question.strip():
        raise MootError("the question is empty", fix="ask a question in words")
    if limit <= 0:
        raise MootError(f"limit must be positive, got {limit}", fix="pass limit=1 or more")
    choice = choose_strategy(kb, question, limit=limit)
    if strategy is not None:
        try:
            forced = Strategy(strategy)
        except ValueError as exc:
            names = ", ".join(s.value for s in Strategy)
            raise MootError(f"unknown retrieval strategy {strategy!r}", fix=f"use one of: {names}") from exc
        choice = StrategyChoice(forced, "chosen by the caller", choice.entities, choice.cue)
    run = {
        Strategy.ALL_FACTS: _all_facts,
        Strategy.ENTITY: _entity,
        Strategy.TEMPORAL: _temporal,
        Strategy.AGGREGATION: _aggregation,
        Strategy.KEYWORD: _keyword,
        Strategy.TWO_PHASE: _two_phase,
    }[choice.strategy]
    facts, groups, detail = run(kb, question, choice, limit)
    names = kb.entities()
    entity_names = [names.get(e, e) for e in choice.entities]
    note = f"{choice.strategy}: {choice.reason}; {detail}"
    return Retrieval(choice.strategy, facts, note, groups, entity_names)


_Result = tuple[list[StoredFact], list[FactGroup], str]


def _all_facts(kb: KnowledgeBase, question: str, choice: StrategyChoice, limit: int) -> _Result:
    facts = kb.facts(limit=limit)
    return facts, [], f"{len(facts)} facts, oldest first"


def _entity_words(choice: StrategyChoice) -> set[str]:
    """Words not to search for: the entity names (already a filter) and the strategy's cue."""
    return {w for key in choice.entities for w in words(key)} | set(choice.cue.split())


def _entity(kb: KnowledgeBase, question: str, choice: StrategyChoice, limit: int) -> _Result:
    terms = _topic_terms(question, drop=_entity_words(choice))
    keys = list(choice.entities)
    with kb.database.snapshot() as conn:
        frequencies = kb.term_frequencies(conn)
        ranked = (
            [h.fact for h in search_facts(conn, " ".join(terms), limit=limit, entity_keys=keys, frequencies=frequencies)]
            if terms
            else []
        )
        placeholders = ",".join("?" * len(keys))
        where = f"entity_key IN ({placeholders}) AND superseded_by IS NULL"
        # Only as many of the rest as can still fit: an entity may have thousands of facts.
        rest = select_facts(conn, where, tuple(keys), order=f"temporal_index DESC, id DESC LIMIT {int(limit)}")
        total = len(rest)
        if total == limit:
            total = int(conn.execute(f"SELECT COUNT(*) FROM facts WHERE {where}", tuple(keys)).fetchone()[0])
    facts = _dedupe([*ranked, *rest])[:limit]
    return facts, [], f"{len(facts)} current facts about the entity, most relevant first ({total} in all)"


def _histories(kb: KnowledgeBase, seeds: list[StoredFact], limit: int) -> list[StoredFact]:
    """Seed facts plus the full history of each seed's entity/attribute, whole groups in seed order."""
    chosen: list[StoredFact] = []
    seen_groups: set[tuple[str, str]] = set()
    for seed in seeds:
        entity, attribute = normalise_key(seed.entity), normalise_key(seed.attribute)
        if entity and attribute:
            if (entity, attribute) in seen_groups:
                continue
            seen_groups.add((entity, attribute))
            group = kb.history(seed.entity, seed.attribute)
        else:
            group = [seed]
        if chosen and len(chosen) + len(group) > limit:
            continue
        chosen.extend(group)
    return _dedupe(chosen)


def _temporal(kb: KnowledgeBase, question: str, choice: StrategyChoice, limit: int) -> _Result:
    keys = list(choice.entities)
    terms = _topic_terms(question, drop=_entity_words(choice))
    with kb.database.snapshot() as conn:
        seeds = [
            h.fact
            for h in search_facts(
                conn,
                " ".join(terms),
                limit=max(limit, 50),
                include_superseded=True,
                entity_keys=keys or None,
                frequencies=kb.term_frequencies(conn),
            )
        ] if terms else []
        if not seeds and keys:
            placeholders = ",".join("?" * len(keys))
            seeds = select_facts(conn, f"entity_key IN ({placeholders})", tuple(keys), order="temporal_index, id")
        if not seeds:
            # "What changed?" names nothing: the most recent changes are the answer.
            seeds = select_facts(
                conn,
                "id IN (SELECT newer_id FROM supersedes)",
                order=f"temporal_index DESC, id DESC LIMIT {int(limit)}",
            )
    facts = sorted(_histories(kb, seeds, limit), key=lambda f: (f.temporal_index or 0, f.id or 0))
    superseded = sum(not f.is_current for f in facts)
    latest = [f for f in facts if f.is_current and f.attribute]
    tail = ""
    if latest:
        tail = "; latest: " + ", ".join(f"{f.entity} {f.attribute} = {f.value or f.content}" for f in latest[-3:])
    return facts, [], f"{len(facts)} facts in time order, oldest first, {superseded} superseded{tail}"


def _aggregation(kb: KnowledgeBase, question: str, choice: StrategyChoice, limit: int) -> _Result:
    keys = list(choice.entities)
    terms = _topic_terms(question, drop=_entity_words(choice))
    # Aggregation must see every relevant fact to count right, so its cap is generous.
    cap = max(limit * 10, 500)
    capped = ""
    with kb.database.snapshot() as conn:
        frequencies = kb.term_frequencies(conn)
        if keys:
            placeholders = ",".join("?" * len(keys))
            where = f"entity_key IN ({placeholders}) AND superseded_by IS NULL"
            matched = (
                [h.fact for h in search_facts(conn, " ".join(terms), limit=cap, entity_keys=keys, frequencies=frequencies)]
                if terms
                else []
            )
            if matched:
                facts = sorted(matched, key=lambda f: (f.temporal_index or 0, f.id or 0))
            else:
                facts = select_facts(conn, where, tuple(keys), order=f"temporal_index, id LIMIT {cap}")
                if len(facts) == cap:
                    total = int(conn.execute(f"SELECT COUNT(*) FROM facts WHERE {where}", tuple(keys)).fetchone()[0])
                    capped = f" (the first {cap} of {total})"
            by = "concept"
        elif terms:
            hits = search_facts(conn, " ".join(terms), limit=cap, frequencies=frequencies)
            facts = _best_coverage([h.fact for h in hits], terms)
            by = "entity"
        else:
            facts = select_facts(conn, "superseded_by IS NULL", order=f"temporal_index, id LIMIT {cap}")
            by = "entity"
    groups = _group(facts, by)
    top = ", ".join(f"{g.key} {g.count}" for g in groups[:5])
    return facts, groups, f"{len(facts)} current facts{capped} in {len(groups)} groups by {by}" + (f": {top}" if top else "")


def _coverage(fact: StoredFact, stems: set[str]) -> int:
    text = " ".join((fact.content, fact.concept, fact.entity, " ".join(fact.tags)))
    return len(stems & content_tokens(text))


def _best_coverage(facts: list[StoredFact], terms: list[str]) -> list[StoredFact]:
    """Keep facts matching nearly as many question words as the best match (drops stray one-word hits)."""
    stems = set(content_tokens(" ".join(terms)))
    if not facts or not stems:
        return facts
    scored = [(f, _coverage(f, stems)) for f in facts]
    best = max(c for _, c in scored)
    floor = best - 1 if best >= 3 else best
    return [f for f, c in scored if c >= max(floor, 1)] or facts


def _group(facts: list[StoredFact], by: str) -> list[FactGroup]:
    buckets: dict[str, list[StoredFact]] = defaultdict(list)
    names: dict[str, str] = {}
    for fact in facts:
        raw = fact.entity if by == "entity" else (fact.concept or fact.attribute)
        key = normalise_key(raw) or "(none)"
        names.setdefault(key, raw or "(none)")
        buckets[key].append(fact)
    groups = [FactGroup(names[k], by, len(v), tuple(v)) for k, v in buckets.items()]
    groups.sort(key=lambda g: (-g.count, g.key.casefold()))
    return groups


def _keyword(kb: KnowledgeBase, question: str, choice: StrategyChoice, limit: int) -> _Result:
    terms = _topic_terms(question, drop=set(choice.cue.split())) or query_terms(question)
    with kb.database.snapshot() as conn:
        hits = search_facts(conn, " ".join(terms), limit=limit, frequencies=kb.term_frequencies(conn))
    return [h.fact for h in hits], [], f"{len(hits)} facts by BM25 on {', '.join(terms[:6]) or 'no words'}"


def _two_phase(kb: KnowledgeBase, question: str, choice: StrategyChoice, limit: int) -> _Result:
    terms = _topic_terms(question, drop=set(choice.cue.split())) or query_terms(question)
    broad = max(limit * BROAD_FACTOR, 50)
    with kb.database.snapshot() as conn:
        hits = search_facts(conn, " ".join(terms), limit=broad, frequencies=kb.term_frequencies(conn))
    if not hits:
        return [], [], "no fact shares a word with the question"
    stems = set(content_tokens(" ".join(terms)))
    best_bm25 = max(h.score for h in hits) or 1.0
    semantic: dict[int, float] = {}
    if kb.embedder is not None:
        from moot.models.embeddings import similarities

        semantic = similarities(kb, question, [h.fact for h in hits])

    def rerank_score(hit: Any) -> float:
        coverage = _coverage(hit.fact, stems) / max(len(stems), 1)
        lexical = hit.score / best_bm25
        if semantic:
            return 0.35 * lexical + 0.25 * coverage + 0.3 * semantic.get(hit.fact.id, 0.0) + 0.1 * hit.fact.confidence
        return 0.5 * lexical + 0.4 * coverage + 0.1 * hit.fact.confidence

    ranked = sorted(hits, key=lambda h: (-rerank_score(h), h.fact.id))[:limit]
    how = "BM25, word coverage, confidence" + (", semantic similarity" if semantic else "")
    return [h.fact for h in ranked], [], f"{len(ranked)} of {len(hits)} candidates after reranking by {how}"


def _dedupe(facts: list[StoredFact]) -> list[StoredFact]:
    seen: set[int | None] = set()
    out = []
    for fact in facts:
        if fact.id not in seen:
            seen.add(fact.id)
            out.append(fact)
    return out

