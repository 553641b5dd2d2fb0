"""Full-text search over facts: FTS5 with BM25 ranking, and a query builder user text cannot break.

FTS5 has its own query language (``AND``, ``OR``, ``NOT``, ``NEAR``, ``*``, ``^``, column
filters, quotes). A question typed by a person or written by a model must never be read as
that language: ``what's "Norway's" count (AND more)?`` would be a syntax error, and
``-norway`` would be a column filter. :func:`build_match_query` therefore keeps only words,
quotes each one, and joins them with ``OR`` so that BM25 ranks facts by how many of the
question's words they contain and how rare those words are.
"""

from __future__ import annotations

import math
import sqlite3

from moot.memory.facts import STOPWORDS, SearchHit, content_tokens, words
from moot.memory.store import fact_columns, fact_from_row

MAX_QUERY_TERMS = 32
"""More words than this adds cost and no precision; long questions keep their first 32 terms."""

BM25_WEIGHTS = (1.0, 0.75, 1.5, 0.5)
"""Column weights for content, concept, entity, tags: naming the entity counts most."""


def query_terms(text: str, *, max_terms: int = MAX_QUERY_TERMS) -> list[str]:
    """The distinct searchable words of a text, stop words dropped (unless nothing else is left)."""
    tokens = words(text)
    meaningful = [t for t in tokens if t not in STOPWORDS] or tokens
    seen: dict[str, None] = {}
    for token in meaningful:
        seen.setdefault(token, None)
        if len(seen) >= max_terms:
            break
    return list(seen)


def build_match_query(text: str, *, max_terms: int = MAX_QUERY_TERMS) -> str | None:
    """An FTS5 MATCH expression for arbitrary text, or ``None`` when it has no words.

    Every term is a double-quoted string (``\\w+`` never contains a quote), so operators,
    parentheses and column filters in the input are inert.
    """
    terms = query_terms(text, max_terms=max_terms)
    if not terms:
        return None
    return " OR ".join(f'"{term}"' for term in terms)


RARE_SHARE = 0.05
"""On a large knowledge base a term found in more than this share of facts is *common*."""

LARGE_KB_FACTS = 20_000
"""Below this many facts every search ranks all matches exactly; above it, see :class:`TermFrequencies`."""

TIE_MARGIN = 20
"""Rare-term hits fetched beyond ``limit``, so common terms can lift a tied fact into the result."""

OVERFETCH = 10
"""Candidates ranked inside FTS5 per requested hit (at least 100) before filters and rerank."""


class TermFrequencies:
    """Document frequencies of query terms, so a large knowledge base is searched by its rare terms.

    BM25 in FTS5 costs time per *matching* row. An OR query with one word that half the facts
    contain ("event", "team") makes SQLite score tens of thousands of rows to return ten. Such a
    word also carries almost no weight in BM25 (its IDF is near zero), so on a knowledge base of
    more than :data:`LARGE_KB_FACTS` facts, :func:`search_facts` matches only the question's rare
    terms (those in at most :data:`RARE_SHARE` of the facts), ranks the best candidates inside
    FTS5, and uses the common terms to break ties. When that finds fewer hits than asked for, it
    falls back to the exact query over every term, so a search never returns less than before.

    Frequencies are counted with a cap (a term is either rare with an exact count, or common),
    which keeps each count under a millisecond, and cached until the file changes: pass
    :meth:`Database.state_token` to :meth:`refresh` before a search.
    """

    def __init__(self) -> None:
        self._token: object = None
        self._total = 0
        self._counts: dict[str, int] = {}

    def refresh(self, conn: sqlite3.Connection, token: object) -> None:
        if token != self._token:
            self._token = token
            self._counts = {}
            self._total = int(conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0])

    @property
    def total(self) -> int:
        return self._total

    @property
    def cap(self) -> int:
        return max(1, int(self._total * RARE_SHARE))

    def count(self, conn: sqlite3.Connection, term: str) -> int:
        """Facts containing the term, or ``cap + 1`` when it is common."""
        found = self._counts.get(term)
        if found is None:
            found = int(
                conn.execute(
                    "SELECT COUNT(*) FROM (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? LIMIT ?)",
                    (f'"{term}"', self.cap + 1),
                ).fetchone()[0]
            )
            self._counts[term] = found
        return found


