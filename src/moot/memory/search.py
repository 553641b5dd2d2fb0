"""Full-text search over facts: FTS5 with BM25 ranking, and a query builder user text cannot break.

FTS5 has its own query language (``AND``, ``OR``, ``NOT``, ``NEAR``, ``*``, ``^``, column
filters, quotes). A question typed by a person or written by a model must never be read as
that language: ``what's "Norway's" count (AND more)?`` would be a syntax error, and
``-norway`` would be a column filter. :func:`build_match_query` therefore keeps only words,
quotes each one, and joins them with ``OR`` so that BM25 ranks facts by how many of the
question's words they contain and how rare those words are.
"""

from __future__ import annotations

import sqlite3

from moot.memory.facts import STOPWORDS, SearchHit, words
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


def search_facts(
    conn: sqlite3.Connection,
    query: str,
    *,
    limit: int = 10,
    include_superseded: bool = False,
    entity_keys: list[str] | None = None,
) -> list[SearchHit]:
    """Facts matching the query's words, best BM25 score first (scores are positive, higher is better)."""
    match = build_match_query(query)
    if match is None or limit <= 0:
        return []
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    sql = (
        f"SELECT {fact_columns('f')}, bm25(facts_fts, {weights}) AS bm25_rank "
        "FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid WHERE facts_fts MATCH ?"
    )
    params: list[object] = [match]
    if not include_superseded:
        sql += " AND f.superseded_by IS NULL"
    if entity_keys:
        sql += f" AND f.entity_key IN ({','.join('?' * len(entity_keys))})"
        params.extend(entity_keys)
    sql += " ORDER BY bm25_rank, f.id LIMIT ?"
    params.append(int(limit))
    hits: list[SearchHit] = []
    for row in conn.execute(sql, params):
        hits.append(SearchHit(fact=fact_from_row(row[:-1]), score=-float(row[-1])))
    return hits
