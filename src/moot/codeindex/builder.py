"""Indexing a tree into the store: streaming, incremental by file hash, one transaction per batch.

Files are read, hashed and parsed one at a time and written in batches of
:data:`BATCH_FILES` files (or :data:`BATCH_BYTES` of source, whichever comes first), each batch
one ``BEGIN IMMEDIATE`` transaction. Memory is bounded by one batch, whatever the size of the
repository; an interrupted build leaves every committed batch in place, and the next run
skips those files as unchanged.

A file is unchanged when its size and modification time match the index (no read at all), or
else when its SHA-256 matches (it is then not parsed again). Files missing from the walk are
deleted at the end with their chunks, symbols and references (by generation number, so two
overlapping builds of one tree cannot delete each other's files).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from moot.codeindex.parse import ParsedFile, module_name, parse
from moot.codeindex.terms import term_stream
from moot.codeindex.walk import (
    MAX_CODE_BYTES,
    MAX_TEXT_BYTES,
    FoundFile,
    Skipped,
    contains_credentials,
    decode,
    is_binary,
    is_minified,
    walk,
)
from moot.files import UnsafeFileError, read_bytes

BATCH_FILES = 200
BATCH_BYTES = 4_000_000


@dataclass
class IndexProgress:
    """Where a build is, passed to the ``progress`` callback after each file."""

    done: int = 0
    """Files looked at so far (indexed, unchanged or skipped)."""
    total: int | None = None
    """Files the walk will look at (counted first; ``None`` while counting)."""
    path: str = ""
    parsed: int = 0
    unchanged: int = 0
    skipped: int = 0


@dataclass
class BuildReport:
    """What the last build did (kept in the index's meta table, shown by ``stats()``)."""

    parsed: int = 0
    """Files new or changed, parsed and stored."""
    unchanged: int = 0
    removed: int = 0
    """Files in the index that are gone from the tree (or now ignored)."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Files left out, by reason: ``binary``, ``huge``, ``minified``, ``symlink``, ``unreadable``."""
    bytes_read: int = 0
    seconds: float = 0.0
    embedded_chunks: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


ProgressCallback = Callable[[IndexProgress], None]


def count_files(root: Path) -> int:
    """How many files the walk will look at (a cheap first pass: names and sizes only)."""
    return sum(1 for _ in walk(root))


def package_name(root: Path) -> str:
    """The root's name when the root is a Python package (has ``__init__.py``), else ``""``."""
    return root.name if (root / "__init__.py").is_file() and root.name.isidentifier() else ""


def _store_file(
    conn: sqlite3.Connection, found: FoundFile, sha: str, text: str, parsed: ParsedFile, package: str, generation: int
) -> None:
    old = conn.execute("SELECT id, seen FROM files WHERE path = ?", (found.rel,)).fetchone()
    if old:
        _delete_file(conn, old[0])
        generation = max(generation, old[1])  # a later, overlapping build has seen it too
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    cur = conn.execute(
        "INSERT INTO files (path, language, sha256, size, mtime_ns, lines, docstring, seen) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (found.rel, found.language, sha, found.size, found.mtime_ns, lines, parsed.docstring, generation),
    )
    file_id = cur.lastrowid
    path_terms = term_stream(found.rel)
    for chunk in parsed.chunks:
        cur = conn.execute(
            "INSERT INTO chunks (file_id, kind, name, start_line, end_line, text, line_map) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (file_id, chunk.kind, chunk.name, chunk.start_line, chunk.end_line, chunk.text,
             json.dumps(chunk.line_map) if chunk.line_map else ""),
        )
        short = chunk.name.rsplit(".", 1)[-1] if chunk.kind != "text" else chunk.name
        conn.execute(
            "INSERT INTO chunks_fts (rowid, name, path, body) VALUES (?, ?, ?, ?)",
            (cur.lastrowid, term_stream(short), path_terms, term_stream(chunk.text)),
        )
    module = module_name(found.rel, package)
    conn.execute("UPDATE files SET module = ? WHERE id = ?", (module, file_id))
    scope_ids: dict[str, int] = {}
    for s in parsed.symbols:
        cur = conn.execute(
            "INSERT INTO symbols (file_id, name, qualified_name, kind, top_level, start_line, end_line, signature, docstring) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (file_id, s.name, s.qualified_name, s.kind, int(s.qualified_name == f"{module}.{s.name}"),
             s.start_line, s.end_line, s.signature, s.docstring),
        )
        scope_ids.setdefault(s.qualified_name, cur.lastrowid)  # type: ignore[arg-type]
    conn.executemany(
        "INSERT INTO refs (file_id, name, line, scope_id, is_call) VALUES (?, ?, ?, ?, ?)",
        [(file_id, r.name, r.line, scope_ids.get(r.scope), int(r.is_call)) for r in dict.fromkeys(parsed.references)],
    )


