"""Consolidation: merge duplicate and near-duplicate facts, prune weak superseded ones.

Learning the same story from three articles leaves three wordings of one fact; a weak
extractor leaves low-confidence guesses that later facts replaced. Both crowd retrieval.
:func:`consolidate` cleans up in one transaction and reports every change, so a user (or the
MemoryAgent's trace) can see what was merged and what was dropped.

Near-duplicates are judged conservatively, because merging two *different* facts loses
information while leaving a duplicate costs only a little space:

* only facts with the same normalised entity, attribute and value, and in the same state
  (both current, or both superseded), are compared;
* similarity is the Jaccard overlap of their content tokens (stop words dropped, plurals
  folded), and must reach ``similarity`` (0.9 by default);
* the numbers in both statements must be identical ("rose 5%" never merges with "rose 6%").

The survivor is the most confident fact of a cluster (the oldest on a tie); it takes the union
of the tags and remembers the other sources in ``also_from``. Pruning deletes a superseded
fact only when its confidence is below ``prune_below`` *and* the fact that replaced it is more
confident: a weak guess replaced by something surer is noise; a weak fact replaced by another
weak fact is still evidence.
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from moot.errors import MootError
from moot.memory.facts import content_tokens, normalise_key, normalise_tags, words
from moot.memory.supersession import relink

if TYPE_CHECKING:
    import sqlite3

    from moot.memory.knowledge_base import KnowledgeBase


@dataclass(frozen=True, slots=True)
class MergedFacts:
    """One cluster of duplicates folded into a single fact."""

    kept_id: int
    removed_ids: tuple[int, ...]
    content: str
    """The surviving fact's content."""
    similarity: float
    """The lowest pairwise similarity that joined this cluster."""


@dataclass(frozen=True, slots=True)
class PrunedFact:
    """A low-confidence superseded fact that was deleted."""

    id: int
    content: str
    confidence: float
    superseded_by: int


@dataclass(slots=True)
class ConsolidationReport:
    """What :func:`consolidate` did (or would do, with ``dry_run=True``)."""

    facts_before: int
    facts_after: int
    merged: list[MergedFacts] = field(default_factory=list)
    pruned: list[PrunedFact] = field(default_factory=list)
    dry_run: bool = False
    duration_s: float = 0.0

    @property
    def removed(self) -> int:
        return self.facts_before - self.facts_after

    def describe(self) -> str:
        """One line for a CLI or an agent trace."""
        verb = "would merge" if self.dry_run else "merged"
        merged_away = sum(len(m.removed_ids) for m in self.merged)
        return (
            f"{verb} {merged_away} duplicate facts into {len(self.merged)}, "
            f"{'would prune' if self.dry_run else 'pruned'} {len(self.pruned)} weak superseded facts "
            f"({self.facts_before} → {self.facts_after} facts, {self.duration_s:.2f}s)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "facts_before": self.facts_before,
            "facts_after": self.facts_after,
            "dry_run": self.dry_run,
            "duration_s": round(self.duration_s, 4),
            "merged": [
                {
                    "kept_id": m.kept_id,
                    "removed_ids": list(m.removed_ids),
                    "content": m.content,
                    "similarity": round(m.similarity, 3),
                }
                for m in self.merged
            ],
            "pruned": [
                {"id": p.id, "content": p.content, "confidence": p.confidence, "superseded_by": p.superseded_by}
                for p in self.pruned
            ],
        }


@dataclass(slots=True)
class _Row:
    id: int
    content: str
    confidence: float
    tags: list[str]
    source: str
    also_from: list[str]
    entity_key: str
    attribute_key: str
    tokens: frozenset[str]
    numbers: frozenset[str]


class _DryRun(Exception):
    """Raised inside the transaction to roll a dry run back."""


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def consolidate(
    kb: KnowledgeBase, *, similarity: float = 0.9, prune_below: float = 0.3, dry_run: bool = False
) -> ConsolidationReport:
    """Merge near-duplicate facts and prune weak superseded ones, in one transaction."""
    if not 0.0 < similarity <= 1.0:
        raise MootError(f"similarity must be in (0, 1], got {similarity}", fix="pass e.g. similarity=0.9")
    if not 0.0 <= prune_below <= 1.0:
        raise MootError(f"prune_below must be in [0, 1], got {prune_below}", fix="pass e.g. prune_below=0.3")
    started = time.perf_counter()
    report = ConsolidationReport(facts_before=0, facts_after=0, dry_run=dry_run)
    try:
        with kb.database.transaction() as conn:
            report.facts_before = conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
            groups = _merge_duplicates(conn, similarity, report)
            groups |= _prune(conn, prune_below, report)
            for entity_key, attribute_key in sorted(groups):
                relink(conn, entity_key, attribute_key)
            report.facts_after = conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    report.duration_s = time.perf_counter() - started
    return report


