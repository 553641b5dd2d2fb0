"""The SQLite file under a knowledge base: schema, versioning, transactions, row mapping.

One file per knowledge base. WAL mode and a busy timeout let several processes (a learning run
and ``moot memory search`` in another terminal) use the same file; every write runs in a
``BEGIN IMMEDIATE`` transaction, so a writer takes the write lock before it reads what it is
about to change and two writers never interleave half-done supersession updates.

The file marks itself with a ``meta`` row (``format = moot-knowledge-base``) and the schema
version in ``PRAGMA user_version``; a file without the mark, or from a newer moot, is refused
with a one-line :class:`~moot.errors.MootError` instead of being silently modified.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path

from moot.errors import MootError
from moot.memory.facts import Episode, StoredFact, date_from_text

SCHEMA_VERSION = 4
FORMAT_MARK = "moot-knowledge-base"
BUSY_TIMEOUT_S = 10.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")

_SCHEMA_V1 = """
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE episodes (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL DEFAULT '',
    published TEXT,
    text TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    UNIQUE (source, text_sha256)
);
CREATE TABLE facts (
    id INTEGER PRIMARY KEY,
    content TEXT NOT NULL,
    concept TEXT NOT NULL DEFAULT '',
    entity TEXT NOT NULL DEFAULT '',
    attribute TEXT NOT NULL DEFAULT '',
    value TEXT NOT NULL DEFAULT '',
    confidence REAL NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    source TEXT NOT NULL DEFAULT '',
    source_date TEXT,
    temporal_index INTEGER NOT NULL,
    temporal_explicit INTEGER NOT NULL,
    episode_id INTEGER REFERENCES episodes (id) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    entity_key TEXT NOT NULL,
    attribute_key TEXT NOT NULL,
    value_key TEXT NOT NULL,
    content_key TEXT NOT NULL,
    superseded_by INTEGER,
    also_from TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX facts_by_entity ON facts (entity_key, attribute_key, temporal_index);
CREATE INDEX facts_by_content ON facts (content_key);
CREATE INDEX facts_by_time ON facts (temporal_index);
CREATE INDEX facts_by_source ON facts (source);
CREATE INDEX facts_by_concept ON facts (concept);
CREATE INDEX facts_superseded ON facts (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX facts_undated ON facts (temporal_index)
    WHERE temporal_explicit = 0 AND source_date IS NULL;
CREATE TABLE supersedes (
    newer_id INTEGER NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    older_id INTEGER NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (newer_id, older_id)
);
CREATE INDEX supersedes_by_older ON supersedes (older_id);
CREATE TABLE source_summaries (
    source TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE fact_embeddings (
    fact_id INTEGER NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (fact_id, model)
);
CREATE VIRTUAL TABLE facts_fts USING fts5 (
    content, concept, entity, tags,
    content = 'facts', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts (rowid, content, concept, entity, tags)
    VALUES (new.id, new.content, new.concept, new.entity, new.tags);
END;
CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts (facts_fts, rowid, content, concept, entity, tags)
    VALUES ('delete', old.id, old.content, old.concept, old.entity, old.tags);
END;
CREATE TRIGGER facts_fts_update AFTER UPDATE OF content, concept, entity, tags ON facts BEGIN
    INSERT INTO facts_fts (facts_fts, rowid, content, concept, entity, tags)
    VALUES ('delete', old.id, old.content, old.concept, old.entity, old.tags);
    INSERT INTO facts_fts (rowid, content, concept, entity, tags)
    VALUES (new.id, new.content, new.concept, new.entity, new.tags);
END;
"""

def _v1_to_v2(conn: sqlite3.Connection) -> None:
    # An entity's current facts, newest first, without visiting its superseded history: entity
    # retrieval asks for exactly that on every question, and an entity can have thousands.
    conn.execute(
        "CREATE INDEX IF NOT EXISTS facts_current_by_entity ON facts (entity_key, temporal_index, id) "
        "WHERE superseded_by IS NULL"
    )


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    # Which file a source was learned from, and its content hash: a re-run skips an unchanged
    # file without reading it into chunks, and a changed file may forget only its own old text.
    conn.execute(
        "CREATE TABLE IF NOT EXISTS documents (source TEXT PRIMARY KEY, path TEXT NOT NULL, "
        "sha256 TEXT NOT NULL, learned_at TEXT NOT NULL)"
    )
    conn.execute("CREATE INDEX IF NOT EXISTS documents_by_path ON documents (path)")


def _v3_to_v4(conn: sqlite3.Connection) -> None:
    # Each source's text as it was given, by source and date (two issues of one newsletter are two
    # texts): the episodes hold it cut into units and joined again, which loses what a reader goes
    # by (headings, a bold line before its answer, list marks).
    conn.execute("CREATE TABLE IF NOT EXISTS source_texts (source TEXT NOT NULL, published TEXT NOT NULL DEFAULT '', "
                 "text TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (source, published))")


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4}
"""``MIGRATIONS[v]`` upgrades a version-``v`` file to ``v + 1`` inside the opening transaction.

A new file is created at version 1 and upgraded like any older file, so one path builds both.
"""

FACT_COLUMNS = (
    "id, content, concept, entity, attribute, value, confidence, tags, source, source_date, "
    "temporal_index, episode_id, created_at, superseded_by, also_from"
)



def fact_columns(alias: str) -> str:
    """:data:`FACT_COLUMNS` qualified by a table alias, for joins (FTS shares column names)."""
    return ", ".join(f"{alias}.{name.strip()}" for name in FACT_COLUMNS.split(","))


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def resolve_path(path_or_name: str | Path) -> Path:
    """A bare name is a knowledge base under ``<moot home>/kb/``; anything path-like is a path."""
    if isinstance(path_or_name, Path):
        return path_or_name.expanduser()
    text = str(path_or_name).strip()
    if not text:
        raise MootError("a knowledge base needs a name or a path", fix="pass a name like 'olympics' or a file path")
    looks_like_path = "/" in text or "\\" in text or text.startswith(("~", ".")) or text.endswith(
        (".sqlite3", ".sqlite", ".db")
    )
    if looks_like_path:
        return Path(text).expanduser()
    if not _NAME.match(text):
        raise MootError(
            f"{text!r} is not a usable knowledge-base name",
            fix="use letters, digits, '.', '_' or '-', or pass a file path",
        )
    from moot import config

    return config.home() / "kb" / f"{text}.sqlite3"


def _not_a_kb(path: Path, why: str) -> MootError:
    return MootError(
        f"{path} is not a moot knowledge base ({why})",
        fix="pass the path of a knowledge base or a new file name, or move that file away",
    )


class Database:
    """One connection to a knowledge-base file, with a lock so threads can share it."""

    def __init__(self, path: Path) -> None:
        if path.is_dir():
            raise MootError(f"{path} is a directory", fix="pass a file path such as kb.sqlite3 inside it")
        from moot import config

        if path.parent == config.home() / "kb":  # a name: the home is the setting to change
            config.make_parent_folder(path, what="the knowledge base", setting="MOOT_HOME")
        else:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise MootError(f"cannot create the folder for the knowledge base at {path.parent}: {exc.strerror or exc}",
                                fix="pass --kb a name, or a file path in a folder you can write") from None
        self.path = path
        self.lock = threading.RLock()
        self.writes = 0
        """Commits made through this connection (for caches: SQLite's data_version ignores them)."""
        try:
            self.conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise MootError(f"cannot open knowledge base {path}: {exc}", fix="check the path and its permissions") from exc
        try:
            self._prepare()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise MootError(
                    f"knowledge base {path} is locked by another process",
                    fix="wait for the other writer to finish and retry",
                ) from exc
            if isinstance(exc, sqlite3.DatabaseError) and "malformed" in str(exc).lower():
                raise damaged_error(path, exc) from exc
            raise _not_a_kb(path, str(exc)) from exc
        except BaseException:
            self.conn.close()
            raise

    def _prepare(self) -> None:
        conn = self.conn
        # Reading the schema first turns "file is not a database" into an error before any write.
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if tables:
            if "meta" not in tables:
                raise _not_a_kb(self.path, "an SQLite file without moot's tables")
            mark = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if mark is None or mark[0] != FORMAT_MARK:
                raise _not_a_kb(self.path, "an SQLite file without moot's format mark")
            if version > SCHEMA_VERSION:
                raise MootError(
                    f"knowledge base {self.path} was written by a newer moot (schema {version}, this moot reads {SCHEMA_VERSION})",
                    fix="upgrade moot (pip install -U moot)",
                )
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if tables and version == SCHEMA_VERSION:
            return
        with self.transaction():
            # Re-check inside the write lock: another process may have created it meanwhile.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0 and not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
                for statement in _split_script(_SCHEMA_V1):
                    conn.execute(statement)
                conn.execute("INSERT INTO meta (key, value) VALUES ('format', ?)", (FORMAT_MARK,))
                conn.execute("INSERT INTO meta (key, value) VALUES ('created_at', ?)", (now_utc().isoformat(),))
                version = 1
            while version < SCHEMA_VERSION:
                MIGRATIONS[version](conn)
                version += 1
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: the write lock is taken up front (``BEGIN IMMEDIATE``)."""
        with self.lock, self._damage_is_one_line():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                if self.conn.in_transaction:
                    with suppress(sqlite3.Error):  # a damaged file may refuse even this
                        self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
            self.writes += 1

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction, so several queries see one consistent state of the file."""
        with self.lock, self._damage_is_one_line():
            if self.conn.in_transaction:  # nested inside a write: already consistent
                yield self.conn
                return
            self.conn.execute("BEGIN")
            try:
                yield self.conn
            finally:
                if self.conn.in_transaction:
                    with suppress(sqlite3.Error):
                        self.conn.execute("COMMIT")

    @contextmanager
    def _damage_is_one_line(self) -> Iterator[None]:
        """A file damaged inside (a page overwritten, a disk error) passes the checks at open
        and fails on the first query that reads the damaged page: say so in one line, with
        what to do, instead of an sqlite3 traceback from whichever command got there first."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            raise damaged_error(self.path, exc) from exc

    def state_token(self) -> tuple[int, int]:
        """Changes whenever any connection (this one or another process) commits."""
        with self.lock, self._damage_is_one_line():
            return (self.conn.execute("PRAGMA data_version").fetchone()[0], self.writes)


def is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Whether an SQLite error means the file's content is damaged (not busy, not a bad query)."""
    text = str(exc).lower()
    return type(exc) is sqlite3.DatabaseError or "malformed" in text or "not a database" in text or "corrupt" in text


def damaged_error(path: Path, exc: BaseException) -> MootError:
    rescued = path.with_name(f"{path.stem}-rescued{path.suffix or '.sqlite3'}")
    return MootError(
        f"knowledge base {path} is damaged ({exc})",
        fix=f"restore it from a backup, or rescue what is readable: sqlite3 {path} .recover | sqlite3 {rescued}",
    )


def _split_script(script: str) -> list[str]:
    # Triggers contain ';' inside BEGIN…END, so split on statement ends at line ends only.
    statements: list[str] = []
    buffer: list[str] = []
    for line in script.strip().splitlines():
        buffer.append(line)
        text = "\n".join(buffer).strip()
        if text.endswith(";") and sqlite3.complete_statement(text):
            statements.append(text)
            buffer = []
    if "".join(buffer).strip():
        statements.append("\n".join(buffer))
    return statements


_STORED_FACT_FIELDS = tuple(name.strip() for name in FACT_COLUMNS.split(","))
"""The :class:`StoredFact` attribute each column of :data:`FACT_COLUMNS` fills (same names)."""


def _json_tuple(text: str | None) -> tuple[str, ...]:
    return () if not text or text == "[]" else tuple(json.loads(text))


def fact_from_row(row: sqlite3.Row | tuple) -> StoredFact:  # type: ignore[type-arg]
    """Build a :class:`StoredFact` from a row selected with :data:`FACT_COLUMNS`.

    Rows were validated and normalised by :class:`Fact` when they were written, so this skips
    ``__post_init__``: retrieval converts hundreds of rows per question and the checks were half
    of that cost. Only the stored encodings are decoded (JSON lists, ISO dates).
    """
    values = list(row)
    values[6] = float(values[6])
    values[7] = _json_tuple(values[7])
    values[9] = date_from_text(values[9])
    values[12] = datetime.fromisoformat(values[12])
    values[14] = _json_tuple(values[14])
    fact = object.__new__(StoredFact)
    for name, value in zip(_STORED_FACT_FIELDS, values, strict=True):
        object.__setattr__(fact, name, value)
    return fact


EPISODE_COLUMNS = "id, source, published, text, summary, created_at"


def episode_from_row(row: sqlite3.Row | tuple) -> Episode:  # type: ignore[type-arg]
    episode_id, source, published, text, summary, created_at = tuple(row)
    return Episode(
        id=episode_id,
        source=source,
        published=date_from_text(published),
        text=text,
        summary=summary,
        created_at=datetime.fromisoformat(created_at),
    )


def select_facts(
    conn: sqlite3.Connection, where: str = "", params: tuple[object, ...] = (), *, order: str = "id"
) -> list[StoredFact]:
    """Facts matching a SQL condition on the ``facts`` table, as :class:`StoredFact`."""
    sql = f"SELECT {FACT_COLUMNS} FROM facts"
    if where:
        sql += f" WHERE {where}"
    sql += f" ORDER BY {order}"
    return [fact_from_row(row) for row in conn.execute(sql, params)]
