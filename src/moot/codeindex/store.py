"""The SQLite file under a code index: schema, where it lives, and refusing a corrupt file clearly.

One file per indexed root. By default it lives in the moot home, not in the repository: the
repository may be read-only (site-packages), and an index inside it would index itself. WAL
mode lets a research run read while ``moot index`` updates in another terminal.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

from moot import config
from moot.errors import MootError

SCHEMA_VERSION = 9  # 9: an unnamed `module.exports = function` is named after its module; 8: JS functions assigned to a name (`A.prototype.m = function`, `exports.f = …`, `{ m: function }`) are definitions, and a bundle of a package's own lib/ is left out; 7: calls of a private method (`this.#next()`) are recorded; 6: minified scripts are no longer indexed (5: nor files holding credentials); older indexes are rebuilt
FORMAT_MARK = "moot-code-index"
BUSY_TIMEOUT_S = 10.0

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    language TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    module TEXT NOT NULL DEFAULT '',
    docstring TEXT NOT NULL DEFAULT '',
    seen INTEGER NOT NULL DEFAULT 0  -- the generation of the last build that found the file
);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text TEXT NOT NULL,
    line_map TEXT NOT NULL DEFAULT ''  -- JSON [[text index, file line], ...] where the text skips lines
);
CREATE INDEX chunks_by_file ON chunks (file_id);
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    name, path, body,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE symbols (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    kind TEXT NOT NULL,
    top_level INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    signature TEXT NOT NULL,
    docstring TEXT NOT NULL
);
CREATE INDEX symbols_by_file ON symbols (file_id);
CREATE INDEX symbols_by_name ON symbols (name);
CREATE INDEX symbols_by_name_nocase ON symbols (name COLLATE NOCASE);
CREATE INDEX symbols_by_qualified ON symbols (qualified_name);
CREATE TABLE refs (
    file_id INTEGER NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    line INTEGER NOT NULL,
    scope_id INTEGER,  -- the enclosing symbol; NULL at module level (then the file's module)
    is_call INTEGER NOT NULL
);
CREATE INDEX refs_by_file ON refs (file_id);
CREATE INDEX refs_by_name ON refs (name, is_call);
-- Callees are looked up by the calling symbol; only calls need that index, and an integer
-- key keeps it small (qualified-name text made it the largest structure in the file).
CREATE INDEX refs_calls_by_scope ON refs (scope_id) WHERE is_call = 1 AND scope_id IS NOT NULL;
CREATE TABLE skipped (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
CREATE TABLE chunk_vectors (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks (id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    vector BLOB NOT NULL
);
"""


def default_db_path(root: Path) -> Path:
    """``<moot home>/codeindex/<root name>-<hash of the root path>.sqlite3``."""
    digest = hashlib.sha1(str(root).encode("utf-8")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", root.name or "root")[:40]
    return config.home() / "codeindex" / f"{name}-{digest}.sqlite3"


class StaleIndexError(MootError):
    """The index was written by an older moot; it is a cache, so ``build`` simply starts it again."""


_SQLITE_HEADER = b"SQLite format 3\x00"


def rebuild_command(path: Path, root: Path | str) -> str:
    """``moot index ROOT --rebuild``, with ``--db PATH`` when the index is not in its default place."""
    db = "" if Path(path) == default_db_path(Path(root)) else f" --db {path}"
    return f"moot index {root}{db} --rebuild"


def foreign_file(path: Path) -> str | None:
    """Why ``path`` is another program's file (or the user's), which ``--rebuild`` must not delete;
    None when it may be replaced: it does not exist, is empty, lies in moot's own index folder, is a
    moot code index, or is a SQLite file too damaged to say (the corrupt index ``--rebuild`` is for)."""
    path = Path(path)
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return None
        if path.resolve().parent == (config.home() / "codeindex").resolve():
            return None
        with path.open("rb") as handle:
            header = handle.read(len(_SQLITE_HEADER))
    except OSError:
        return None  # unreadable: deleting it will fail with its own error
    if header != _SQLITE_HEADER:
        return "it is not a SQLite file"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            try:  # another program's "meta" table may have other columns
                mark = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            except sqlite3.DatabaseError:
                mark = None
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return None
    if not tables or (mark and mark[0] == FORMAT_MARK):
        return None
    return f"it is another SQLite database, with tables {', '.join(sorted(tables)[:4])}"


def corrupt_error(path: Path, root: Path | str, detail: str) -> MootError:
    foreign = foreign_file(path)
    if foreign is not None:
        return MootError(
            f"{path} is not a moot code index ({foreign})",
            fix="pass --db the path of a new file (moot never deletes a file it did not write)",
        )
    return MootError(
        f"the code index {path} is corrupt or not a moot code index ({detail})",
        fix=f"rebuild it: {rebuild_command(path, root)}",
    )


def _configure(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")


def connect(path: Path, root: Path, *, create: bool) -> sqlite3.Connection:
    """An open, checked connection; creates the schema when ``create`` and the file is new."""
    if path.is_dir():
        raise MootError(f"the index path {path} is a folder", fix="pass --db a file path, e.g. index.sqlite3")
    exists = path.exists()
    if not exists and not create:
        raise MootError(f"{root} is not indexed (no index at {path})", fix=f"run `moot index {root}`")
    try:
        if not exists:
            path.parent.mkdir(parents=True, exist_ok=True)
        # Worker threads (tools run in asyncio.to_thread) share this connection under a lock.
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    except (OSError, sqlite3.OperationalError) as exc:
        raise MootError(
            f"cannot open or create the index file {path} ({exc})", fix="pass --db a writable file path"
        ) from None
    try:
        _configure(conn)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0 and not conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
            if not create:
                raise MootError(f"{root} is not indexed (the index at {path} is empty)", fix=f"run `moot index {root}`")
            conn.execute("PRAGMA journal_mode = WAL")
            # executescript commits first, so the whole schema goes in one script with its own
            # transaction: a crash leaves either no schema or all of it.
            mark = FORMAT_MARK.replace("'", "''")
            root_text = str(root).replace("'", "''")
            conn.executescript(
                f"BEGIN IMMEDIATE;{_SCHEMA}"
                f"INSERT INTO meta (key, value) VALUES ('format', '{mark}'), ('root', '{root_text}');"
                f"PRAGMA user_version = {SCHEMA_VERSION};COMMIT;"
            )
            return conn
        mark = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        if not mark or mark[0] != FORMAT_MARK:
            raise corrupt_error(path, root, "no moot code index mark")
        if version < SCHEMA_VERSION:
            raise StaleIndexError(
                f"the code index {path} was written by an older moot (schema {version})",
                fix=f"run `moot index {root}` (it re-indexes from scratch)",
            )
        if version > SCHEMA_VERSION:
            raise MootError(
                f"the code index {path} was written by a newer moot (schema {version})",
                fix=f"upgrade moot, or rebuild it: {rebuild_command(path, root)}",
            )
        stored_root = conn.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
        if stored_root and stored_root[0] != str(root):
            raise MootError(
                f"the code index {path} belongs to {stored_root[0]}, not {root}",
                fix="pass another --db file, or rebuild it for this root with --rebuild",
            )
        conn.execute("SELECT count(*) FROM files").fetchone()
        return conn
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise corrupt_error(path, root, str(exc)) from None
    except BaseException:
        conn.close()
        raise


def remove(path: Path) -> None:
    """Delete an index file with its WAL and shared-memory companions."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)