def _load(conn: sqlite3.Connection) -> dict[tuple[str, str, str, bool], list[_Row]]:
    blocks: dict[tuple[str, str, str, bool], list[_Row]] = defaultdict(list)
    for row in conn.execute(
        "SELECT id, content, confidence, tags, source, also_from, entity_key, attribute_key, value, "
        "superseded_by IS NULL FROM facts ORDER BY id"
    ):
        fact_id, content, confidence, tags, source, also, entity_key, attribute_key, value, current = row
        tokens = content_tokens(content) or frozenset(words(content))
        numbers = frozenset(t for t in words(content) if any(ch.isdigit() for ch in t))
        block = (entity_key, attribute_key, normalise_key(value), bool(current))
        blocks[block].append(
            _Row(
                fact_id, content, confidence, json.loads(tags), source, json.loads(also),
                entity_key, attribute_key, tokens, numbers,
            )  # fmt: skip
        )
    return blocks


def _similar_pairs(rows: list[_Row], threshold: float) -> list[tuple[float, int, int]]:
    """Pairs with Jaccard ≥ threshold, found with a prefix filter instead of comparing all pairs.

    Tokens are ordered rarest first; two sets with Jaccard ≥ t must share a token among the
    first ``|s| - ceil(t·|s|) + 1`` of each, so only records sharing a prefix token are compared.
    """
    frequency: dict[str, int] = defaultdict(int)
    for row in rows:
        for token in row.tokens:
            frequency[token] += 1
    order = sorted(range(len(rows)), key=lambda i: (len(rows[i].tokens), rows[i].id))
    index: dict[str, list[int]] = defaultdict(list)
    pairs: list[tuple[float, int, int]] = []
    for i in order:
        row = rows[i]
        ranked = sorted(row.tokens, key=lambda t: (frequency[t], t))
        prefix = ranked[: len(ranked) - math.ceil(threshold * len(ranked)) + 1] if ranked else []
        candidates: set[int] = set()
        for token in prefix:
            candidates.update(index[token])
        for j in candidates:
            other = rows[j]
            if len(other.tokens) < threshold * len(row.tokens):  # size filter
                continue
            if other.numbers != row.numbers:
                continue
            score = jaccard(row.tokens, other.tokens)
            if score >= threshold:
                pairs.append((score, min(row.id, other.id), max(row.id, other.id)))
        for token in prefix:
            index[token].append(i)
    return pairs


def _merge_duplicates(conn: sqlite3.Connection, threshold: float, report: ConsolidationReport) -> set[tuple[str, str]]:
    touched: set[tuple[str, str]] = set()
    for rows in _load(conn).values():
        if len(rows) < 2:
            continue
        parent = {r.id: r.id for r in rows}

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        weakest: dict[int, float] = {}
        for score, a, b in sorted(_similar_pairs(rows, threshold), reverse=True):
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
                root = min(ra, rb)
                weakest[root] = min(score, weakest.pop(ra, 1.0), weakest.pop(rb, 1.0))
        clusters: dict[int, list[_Row]] = defaultdict(list)
        for r in rows:
            clusters[find(r.id)].append(r)
        for root, members in sorted(clusters.items()):
            if len(members) < 2:
                continue
            keeper = max(members, key=lambda r: (r.confidence, -r.id))
            others = [m for m in members if m.id != keeper.id]
            tags = normalise_tags([t for m in [keeper, *others] for t in m.tags])
            also = list(keeper.also_from)
            for m in others:
                for source in [m.source, *m.also_from]:
                    if source and source != keeper.source and source not in also:
                        also.append(source)
            conn.execute(
                "UPDATE facts SET confidence = ?, tags = ?, also_from = ? WHERE id = ?",
                (keeper.confidence, json.dumps(list(tags), ensure_ascii=False), json.dumps(also, ensure_ascii=False), keeper.id),
            )
            removed = sorted(m.id for m in others)
            conn.execute(f"DELETE FROM facts WHERE id IN ({','.join('?' * len(removed))})", removed)
            report.merged.append(MergedFacts(keeper.id, tuple(removed), keeper.content, weakest.get(root, 1.0)))
            if keeper.entity_key and keeper.attribute_key:
                touched.add((keeper.entity_key, keeper.attribute_key))
    return touched


def _prune(conn: sqlite3.Connection, prune_below: float, report: ConsolidationReport) -> set[tuple[str, str]]:
    if prune_below <= 0:
        return set()
    # Merging may have deleted a fact that others pointed at; relink before judging states.
    groups = {
        (e, a)
        for e, a in conn.execute(
            "SELECT DISTINCT entity_key, attribute_key FROM facts WHERE superseded_by IS NOT NULL"
        )
    }
    for entity_key, attribute_key in sorted(groups):
        relink(conn, entity_key, attribute_key)
    rows = conn.execute(
        "SELECT o.id, o.content, o.confidence, o.superseded_by, o.entity_key, o.attribute_key FROM facts o "
        "JOIN facts n ON n.id = o.superseded_by WHERE o.confidence < ? AND n.confidence > o.confidence ORDER BY o.id",
        (prune_below,),
    ).fetchall()
    touched: set[tuple[str, str]] = set()
    for fact_id, content, confidence, superseded_by, entity_key, attribute_key in rows:
        report.pruned.append(PrunedFact(fact_id, content, confidence, superseded_by))
        touched.add((entity_key, attribute_key))
    if rows:
        ids = [r[0] for r in rows]
        conn.execute(f"DELETE FROM facts WHERE id IN ({','.join('?' * len(ids))})", ids)
    return touched
