"""The knowledge base: what the learning team stores facts in and asks questions of.

>>> with KnowledgeBase.open("olympics") as kb:                      # doctest: +SKIP
...     kb.add_fact(Fact("Norway has 12 golds", entity="Norway", attribute="golds", value="12",
...                      source_date=date(2026, 2, 20)))
...     kb.current("Norway", "golds").value
'12'

Everything here is deterministic and local: no model calls, no network. Writes are
transactions; reads of several queries share one snapshot.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot.errors import MootError
from moot.memory.facts import (
    Episode,
    Fact,
    KnowledgeBaseSummary,
    SearchHit,
    SourceDate,
    SourceInfo,
    StoredFact,
    SupersedesLink,
    coerce_date,
    date_from_text,
    date_to_text,
    normalise_content,
    normalise_key,
    normalise_tags,
    temporal_order_key,
)
from moot.memory.store import (
    EPISODE_COLUMNS,
    Database,
    episode_from_row,
    now_utc,
    resolve_path,
    select_facts,
)
from moot.memory.search import TermFrequencies, search_facts
from moot.memory.supersession import relink

if TYPE_CHECKING:
    from moot.memory.consolidate import ConsolidationReport
    from moot.models.embeddings import Embedder
    from moot.memory.retrieval import Retrieval, Strategy


@dataclass(frozen=True)
class DocumentRecord:
    """The file a source was learned from, and the sha256 of its bytes then."""

    source: str
    path: str
    sha256: str


class KnowledgeBase:
    """A persistent store of facts and episodes in one SQLite file.

    Open with :meth:`open` (a name or a path) and close it, or use it as a context manager.
    Several :class:`KnowledgeBase` objects, in one process or several, may use the same file.
    """

    def __init__(self, path: Path, *, embedder: Embedder | None = None) -> None:
        self._db = Database(path)
        self.embedder = embedder
        """Optional semantic embedder; when set, two-phase retrieval reranks with it too."""
        self._entity_cache: tuple[tuple[int, int], dict[str, str]] | None = None
        self._count_cache: dict[bool, tuple[tuple[int, int], int]] = {}
        self._term_frequencies = TermFrequencies()

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    def open(cls, path_or_name: str | Path, *, embedder: Embedder | None = None) -> KnowledgeBase:
        """Open or create a knowledge base.

        A bare name (``"olympics"``) is ``<moot home>/kb/olympics.sqlite3``; a path is used as
        given, and missing directories are created. A file that is not a moot knowledge base,
        or one written by a newer moot, raises :class:`~moot.errors.MootError`.
        """
        return cls(resolve_path(path_or_name), embedder=embedder)

    @property
    def path(self) -> Path:
        return self._db.path

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"KnowledgeBase({str(self.path)!r})"

    # ------------------------------------------------------------------ episodes

    def add_episode(
        self,
        text: str,
        *,
        source: str = "",
        published: SourceDate | str | None = None,
        summary: str = "",
    ) -> Episode:
        """Store the raw text facts will be extracted from; the same text from the same source is stored once."""
        if not text or not text.strip():
            raise MootError("an episode's text is empty", fix="pass the source text the facts come from")
        published_date = coerce_date(published, what="published date")
        with self._db.transaction() as conn:
            return self._insert_episode(conn, text, " ".join(source.split()), published_date, summary)

    @staticmethod
    def _insert_episode(
        conn: sqlite3.Connection, text: str, source: str, published: SourceDate | None, summary: str = ""
    ) -> Episode:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        row = conn.execute(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE source = ? AND text_sha256 = ?", (source, digest)
        ).fetchone()
        if row is not None:
            return episode_from_row(row)
        cursor = conn.execute(
            "INSERT INTO episodes (source, published, text, text_sha256, summary, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (source, date_to_text(published), text, digest, summary, now_utc().isoformat()),
        )
        row = conn.execute(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?", (cursor.lastrowid,)).fetchone()
        return episode_from_row(row)

    def store_source(
        self,
        source: str,
        passages: Sequence[tuple[str, Sequence[Fact]]],
        *,
        published: SourceDate | str | None = None,
        forget: Iterable[int] = (),
        summary: str | None = None,
        document: DocumentRecord | None = None,
        as_written: str | None = None,
    ) -> list[StoredFact]:
        """Store what was learned from one source in one transaction: all of it, or nothing.

        ``passages`` are the source's texts (stored as episodes) with the facts learned from
        each; ``forget`` names episodes of this source whose text the source no longer holds
        (a file that changed): they and their facts are removed in the same transaction, and
        the histories they were part of are linked again. ``summary`` sets the source summary;
        ``document`` records the file and content hash the source was learned from; ``as_written`` is
        the source's whole text as written (:meth:`source_text`), replacing an earlier one of the
        same source and date (``""`` removes it; ``None`` leaves it as it is).
        """
        source = " ".join(source.split())
        published_date = coerce_date(published, what="published date")
        forget_ids = [int(i) for i in forget]
        ids: list[int] = []
        with self._db.transaction() as conn:
            groups: set[tuple[str, str]] = set()
            if forget_ids:
                marks = ",".join("?" * len(forget_ids))
                stale = conn.execute(
                    f"SELECT id, entity_key, attribute_key FROM facts WHERE episode_id IN ({marks}) AND source = ?",
                    (*forget_ids, source),
                ).fetchall()
                groups.update((e, a) for _, e, a in stale if e and a)
                if stale:
                    conn.execute(f"DELETE FROM facts WHERE id IN ({','.join('?' * len(stale))})", [r[0] for r in stale])
                conn.execute(f"DELETE FROM episodes WHERE id IN ({marks}) AND source = ?", (*forget_ids, source))
            for text, facts in passages:
                episode = self._insert_episode(conn, text, source, published_date)
                for fact in facts:
                    if not isinstance(fact, Fact):
                        raise MootError(f"store_source expects moot.memory.Fact objects, got {type(fact).__name__}",
                                        fix="wrap each statement: Fact(content, ...)")
                    fact_id, group = self._insert(conn, replace(fact, episode_id=episode.id))
                    ids.append(fact_id)
                    if group:
                        groups.add(group)
            for entity_key, attribute_key in sorted(groups):
                relink(conn, entity_key, attribute_key)
            if summary is not None:
                self._set_summary(conn, source, summary)
            if document is not None:
                conn.execute(
                    "INSERT INTO documents (source, path, sha256, learned_at) VALUES (?, ?, ?, ?) ON CONFLICT (source) "
                    "DO UPDATE SET path = excluded.path, sha256 = excluded.sha256, learned_at = excluded.learned_at",
                    (source, document.path, document.sha256, now_utc().isoformat()),
                )
            day = date_to_text(published_date) or ""
            if forget_ids:  # a text no episode of its source and date is left for (a file's new date) goes too
                conn.execute("DELETE FROM source_texts WHERE source = ? AND published NOT IN "
                             "(SELECT COALESCE(published, '') FROM episodes WHERE source = ?)", (source, source))
            if as_written == "":
                conn.execute("DELETE FROM source_texts WHERE source = ? AND published = ?", (source, day))
            elif as_written is not None:
                conn.execute(
                    "INSERT INTO source_texts (source, published, text, updated_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (source, published) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
                    (source, day, as_written, now_utc().isoformat()),
                )
            by_id = {f.id: f for f in select_facts(conn, f"id IN ({','.join('?' * len(ids))})", tuple(ids))} if ids else {}
        return [by_id[i] for i in ids]

    def documents(self) -> list[DocumentRecord]:
        """The files sources were learned from (``moot learn FILE``), by source."""
        with self._db.snapshot() as conn:
            rows = conn.execute("SELECT source, path, sha256 FROM documents ORDER BY source").fetchall()
        return [DocumentRecord(source=r[0], path=r[1], sha256=r[2]) for r in rows]

    def document(self, *, source: str | None = None, path: str | None = None) -> DocumentRecord | None:
        """The file record of a source, or of a file path; ``None`` when there is none."""
        column, value = ("source", " ".join(source.split())) if source is not None else ("path", path)
        with self._db.snapshot() as conn:
            row = conn.execute(f"SELECT source, path, sha256 FROM documents WHERE {column} = ? ORDER BY source LIMIT 1",
                               (value,)).fetchone()
        return DocumentRecord(source=row[0], path=row[1], sha256=row[2]) if row else None

    def source_text(self, source: str, published: SourceDate | str | None = None) -> str | None:
        """The whole text of the source of this name and date as it was given when it was last
        learned, or ``None`` when only its episodes hold it (a file learned by an older moot, a
        source too long to be read whole, or passages stored by hand)."""
        day = date_to_text(coerce_date(published, what="published date")) or ""
        with self._db.snapshot() as conn:
            row = conn.execute("SELECT text FROM source_texts WHERE source = ? AND published = ?",
                               (" ".join(source.split()), day)).fetchone()
        return row[0] if row else None

    def source_texts(self) -> dict[tuple[str, str], str]:
        """Every source's text as written (:meth:`source_text`), by (source, ISO date or ``""``)."""
        with self._db.snapshot() as conn:
            return {(r[0], r[1]): r[2] for r in conn.execute("SELECT source, published, text FROM source_texts")}

    def episode(self, episode_id: int) -> Episode | None:
        with self._db.snapshot() as conn:
            row = conn.execute(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return episode_from_row(row) if row else None

    def episodes(self, *, source: str | None = None) -> list[Episode]:
        with self._db.snapshot() as conn:
            if source is None:
                rows = conn.execute(f"SELECT {EPISODE_COLUMNS} FROM episodes ORDER BY id").fetchall()
            else:
                rows = conn.execute(
                    f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE source = ? ORDER BY id", (source,)
                ).fetchall()
        return [episode_from_row(r) for r in rows]

    # ------------------------------------------------------------------ facts

    def add_fact(self, fact: Fact) -> StoredFact:
        """Store a fact, linking it into its entity/attribute history.

        An exact duplicate (same statement, entity, attribute, value and time) is not stored
        twice: the existing fact comes back with the higher confidence and the union of tags,
        and a new source is remembered in ``also_from``.
        """
        return self.add_facts([fact])[0]

    def add_facts(self, facts: Iterable[Fact]) -> list[StoredFact]:
        """Store many facts in one transaction (all or none), in order."""
        facts = list(facts)
        ids: list[int] = []
        with self._db.transaction() as conn:
            groups: set[tuple[str, str]] = set()
            for fact in facts:
                fact_id, group = self._insert(conn, fact)
                ids.append(fact_id)
                if group:
                    groups.add(group)
            for entity_key, attribute_key in sorted(groups):
                relink(conn, entity_key, attribute_key)
            by_id = {f.id: f for f in select_facts(conn, f"id IN ({','.join('?' * len(ids))})", tuple(ids))} if ids else {}
        return [by_id[i] for i in ids]

    def _insert(self, conn: sqlite3.Connection, fact: Fact) -> tuple[int, tuple[str, str] | None]:
        if not isinstance(fact, Fact):
            raise MootError(f"add_fact expects a moot.memory.Fact, got {type(fact).__name__}", fix="wrap it: Fact(content, ...)")
        source_date = coerce_date(fact.source_date, what="source date")
        source = fact.source
        if fact.episode_id is not None:
            row = conn.execute("SELECT source, published FROM episodes WHERE id = ?", (fact.episode_id,)).fetchone()
            if row is None:
                raise MootError(f"episode {fact.episode_id} does not exist", fix="store the text with add_episode() first")
            # Facts inherit provenance from their episode unless they say otherwise.
            source = source or row[0]
            source_date = source_date if source_date is not None else date_from_text(row[1])
        entity_key = normalise_key(fact.entity)
        attribute_key = normalise_key(fact.attribute)
        content_key = normalise_content(fact.content)
        value_key = normalise_key(fact.value) or content_key
        explicit = fact.temporal_index is not None
        duplicate = self._find_duplicate(conn, content_key, entity_key, attribute_key, value_key, fact.temporal_index, source_date)
        if duplicate is not None:
            self._merge_into(conn, duplicate, fact.confidence, fact.tags, source)
            return duplicate, None
        learned_at = now_utc()
        order_key = temporal_order_key(fact.temporal_index, source_date, learned_at)
        if not explicit and source_date is None:
            # Undated facts are "true as of learning"; keep them strictly ordered even when
            # learned within the same microsecond, so a quick correction still supersedes.
            last = conn.execute(
                "SELECT MAX(temporal_index) FROM facts WHERE temporal_explicit = 0 AND source_date IS NULL"
            ).fetchone()[0]
            if last is not None and last >= order_key:
                order_key = last + 1
        cursor = conn.execute(
            "INSERT INTO facts (content, concept, entity, attribute, value, confidence, tags, source, "
            "source_date, temporal_index, temporal_explicit, episode_id, created_at, entity_key, "
            "attribute_key, value_key, content_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                fact.content,
                fact.concept,
                fact.entity,
                fact.attribute,
                fact.value,
                fact.confidence,
                json.dumps(list(fact.tags), ensure_ascii=False),
                source,
                date_to_text(source_date),
                order_key,
                int(explicit),
                fact.episode_id,
                learned_at.isoformat(),
                entity_key,
                attribute_key,
                value_key,
                content_key,
            ),
        )
        assert cursor.lastrowid is not None
        group = (entity_key, attribute_key) if entity_key and attribute_key else None
        return cursor.lastrowid, group

    @staticmethod
    def _find_duplicate(
        conn: sqlite3.Connection,
        content_key: str,
        entity_key: str,
        attribute_key: str,
        value_key: str,
        temporal_index: int | None,
        source_date: SourceDate | None,
    ) -> int | None:
        if temporal_index is not None:
            time_clause, time_params = "temporal_explicit = 1 AND temporal_index = ?", (temporal_index,)
        elif source_date is not None:
            time_clause, time_params = "temporal_explicit = 0 AND source_date = ?", (date_to_text(source_date),)
        else:
            time_clause, time_params = "temporal_explicit = 0 AND source_date IS NULL", ()
        row = conn.execute(
            "SELECT id FROM facts WHERE content_key = ? AND entity_key = ? AND attribute_key = ? "
            f"AND value_key = ? AND {time_clause} ORDER BY id LIMIT 1",
            (content_key, entity_key, attribute_key, value_key, *time_params),
        ).fetchone()
        return row[0] if row else None

    @staticmethod
    def _merge_into(
        conn: sqlite3.Connection, fact_id: int, confidence: float, tags: Sequence[str], source: str
    ) -> None:
        """Fold a duplicate's evidence into an existing fact (used by add_fact and consolidation)."""
        old_conf, old_tags, old_source, old_also = conn.execute(
            "SELECT confidence, tags, source, also_from FROM facts WHERE id = ?", (fact_id,)
        ).fetchone()
        merged_tags = normalise_tags([*json.loads(old_tags), *tags])
        also = list(json.loads(old_also))
        if source and source != old_source and source not in also:
            also.append(source)
        conn.execute(
            "UPDATE facts SET confidence = ?, tags = ?, also_from = ? WHERE id = ?",
            (
                max(old_conf, confidence),
                json.dumps(list(merged_tags), ensure_ascii=False),
                json.dumps(also, ensure_ascii=False),
                fact_id,
            ),
        )

    def get(self, fact_id: int) -> StoredFact | None:
        """The fact with this id, or ``None``."""
        with self._db.snapshot() as conn:
            found = select_facts(conn, "id = ?", (fact_id,))
        return found[0] if found else None

    def facts(
        self,
        *,
        entity: str | None = None,
        source: str | None = None,
        include_superseded: bool = False,
        limit: int | None = None,
    ) -> list[StoredFact]:
        """All facts (current only unless asked), optionally of one entity or source, oldest first."""
        clauses: list[str] = []
        params: list[Any] = []
        if entity is not None:
            clauses.append("entity_key = ?")
            params.append(normalise_key(entity))
        if source is not None:
            clauses.append("source = ?")
            params.append(source)
        if not include_superseded:
            clauses.append("superseded_by IS NULL")
        order = "temporal_index, id"
        if limit is not None:
            order += f" LIMIT {int(limit)}"
        with self._db.snapshot() as conn:
            return select_facts(conn, " AND ".join(clauses), tuple(params), order=order)

    def count(self, *, include_superseded: bool = True) -> int:
        """How many facts are stored (or only current ones). Cached until the file changes:
        retrieval asks on every question, and COUNT(*) over 100 000 rows is not free."""
        token = self._db.state_token()
        cached = self._count_cache.get(include_superseded)
        if cached is not None and cached[0] == token:
            return cached[1]
        where = "" if include_superseded else " WHERE superseded_by IS NULL"
        with self._db.snapshot() as conn:
            found = int(conn.execute(f"SELECT COUNT(*) FROM facts{where}").fetchone()[0])
        self._count_cache[include_superseded] = (token, found)
        return found

    def term_frequencies(self, conn: sqlite3.Connection) -> TermFrequencies:
        """Cached term counts for :func:`~moot.memory.search.search_facts` on this file's current state."""
        self._term_frequencies.refresh(conn, self._db.state_token())
        return self._term_frequencies

    def history(self, entity: str, attribute: str) -> list[StoredFact]:
        """Every value the entity's attribute has had, oldest first, superseded ones included."""
        with self._db.snapshot() as conn:
            return select_facts(
                conn,
                "entity_key = ? AND attribute_key = ?",
                (normalise_key(entity), normalise_key(attribute)),
                order="temporal_index, id",
            )

    def current(self, entity: str, attribute: str) -> StoredFact | None:
        """The latest value of the entity's attribute, or ``None`` if nothing is known.

        When sources conflict (same time, different values) the most confident one is returned;
        :meth:`conflicts` lists them all.
        """
        with self._db.snapshot() as conn:
            found = select_facts(
                conn,
                "entity_key = ? AND attribute_key = ? AND superseded_by IS NULL",
                (normalise_key(entity), normalise_key(attribute)),
                order="temporal_index DESC, confidence DESC, id DESC LIMIT 1",
            )
        return found[0] if found else None

    def links(self, *, entity: str | None = None) -> list[SupersedesLink]:
        """SUPERSEDES links (newer → older), optionally for one entity."""
        sql = (
            "SELECT s.newer_id, s.older_id, n.entity, n.attribute FROM supersedes s "
            "JOIN facts n ON n.id = s.newer_id"
        )
        params: tuple[Any, ...] = ()
        if entity is not None:
            sql += " WHERE n.entity_key = ?"
            params = (normalise_key(entity),)
        with self._db.snapshot() as conn:
            rows = conn.execute(sql + " ORDER BY s.older_id, s.newer_id", params).fetchall()
        return [SupersedesLink(*row) for row in rows]

    def conflicts(self) -> list[list[StoredFact]]:
        """Groups of current facts that disagree: same entity and attribute, different values, none newer."""
        with self._db.snapshot() as conn:
            groups = conn.execute(
                "SELECT entity_key, attribute_key FROM facts WHERE superseded_by IS NULL "
                "AND entity_key != '' AND attribute_key != '' GROUP BY entity_key, attribute_key "
                "HAVING COUNT(DISTINCT value_key) > 1 ORDER BY entity_key, attribute_key"
            ).fetchall()
            return [
                select_facts(
                    conn, "entity_key = ? AND attribute_key = ? AND superseded_by IS NULL", tuple(g), order="id"
                )
                for g in groups
            ]

    def entities(self) -> dict[str, str]:
        """Known entities: normalised key → the name as first written. Cached until the file changes."""
        token = self._db.state_token()
        if self._entity_cache is not None and self._entity_cache[0] == token:
            return self._entity_cache[1]
        with self._db.snapshot() as conn:
            rows = conn.execute(
                "SELECT entity_key, MIN(entity) FROM facts WHERE entity_key != '' GROUP BY entity_key"
            ).fetchall()
        names = {key: name for key, name in rows}
        self._entity_cache = (token, names)
        return names

    # ------------------------------------------------------------------ sources and summary

    def set_source_summary(self, source: str, text: str) -> None:
        """Remember a short summary of a source (written by the learning step)."""
        with self._db.transaction() as conn:
            self._set_summary(conn, source, text)

    @staticmethod
    def _set_summary(conn: sqlite3.Connection, source: str, text: str) -> None:
        conn.execute(
            "INSERT INTO source_summaries (source, summary, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (source) DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at",
            (source, text.strip(), now_utc().isoformat()),
        )

    def sources(self) -> list[SourceInfo]:
        """Every source that gave a fact or an episode, with counts, dates and summary."""
        with self._db.snapshot() as conn:
            rows = conn.execute(
                """
                WITH names AS (
                    SELECT source FROM facts UNION SELECT source FROM episodes
                    UNION SELECT source FROM source_summaries
                )
                SELECT n.source,
                       (SELECT COUNT(*) FROM facts f WHERE f.source = n.source),
                       (SELECT COUNT(*) FROM episodes e WHERE e.source = n.source),
                       (SELECT MIN(d) FROM (SELECT source_date d FROM facts WHERE source = n.source
                                            UNION ALL SELECT published FROM episodes WHERE source = n.source)),
                       (SELECT MAX(d) FROM (SELECT source_date d FROM facts WHERE source = n.source
                                            UNION ALL SELECT published FROM episodes WHERE source = n.source)),
                       COALESCE((SELECT summary FROM source_summaries s WHERE s.source = n.source), '')
                FROM names n WHERE n.source != '' ORDER BY n.source
                """
            ).fetchall()
        return [
            SourceInfo(source, facts, episodes, date_from_text(first), date_from_text(last), summary)
            for source, facts, episodes, first, last, summary in rows
        ]

    def summary(self, *, top: int = 20) -> KnowledgeBaseSummary:
        """Counts, the main entities and concepts, sources and the date range."""
        with self._db.snapshot() as conn:
            total, current = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(superseded_by IS NULL), 0) FROM facts"
            ).fetchone()
            episodes = conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
            links = conn.execute("SELECT COUNT(*) FROM supersedes").fetchone()[0]
            entities = conn.execute(
                "SELECT MIN(entity), COUNT(*) c FROM facts WHERE entity_key != '' AND superseded_by IS NULL "
                "GROUP BY entity_key ORDER BY c DESC, MIN(entity) LIMIT ?",
                (top,),
            ).fetchall()
            concepts = conn.execute(
                "SELECT concept, COUNT(*) c FROM facts WHERE concept != '' AND superseded_by IS NULL "
                "GROUP BY concept ORDER BY c DESC, concept LIMIT ?",
                (top,),
            ).fetchall()
            sources = [
                r[0]
                for r in conn.execute(
                    "SELECT source FROM facts WHERE source != '' UNION SELECT source FROM episodes WHERE source != '' "
                    "ORDER BY 1"
                )
            ]
            earliest, latest = conn.execute(
                "SELECT MIN(d), MAX(d) FROM (SELECT source_date d FROM facts UNION ALL SELECT published FROM episodes)"
            ).fetchone()
        return KnowledgeBaseSummary(
            path=str(self.path),
            facts=total,
            current_facts=current,
            superseded_facts=total - current,
            episodes=episodes,
            supersedes_links=links,
            entities=[(name, count) for name, count in entities],
            concepts=[(name, count) for name, count in concepts],
            sources=sources,
            earliest=date_from_text(earliest),
            latest=date_from_text(latest),
        )

    # ------------------------------------------------------------------ search and retrieval

    def search(self, query: str, *, limit: int = 10, include_superseded: bool = False) -> list[SearchHit]:
        """Full-text search (FTS5, BM25) over content, concept, entity and tags; best first.

        Any user text is safe: it is reduced to quoted words, so quotes, parentheses and
        operators (``AND``, ``NEAR``, ``*``, ``-``) never raise.
        """
        with self._db.snapshot() as conn:
            return search_facts(
                conn, query, limit=limit, include_superseded=include_superseded, frequencies=self.term_frequencies(conn)
            )

    def retrieve(self, question: str, *, limit: int = 20, strategy: Strategy | str | None = None) -> Retrieval:
        """Facts for answering a question, with the strategy chosen from the question's wording.

        See :mod:`moot.memory.retrieval` for the strategies; ``strategy=`` forces one.
        """
        from moot.memory.retrieval import retrieve

        return retrieve(self, question, limit=limit, strategy=strategy)

    def consolidate(
        self, *, similarity: float = 0.9, prune_below: float = 0.3, dry_run: bool = False
    ) -> ConsolidationReport:
        """Merge near-duplicates and prune weak superseded facts; see :func:`moot.memory.consolidate`."""
        from moot.memory.consolidate import consolidate

        return consolidate(self, similarity=similarity, prune_below=prune_below, dry_run=dry_run)

    # ------------------------------------------------------------------ for sibling modules

    @property
    def database(self) -> Database:
        """The underlying connection wrapper (for consolidation, retrieval and embeddings)."""
        return self._db