def _delete_file(conn: sqlite3.Connection, file_id: int) -> None:
    # The FTS table is not linked by a foreign key; its rows go first, by chunk id.
    conn.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (file_id,))
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))


def build_into(conn: sqlite3.Connection, root: Path, *, progress: ProgressCallback | None = None) -> BuildReport:
    """Bring the index in ``conn`` up to date with the tree under ``root``."""
    started = time.perf_counter()
    report = BuildReport()
    state = IndexProgress()
    if progress is not None:
        progress(state)
        state.total = count_files(root)
        progress(state)
    # Each build marks the files it finds with a new generation number and, at the end, removes
    # those with an older one. Unlike a shared "seen" flag reset at the start, this stays right
    # when two builds of one tree overlap (two research runs starting at once): a file marked by
    # the later build is never deleted by the earlier one.
    conn.execute("BEGIN IMMEDIATE")
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    generation = int(row[0]) + 1 if row else 1
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', ?)", (str(generation),))
    conn.execute("DELETE FROM skipped")
    conn.execute("COMMIT")

    package = package_name(root)
    batch_files = 0
    batch_bytes = 0
    try:
        for item in walk(root):
            if not conn.in_transaction:
                conn.execute("BEGIN IMMEDIATE")
            state.done += 1
            state.path = item.rel
            if isinstance(item, Skipped):
                _skip(conn, report, state, item.rel, item.reason)
            else:
                read = _index_file(conn, report, state, item, package, generation, root)
                batch_bytes += read
            batch_files += 1
            if batch_files >= BATCH_FILES or batch_bytes >= BATCH_BYTES:
                # Between batches no lock is held, so another build or a reader is never kept
                # waiting for more than one batch (nor for the progress display).
                conn.execute("COMMIT")
                batch_files = batch_bytes = 0
            if progress is not None:
                progress(state)
        if not conn.in_transaction:
            conn.execute("BEGIN IMMEDIATE")
        gone = conn.execute("SELECT id FROM files WHERE seen < ?", (generation,)).fetchall()
        for (file_id,) in gone:
            _delete_file(conn, file_id)
        report.removed = len(gone)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _skip(conn: sqlite3.Connection, report: BuildReport, state: IndexProgress, rel: str, reason: str) -> None:
    conn.execute("INSERT OR REPLACE INTO skipped (path, reason) VALUES (?, ?)", (rel, reason))
    report.skipped[reason] = report.skipped.get(reason, 0) + 1
    state.skipped += 1


_SKIP_REASONS = {"too-large": "huge", "symlink": "symlink", "outside": "symlink", "special": "special",
                 "folder": "special", "missing": "unreadable", "unreadable": "unreadable"}


def _index_file(
    conn: sqlite3.Connection, report: BuildReport, state: IndexProgress, found: FoundFile, package: str, generation: int,
    root: Path,
) -> int:
    row = conn.execute("SELECT id, size, mtime_ns, sha256 FROM files WHERE path = ?", (found.rel,)).fetchone()
    if row and row[1] == found.size and row[2] == found.mtime_ns:
        conn.execute("UPDATE files SET seen = max(seen, ?) WHERE id = ?", (generation, row[0]))
        report.unchanged += 1
        state.unchanged += 1
        return 0
    cap = MAX_TEXT_BYTES if found.language == "text" else MAX_CODE_BYTES
    try:  # the walk saw a regular file; it may have been swapped for a link or a FIFO since
        data = read_bytes(found.rel, root=root, max_bytes=cap, credentials=False)
    except UnsafeFileError as exc:
        _skip(conn, report, state, found.rel, _SKIP_REASONS.get(exc.reason, "unreadable"))
        return 0
    report.bytes_read += len(data)
    if is_binary(data):
        _skip(conn, report, state, found.rel, "binary")
        return len(data)
    if contains_credentials(data):
        _skip(conn, report, state, found.rel, "credentials")
        return len(data)
    sha = hashlib.sha256(data).hexdigest()
    if row and row[3] == sha:
        # Touched but not changed: remember the new time so the next run needs no read.
        conn.execute(
            "UPDATE files SET seen = max(seen, ?), mtime_ns = ?, size = ? WHERE id = ?",
            (generation, found.mtime_ns, found.size, row[0]),
        )
        report.unchanged += 1
        state.unchanged += 1
        return len(data)
    text = decode(data)
    if is_minified(found.rel, text):
        _skip(conn, report, state, found.rel, "minified")
        return len(data)
    _store_file(conn, found, sha, text, parse(found.rel, found.language, text, package=package), package, generation)
    report.parsed += 1
    state.parsed += 1
    return len(data)
