"""Memory: a persistent, searchable store of facts learned from content.

One SQLite file per knowledge base (``<moot home>/kb/<name>.sqlite3``, or any path), with
FTS5/BM25 search, SUPERSEDES links that keep the history of changing values, consolidation,
and retrieval strategies chosen from the question. Deterministic and offline: no model calls.
Semantic embeddings are optional (``pip install 'moot[embeddings]'``); lexical retrieval
works alone. See ``docs/memory.md``.
"""

from __future__ import annotations

from moot.memory.consolidate import ConsolidationReport, MergedFacts, PrunedFact, consolidate
from moot.models.embeddings import Embedder, load_default_embedder
from moot.memory.facts import (
    Episode,
    Fact,
    KnowledgeBaseSummary,
    SearchHit,
    SourceInfo,
    StoredFact,
    SupersedesLink,
)
from moot.memory.knowledge_base import DocumentRecord, KnowledgeBase
from moot.memory.retrieval import FactGroup, Retrieval, Strategy, StrategyChoice, choose_strategy
from moot.memory.search import build_match_query
from moot.memory.store import SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "ConsolidationReport",
    "DocumentRecord",
    "Embedder",
    "Episode",
    "Fact",
    "FactGroup",
    "KnowledgeBase",
    "KnowledgeBaseSummary",
    "MergedFacts",
    "PrunedFact",
    "Retrieval",
    "SearchHit",
    "SourceInfo",
    "StoredFact",
    "Strategy",
    "StrategyChoice",
    "SupersedesLink",
    "build_match_query",
    "choose_strategy",
    "consolidate",
    "load_default_embedder",
]