def search_facts(
    conn: sqlite3.Connection,
    query: str,
    *,
    limit: int = 10,
    include_superseded: bool = False,
    entity_keys: list[str] | None = None,
    frequencies: TermFrequencies | None = None,
) -> list[SearchHit]:
    """Facts matching the query's words, best BM25 score first (scores are positive, higher is better).

    With ``frequencies`` (refreshed for this connection's state) a large knowledge base is
    searched by its rare terms first; see :class:`TermFrequencies`.
    """
    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    if frequencies is not None and frequencies.total > LARGE_KB_FACTS:
        counts = {t: frequencies.count(conn, t) for t in terms}
        rare = [t for t in terms if counts[t] <= frequencies.cap]
        common = [t for t in terms if counts[t] > frequencies.cap]
        if rare and common:
            hits = _ranked(
                conn, rare, limit=limit + TIE_MARGIN, include_superseded=include_superseded, entity_keys=entity_keys,
                candidates=max(limit * OVERFETCH, 100),
            )
            if len(hits) >= limit:
                return _break_ties(hits, common, counts, frequencies.total)[:limit]
    return _ranked(conn, terms, limit=limit, include_superseded=include_superseded, entity_keys=entity_keys)


def _ranked(
    conn: sqlite3.Connection,
    terms: list[str],
    *,
    limit: int,
    include_superseded: bool,
    entity_keys: list[str] | None,
    candidates: int | None = None,
) -> list[SearchHit]:
    """BM25 over every fact matching any term, best ``limit`` first; with ``candidates``, only the
    best that many are ranked inside FTS5 (a subquery) before the filters are applied."""
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    match = " OR ".join(f'"{term}"' for term in terms)
    params: list[object] = [match]
    if candidates is None:
        sql = (
            f"SELECT {fact_columns('f')}, bm25(facts_fts, {weights}) AS bm25_rank "
            "FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid WHERE facts_fts MATCH ?"
        )
    else:
        sql = (
            f"SELECT {fact_columns('f')}, s.bm25_rank FROM (SELECT rowid AS id, bm25(facts_fts, {weights}) "
            "AS bm25_rank FROM facts_fts WHERE facts_fts MATCH ? ORDER BY bm25_rank LIMIT ?) s "
            "JOIN facts f ON f.id = s.id WHERE 1"
        )
        params.append(int(candidates))
    if not include_superseded:
        sql += " AND f.superseded_by IS NULL"
    if entity_keys:
        sql += f" AND f.entity_key IN ({','.join('?' * len(entity_keys))})"
        params.extend(entity_keys)
    sql += " ORDER BY bm25_rank, f.id LIMIT ?"
    params.append(int(limit))
    return [SearchHit(fact=fact_from_row(row[:-1]), score=-float(row[-1])) for row in conn.execute(sql, params)]


def _break_ties(hits: list[SearchHit], common: list[str], counts: dict[str, int], total: int) -> list[SearchHit]:
    """Add each common term's IDF to the facts that contain it, so among equal rare-term scores the
    fact sharing more of the question's words ranks first (as the full BM25 query would have it)."""
    weights = {word: math.log(total / max(counts[t], 1)) for t in common for word in content_tokens(t)}

    def score(hit: SearchHit) -> float:
        fact = hit.fact
        present = set(words(f"{fact.content} {fact.concept} {fact.entity} {' '.join(fact.tags)}"))
        # Plurals: "teams" in the question, "team" in the fact (FTS folds both with Porter).
        present |= {w[:-1] for w in present if w.endswith("s")}
        return hit.score + sum(w for word, w in weights.items() if word in present)

    rescored = [SearchHit(fact=h.fact, score=score(h)) for h in hits]
    return sorted(rescored, key=lambda h: (-h.score, h.fact.id or 0))
