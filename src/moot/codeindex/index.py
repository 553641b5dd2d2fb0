"""``CodeIndex``: build or open the index of one source tree, then search, resolve and read it."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from moot.codeindex import store
from moot.codeindex.builder import BuildReport, ProgressCallback, build_into
from moot.codeindex.flow import Decision, decisions
from moot.codeindex.results import CodeHit, SymbolInfo
from moot.codeindex.sandbox import PathEscapeError, confine, relative
from moot.codeindex.semantic import VectorTable, embed_missing, rrf
from moot.codeindex.terms import match_query, query_terms
from moot.codeindex.walk import DECLARATION_SUFFIXES, MAX_CODE_BYTES, FoundFile, decode, is_binary, is_declaration, walk
from moot.errors import MootError
from moot.files import UnsafeFileError, read_bytes
from moot.models.embeddings import Embedder

MODES = ("lexical", "semantic", "hybrid")
BM25_WEIGHTS = (3.0, 1.0, 1.0)
"""name, path, body: a chunk named like the query beats one that only mentions it (higher name
weights let one common word in a long name, "handle", outrank the subject of the question)."""
FUSION_DEPTH = 50
"""Candidates taken from each ranking before reciprocal rank fusion."""
SNIPPET_LINES = 4
MAX_READ_LINES = 150
"""``read_file`` returns at most this many lines and says how to get the rest."""
MAX_LIST = 50
"""Callers, callees and references kept per symbol (the total is still reported by the tools)."""
TWIN_SHARE = 0.8
"""Two files whose definitions' names are this much the same (shared over all) are two builds of one source."""
TWIN_MIN_NAMES = 5
"""Fewer definitions than this say nothing about where a file came from."""


def check_root(root: str | os.PathLike[str]) -> Path:
    """The resolved root directory, or a one-line error for a missing path or a file."""
    path = Path(root).expanduser()
    if not path.exists():
        raise MootError(f"{root} does not exist", fix="pass the path of a source directory: moot index PATH")
    if not path.is_dir():
        raise MootError(
            f"{root} is not a directory", fix="pass the folder that contains the code (the repository root), not a file"
        )
    return path.resolve()


MAX_INDEX_FILES = 25_000
"""A first index of a tree with more indexable files than this needs ``allow_large`` (``--allow-large``)."""
MAX_INDEX_BYTES = 1 << 30
"""The same for the indexable bytes (source and docs, after the walk's skips): 1 GB."""


def check_size(root: Path, *, allow_large: bool = False) -> None:
    """Refuse to index the whole machine, a home folder, or a tree above the size caps.

    ``moot index /`` read 20,561 files, the home folder and /etc included, into 800 MB. ``/``, the
    home folder and any folder above it are refused at once (nothing is walked); another tree is
    counted up to the caps (stat only, nothing read) and refused past them."""
    if allow_large:
        return
    home = Path.home().resolve()
    fix = "index one project folder, or pass --allow-large if you mean it"
    if root == Path(root.anchor):
        raise MootError(f"{root} is the whole filesystem: indexing it would read every file on the machine", fix=fix)
    if root == home or home.is_relative_to(root):
        raise MootError(f"{root} is {'your home folder' if root == home else 'a folder that holds your home folder'}: "
                        "indexing it would read your documents and settings, not one project", fix=fix)
    files = size = 0
    for found in walk(root):
        if isinstance(found, FoundFile):
            files += 1
            size += found.size
            if files > MAX_INDEX_FILES or size > MAX_INDEX_BYTES:
                what = f"more than {MAX_INDEX_FILES:,} files" if files > MAX_INDEX_FILES else f"more than {MAX_INDEX_BYTES >> 20:,} MB"
                raise MootError(f"{root} holds {what} to index: it looks like more than one project", fix=fix)


OCCURRENCE_FILES = 200
"""Files read for one name by :meth:`CodeIndex.occurrences` (a word in every file says little)."""


class CodeIndex:
    """An open code index: one SQLite file for one source tree. Use :meth:`build` or :meth:`open`."""

    def __init__(self, root: Path, db_path: Path, conn: sqlite3.Connection, embedder: Embedder | None = None) -> None:
        self.root = root
        """The indexed directory, resolved."""
        self.db_path = db_path
        self._conn = conn
        self._lock = threading.RLock()
        self._embedder = embedder
        self._vectors: VectorTable | None = None
        self._names_by_file: dict[str, frozenset[str]] = {}

    # --- life cycle ---------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        root: str | os.PathLike[str],
        *,
        db_path: str | os.PathLike[str] | None = None,
        embeddings: bool | Embedder = False,
        progress: ProgressCallback | None = None,
        rebuild: bool = False,
        allow_large: bool = False,
    ) -> CodeIndex:
        """Index ``root`` (or bring its index up to date) and return the open index.

        ``embeddings=True`` loads the optional default embedder (a one-line error when the extra
        is missing); an :class:`~moot.models.embeddings.Embedder` object is used as given.
        ``rebuild=True`` deletes the index file first (the way out of a corrupt file).
        A first index of ``/``, a home folder or a tree past :data:`MAX_INDEX_FILES` or
        :data:`MAX_INDEX_BYTES` is refused unless ``allow_large`` (see :func:`check_size`).
        """
        resolved = check_root(root)
        path = Path(db_path).expanduser().resolve() if db_path else store.default_db_path(resolved)
        if rebuild:
            foreign = store.foreign_file(path)
            if foreign is not None:
                raise MootError(
                    f"--rebuild would delete {path}, which is not a moot code index ({foreign})",
                    fix="pass --db the path of a new file (moot never deletes a file it did not write)",
                )
            store.remove(path)
        if not path.exists():  # an index that exists was allowed when it was made
            check_size(resolved, allow_large=allow_large)
        embedder: Embedder | None = None
        if embeddings is True:
            from moot.models.embeddings import load_default_embedder

            embedder = load_default_embedder()
        elif embeddings:
            embedder = embeddings  # type: ignore[assignment]
        try:
            conn = store.connect(path, resolved, create=True)
        except store.StaleIndexError:
            store.remove(path)
            conn = store.connect(path, resolved, create=True)
        index = cls(resolved, path, conn, embedder)
        try:
            with index._guard():
                report = build_into(conn, resolved, progress=progress)
                has_files = conn.execute("SELECT 1 FROM files LIMIT 1").fetchone()
                if not has_files:
                    raise MootError(
                        f"{resolved} has no files moot can index (Python, JavaScript, TypeScript, docs or config), "
                        f"or all of them are ignored",
                        fix="point moot index at a source tree; check its .gitignore",
                    )
                if embedder is not None:
                    report.embedded_chunks = embed_missing(conn, embedder)
                    index._set_meta("embedding_model", embedder.name)
                index._set_meta("last_build", json.dumps(report.to_dict()))
        except BaseException:
            index.close()
            raise
        index.last_build = report
        return index

    @classmethod
    def open(
        cls, root: str | os.PathLike[str], *, db_path: str | os.PathLike[str] | None = None, embedder: Embedder | None = None
    ) -> CodeIndex:
        """Open an existing index; ``MootError`` naming ``moot index PATH`` when there is none."""
        resolved = check_root(root)
        path = Path(db_path).expanduser().resolve() if db_path else store.default_db_path(resolved)
        conn = store.connect(path, resolved, create=False)
        return cls(resolved, path, conn, embedder)

    last_build: BuildReport | None = None
    """What :meth:`build` just did (``None`` for an index from :meth:`open`)."""

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> CodeIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _guard(self) -> Iterator[sqlite3.Connection]:
        """One thread at a time on the connection; damage found mid-query becomes the rebuild error."""
        with self._lock:
            try:
                yield self._conn
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                    raise
                raise store.corrupt_error(self.db_path, self.root, str(exc)) from None

    def _meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # --- search -------------------------------------------------------------------------------

    def search(self, query: str, *, mode: str = "hybrid", limit: int = 10) -> list[CodeHit]:
        """Chunks that match ``query``: ``lexical`` (BM25), ``semantic`` (embeddings) or ``hybrid`` (RRF of both).

        ``hybrid`` is plain lexical search when the index has no embeddings.
        """
        if mode not in MODES:
            raise MootError(f"unknown search mode {mode!r}", fix="use lexical, semantic or hybrid")
        limit = max(1, min(int(limit), 100))
        # Read further than asked, so that the code put ahead of declarations and first copies
        # are still ``limit`` hits: a declaration file's doc comments can fill the first dozens
        # of BM25's places (one package's `.d.ts` took 15 of the first 18 for one question).
        depth = min(100, max(limit * 2, FUSION_DEPTH))
        with self._guard() as conn:
            if mode == "lexical" or (mode == "hybrid" and not self._semantic_ready(required=False)):
                ranked = self._lexical_ids(conn, query, depth)
            elif mode == "semantic":
                self._semantic_ready(required=True)
                ranked = self._semantic(query, depth)
            else:
                lexical = [hit_id for hit_id, _ in self._lexical_ids(conn, query, FUSION_DEPTH)]
                semantic = [hit_id for hit_id, _ in self._semantic(query, FUSION_DEPTH)]
                ranked = rrf([lexical, semantic])[:depth]
            return self._hits(conn, ranked, query, limit=limit)

    def _lexical_ids(self, conn: sqlite3.Connection, query: str, limit: int) -> list[tuple[int, float]]:
        match = match_query(query)
        if match is None:
            return []
        rows = conn.execute(
            f"SELECT rowid, bm25(chunks_fts, {', '.join(map(str, BM25_WEIGHTS))}) AS rank "
            "FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
            (match, limit),
        ).fetchall()
        ranked = [(rowid, -rank) for rowid, rank in rows]
        exact = self._exact_definitions(conn, query)
        if not exact:
            return ranked
        # A query that is exactly a symbol's name ("Stream") wants its definition first, even when
        # the name is so common that BM25 gives it almost no weight.
        top = (ranked[0][1] if ranked else 0.0) + 1.0
        boosted = [(cid, round(top + (len(exact) - i) * 0.01, 4)) for i, cid in enumerate(exact)]
        chosen = {cid for cid, _ in boosted}
        return (boosted + [(cid, score) for cid, score in ranked if cid not in chosen])[:limit]

    def _exact_definitions(self, conn: sqlite3.Connection, query: str) -> list[int]:
        """Chunks defining a symbol named exactly like the query (an identifier or a dotted name)."""
        text = query.strip()
        if not text or not all(part.isidentifier() for part in text.split(".")):
            return []
        name = text.rsplit(".", 1)[-1]
        rows = conn.execute(
            "SELECT c.id, s.name = ? AS same_case, s.qualified_name FROM symbols s "
            "JOIN chunks c ON c.file_id = s.file_id AND c.name = s.qualified_name AND c.start_line = s.start_line "
            "WHERE s.name = ? COLLATE NOCASE LIMIT 50",
            (name, name),
        ).fetchall()
        if "." in text:
            rows = [r for r in rows if r[2] == text or r[2].endswith("." + text)] or rows
        # Exact case first, then shorter qualified names (public, top-level definitions).
        rows.sort(key=lambda r: (not r[1], r[2].count("._"), len(r[2])))
        return [r[0] for r in rows[:5]]

    def _semantic_ready(self, *, required: bool) -> bool:
        model = self._meta("embedding_model")
        if model is None:
            if required:
                raise MootError(
                    f"the index of {self.root} has no embeddings", fix=f"run `moot index {self.root} --embeddings`"
                )
            return False
        if self._embedder is None:
            try:
                from moot.models.embeddings import DEFAULT_MODEL_NAME, load_default_embedder

                if model != DEFAULT_MODEL_NAME:
                    raise MootError(
                        f"the index was embedded with {model!r}", fix="open it with CodeIndex.open(..., embedder=...)"
                    )
                self._embedder = load_default_embedder()
            except MootError:
                if required:
                    raise
                return False
        if self._embedder.name != model:
            if required:
                raise MootError(
                    f"the index was embedded with {model!r}, not {self._embedder.name!r}",
                    fix=f"rebuild it: moot index {self.root} --rebuild --embeddings",
                )
            return False
        return True

    def _semantic(self, query: str, limit: int) -> list[tuple[int, float]]:
        assert self._embedder is not None
        if self._vectors is None:
            self._vectors = VectorTable(self._conn, self._embedder.name)
        vector = self._embedder.embed([query])[0]
        return self._vectors.nearest(vector, limit)

    def _hits(self, conn: sqlite3.Connection, ranked: list[tuple[int, float]], query: str, *, limit: int) -> list[CodeHit]:
        """The first ``limit`` of the ranked chunks as hits, code ahead of declarations and each
        definition shipped twice once (:meth:`_code_first`); snippets only for those kept."""
        if not ranked:
            return []
        ids = [cid for cid, _ in ranked]
        rows = conn.execute(
            "SELECT c.id, f.path, c.start_line, c.end_line, c.kind, c.name FROM chunks c "
            f"JOIN files f ON f.id = c.file_id WHERE c.id IN ({','.join('?' * len(ids))})",
            ids,
        ).fetchall()
        by_id = {row[0]: row for row in rows}
        found = self._code_first([(by_id[cid], score) for cid, score in ranked if cid in by_id], limit)
        # The chunks' text only for the hits kept (the ranking reads further than it shows).
        kept = [row[0] for row, _ in found]
        texts = {cid: (text, line_map) for cid, text, line_map in conn.execute(
            f"SELECT id, text, line_map FROM chunks WHERE id IN ({','.join('?' * len(kept))})", kept)} if kept else {}
        terms = [t for t in query_terms(query) if len(t) >= 3] or query_terms(query)
        hits = []
        for row, score in found:
            cid, path, start, end, kind, name = row
            text, line_map = texts[cid]
            jumps = json.loads(line_map) if line_map else []
            hits.append(CodeHit(path, start, end, kind, name, snippet(text, start, terms, kind, jumps), round(score, 4)))
        return hits

    # --- symbols ------------------------------------------------------------------------------

    def resolve_symbol(self, name: str, kind: str | None = None) -> list[SymbolInfo]:
        """Definitions named ``name`` (or a qualified ``pkg.mod.Class.name``), with callers, callees and references.

        Resolution is by name: every call of anything called ``name`` counts as a caller.
        """
        # JavaScript names a method by its prototype (``Writer.prototype.parse``); the index names
        # it as a class's method is named (``Writer.parse``).
        name = (name or "").strip().replace(".prototype.", ".")
        if not name:
            return []
        with self._guard() as conn:
            columns = "s.name, s.qualified_name, s.kind, f.path, s.start_line, s.end_line, s.signature, s.docstring, s.id"
            base = f"SELECT {columns} FROM symbols s JOIN files f ON f.id = s.file_id WHERE "
            kind_sql, kind_args = (" AND s.kind = ?", [kind]) if kind else ("", [])
            attempts = [
                ("s.qualified_name = ?", [name]),
                ("s.name = ?", [name.rsplit(".", 1)[-1]]) if "." not in name else ("s.qualified_name LIKE ? ESCAPE '\\'", ["%." + _like(name)]),
                ("s.name = ? COLLATE NOCASE", [name.rsplit(".", 1)[-1]]),
            ]
            rows: list[Any] = []
            # The code that runs before its declaration (``.d.ts``, ``.pyi``): the first
            # definition listed is the one a caller reads.
            order = f" ORDER BY {_DECLARATION_SQL}, f.path, s.start_line LIMIT 20"
            for where, args in attempts:
                rows = conn.execute(base + where + kind_sql + order, [*args, *kind_args]).fetchall()
                if rows:
                    break
            return [self._symbol(conn, row) for row in rows]

    def _symbol(self, conn: sqlite3.Connection, row: Any) -> SymbolInfo:
        name, qualified, kind, path, start, end, signature, docstring, symbol_id = row
        callers = [r[0] for r in conn.execute(
            "SELECT coalesce(s.qualified_name, f.module) FROM refs r JOIN files f ON f.id = r.file_id "
            "LEFT JOIN symbols s ON s.id = r.scope_id WHERE r.name = ? AND r.is_call = 1 "
            "GROUP BY 1 ORDER BY min(r.rowid) LIMIT ?",
            (name, MAX_LIST),
        )]
        callees = [r[0] for r in conn.execute(
            "SELECT name FROM refs WHERE scope_id = ? AND is_call = 1 GROUP BY name ORDER BY min(line) LIMIT ?",
            (symbol_id, MAX_LIST),
        )]
        references = [f"{p}:{line}" for p, line in conn.execute(
            "SELECT f.path, r.line FROM refs r JOIN files f ON f.id = r.file_id WHERE r.name = ? "
            "GROUP BY f.path, r.line ORDER BY f.path, r.line LIMIT ?",
            (name, MAX_LIST),
        )]
        return SymbolInfo(name, qualified, kind, path, start, end, signature, docstring, callers, callees, references)

    def call_sites(self, name: str, limit: int = 10) -> list[tuple[str, str, int]]:
        """Where something called ``name`` is called: ``(caller, path, line)``, the caller being
        the enclosing definition's qualified name (or the module, at module level)."""
        last = (name or "").strip().rsplit(".", 1)[-1]
        if not last:
            return []
        with self._guard() as conn:
            rows = conn.execute(
                "SELECT coalesce(s.qualified_name, f.module), f.path, min(r.line) FROM refs r "
                "JOIN files f ON f.id = r.file_id LEFT JOIN symbols s ON s.id = r.scope_id "
                "WHERE r.name = ? AND r.is_call = 1 GROUP BY 1, 2 ORDER BY f.path, min(r.line) LIMIT ?",
                (last, limit),
            ).fetchall()
        return [(str(caller or path), str(path), int(line)) for caller, path, line in rows]

    def defined_as(self, name: str) -> str | None:
        """The qualified name of the first definition called ``name``, or ``None`` when the
        repository defines nothing of that name (a cheap check: no callers or references)."""
        with self._guard() as conn:
            row = conn.execute(
                "SELECT s.qualified_name FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? "
                "ORDER BY f.path, s.start_line LIMIT 1",
                (name.strip().rsplit(".", 1)[-1],),
            ).fetchone()
        return str(row[0]) if row else None

    def twin_files(self, path_a: str, path_b: str) -> bool:
        """Whether two files are builds of one source: an npm package ships its code as CommonJS
        and as ES modules (``dist/cjs/index.js`` and ``dist/esm/index.js``, ``lib.cjs`` and
        ``lib.mjs``), one down-levelled so that their text differs. Twins have the same name up
        to its first dot, are both declarations or both code, and define the same names
        (:data:`TWIN_SHARE` of them, at least :data:`TWIN_MIN_NAMES`). Sibling modules that
        implement one interface (``backends/base.py`` and ``backends/sqlite.py``) share names
        but not a file name, and a ``.pyi`` stub is not a twin of its module."""
        if path_a == path_b or _stem(path_a) != _stem(path_b) or is_declaration(path_a) != is_declaration(path_b):
            return False
        names_a, names_b = self._names_in(path_a), self._names_in(path_b)
        if min(len(names_a), len(names_b)) < TWIN_MIN_NAMES:
            return False
        return len(names_a & names_b) / len(names_a | names_b) >= TWIN_SHARE

    def same_code(self, path_a: str, name_a: str, path_b: str, name_b: str) -> bool:
        """Whether two definitions are one shipped twice: the same name in :meth:`twin_files`."""
        return name_a.rsplit(".", 1)[-1] == name_b.rsplit(".", 1)[-1] and self.twin_files(path_a, path_b)

    def _names_in(self, path: str) -> frozenset[str]:
        if path not in self._names_by_file:
            with self._guard() as conn:
                rows = conn.execute(
                    "SELECT DISTINCT s.name FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.path = ?", (path,)
                ).fetchall()
            self._names_by_file[path] = frozenset(str(r[0]) for r in rows)
        return self._names_by_file[path]

    def _code_first(self, found: list[tuple[Any, float]], limit: int) -> list[tuple[Any, float]]:
        """The first ``limit`` ranked chunk rows with the code that runs ahead of declarations,
        each definition (or whole file) shipped twice (:meth:`same_code`, :meth:`twin_files`)
        once.

        A declaration file (``.d.ts``, ``.pyi``) holds a package's doc comments, so a question's
        words match it better than the code that does the work, which it does not contain (on a
        bundled npm package every hit was in its ``.d.ts``)."""
        kept: list[tuple[Any, float]] = []
        by_name: dict[str, list[str]] = {}  # the last part of a kept hit's name -> its files
        for row, score in sorted(found, key=lambda item: is_declaration(item[0][1])):
            path, kind, name = row[1], row[4], row[5]
            key = "module:" + _stem(path) if kind == "module" else name.rsplit(".", 1)[-1]
            if any(self.twin_files(other, path) for other in by_name.get(key, ())):
                continue
            kept.append((row, score))
            by_name.setdefault(key, []).append(path)
            if len(kept) >= limit:
                break
        return kept

    def symbols_in(self, path: str, start_line: int, end_line: int, limit: int = 10) -> list[str]:
        """Qualified names of the definitions in ``path`` that overlap the line range,
        innermost (shortest) first: what a reported location is about."""
        with self._guard() as conn:
            rows = conn.execute(
                "SELECT s.qualified_name FROM symbols s JOIN files f ON f.id = s.file_id "
                "WHERE f.path = ? AND s.start_line <= ? AND s.end_line >= ? "
                "ORDER BY (s.end_line - s.start_line), s.start_line LIMIT ?",
                (path, end_line, start_line, limit),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def spans_in(self, path: str, start_line: int, end_line: int, limit: int = 200) -> list[tuple[int, int]]:
        """The line spans of the definitions inside ``start_line``..``end_line`` of ``path``
        (not one that is the whole range), in order: the nested functions and methods that a
        long definition holds."""
        with self._guard() as conn:
            rows = conn.execute(
                "SELECT s.start_line, s.end_line FROM symbols s JOIN files f ON f.id = s.file_id "
                "WHERE f.path = ? AND s.start_line >= ? AND s.end_line <= ? AND NOT (s.start_line = ? AND s.end_line = ?) "
                "ORDER BY s.start_line LIMIT ?",
                (path, start_line, end_line, start_line, end_line, limit),
            ).fetchall()
        return [(int(a), int(b)) for a, b in rows]

    def file_paths(self) -> list[str]:
        """Every indexed file's path, relative to the root."""
        with self._guard() as conn:
            return [str(r[0]) for r in conn.execute("SELECT path FROM files ORDER BY path")]

    def mentions(self, name: str) -> bool:
        """Whether ``name`` (or the last part of a dotted name) occurs in the indexed code at all:
        a definition, a reference, or failing those anywhere in a chunk's text (a keyword
        argument, a string). For telling a real name from one a model made up."""
        last = (name or "").strip().rsplit(".", 1)[-1]
        if not last:
            return False
        with self._guard() as conn:
            for sql in ("SELECT 1 FROM symbols WHERE name = ? LIMIT 1", "SELECT 1 FROM refs WHERE name = ? LIMIT 1",
                        "SELECT 1 FROM chunks WHERE instr(text, ?) > 0 LIMIT 1"):
                if conn.execute(sql, (last,)).fetchone():
                    return True
        return False

    def count_references(self, name: str) -> tuple[int, int]:
        """(call sites, all uses) of a name, for tools that show a cut list with its total."""
        with self._guard() as conn:
            row = conn.execute(
                "SELECT count(DISTINCT coalesce(scope_id, -file_id)) FILTER (WHERE is_call = 1), "
                "count(DISTINCT file_id || ':' || line) FROM refs WHERE name = ?",
                (name,),
            ).fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    def occurrences(self, text: str, *, quoted: bool = False, limit: int = 50,
                    skip: Callable[[str], bool] | None = None) -> list[tuple[str, int]]:
        """Where ``text`` is written in the indexed code (not in prose files): ``(path, line)``
        of each line that holds it as a whole word, in path and line order. ``quoted``: only
        where it is written as a string (``'duplicate-arguments-array'``, ``"--dry-run"``), as a
        configuration key or an option's name is. Files for which ``skip(path)`` is true are not
        read. At most ``limit`` lines, from at most :data:`OCCURRENCE_FILES` files."""
        text = (text or "").strip()
        if not text:
            return []
        if quoted:  # the string's closing quote, right after it, narrows the files to read
            where, args = "(instr(c.text, ?) > 0 OR instr(c.text, ?) > 0 OR instr(c.text, ?) > 0)", \
                (text + "'", text + '"', text + "`")
        else:
            where, args = "instr(c.text, ?) > 0", (text,)
        with self._guard() as conn:
            paths = [str(r[0]) for r in conn.execute(
                f"SELECT DISTINCT f.path FROM chunks c JOIN files f ON f.id = c.file_id "
                f"WHERE c.kind != 'text' AND {where} ORDER BY f.path LIMIT ?", (*args, OCCURRENCE_FILES))]
        word = re.escape(text)
        pattern = re.compile(rf"""(['"`])-{{0,2}}{word}\1""" if quoted else rf"(?<![\w$-]){word}(?![\w$-])")
        out: list[tuple[str, int]] = []
        for path in paths:
            if skip is not None and skip(path):
                continue
            try:
                _, lines = self._indexed_lines(path)
            except MootError:  # changed or gone since the build
                continue
            out.extend((path, n) for n, line in enumerate(lines, 1) if text in line and pattern.search(line))
            if len(out) >= limit:
                break
        return out[:limit]

    # --- files and map ------------------------------------------------------------------------

    def source_lines(self, path: str, start: int, end: int) -> list[tuple[int, str]]:
        """Lines ``start``..``end`` of an indexed file as ``(number, text)``, unnumbered and
        uncut: for quoting code verbatim at the line a statement cites."""
        _, lines = self._indexed_lines(path)
        first, last = max(1, start), min(end, len(lines))
        return [(n, lines[n - 1].rstrip(chr(13))) for n in range(first, last + 1)]

    def _indexed_lines(self, path: str) -> tuple[str, list[str]]:
        """The relative path and the lines of a file the index holds (the checks of read_file)."""
        real = confine(self.root, path)
        rel = relative(self.root, real)
        if real.is_dir():
            raise MootError(f"{rel} is a directory", fix=f"call read_map with path={rel!r} to see what is in it")
        if not real.is_file():
            raise MootError(f"{rel} does not exist under the indexed root", fix="use a path from search_code or read_map")
        with self._guard() as conn:
            indexed = conn.execute("SELECT 1 FROM files WHERE path = ?", (rel,)).fetchone()
        if not indexed:
            # Only what the index holds can be read: an ignored file, `.env` or `.git/config` may
            # hold secrets that the .gitignore (or the default skips) kept out on purpose.
            raise MootError(
                f"{rel} is not in the index (ignored, skipped, or not a source or text file)",
                fix=f"read a file shown by search_code or read_map; if it is new, run `moot index {self.root}`",
            )
        try:  # indexed as a regular file; it may have changed into a link or a FIFO since
            data = read_bytes(rel, root=self.root, max_bytes=MAX_CODE_BYTES, credentials=False)
        except UnsafeFileError as exc:
            raise MootError(f"{rel} cannot be read: {exc.message}", fix=f"run `moot index {self.root}` again") from None
        if is_binary(data):
            raise MootError(f"{rel} is a binary file", fix="read a source or text file instead")
        lines = decode(data).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return rel, lines

    def read_file(
        self, path: str, start: int | None = None, end: int | None = None, *, max_chars: int | None = None
    ) -> str:
        """Numbered lines ``start``..``end`` of a file under the root (at most :data:`MAX_READ_LINES`).

        ``max_chars`` cuts earlier, at a line boundary, so a tool output stays within a size;
        either cut ends with a note naming the ``start`` to read on from.
        """
        rel, lines = self._indexed_lines(path)
        total = len(lines)
        first = max(1, int(start or 1))
        if total == 0:
            return f"{rel} (empty file)"
        if first > total:
            raise MootError(f"{rel} has {total} lines; start={first} is past the end", fix=f"use start between 1 and {total}")
        last = total if end is None else max(first, min(int(end), total))
        cut_at = first + MAX_READ_LINES - 1
        shown_last = min(last, cut_at)
        width = len(str(shown_last))
        body: list[str] = []
        used = 0
        for n in range(first, shown_last + 1):
            line = f"{n:>{width}}| {lines[n - 1].rstrip(chr(13))}"
            used += len(line) + 1
            if max_chars is not None and body and used > max_chars - 120:
                shown_last = n - 1
                break
            body.append(line)
        out = [f"{rel}:{first}-{shown_last} (of {total} lines)", *body]
        if shown_last < last:
            out.append(f"… cut: {last - shown_last} more lines; call read_file with start={shown_last + 1}")
        return "\n".join(out)

    def decisions(self, path: str, start_line: int, end_line: int) -> list[Decision]:
        """The control flow of the function at ``start_line``..``end_line`` of an indexed code
        file: its conditions with what each does, its early returns and raises (see
        :mod:`moot.codeindex.flow`); ``[]`` for a text file, a class or a span with no function."""
        rel, lines = self._indexed_lines(path)
        with self._guard() as conn:
            row = conn.execute("SELECT language FROM files WHERE path = ?", (rel,)).fetchone()
        if not row or row[0] not in ("python", "javascript", "typescript", "tsx"):
            return []
        return decisions(row[0], "\n".join(lines), start_line, end_line)

    def line_count(self, path: str) -> int | None:
        """Lines of an indexed file as of the last build; ``None`` for anything else (outside the
        root, not indexed, a folder). Cheaper than reading the file, for checking a citation."""
        try:
            rel = relative(self.root, confine(self.root, path))
        except MootError:
            return None
        with self._guard() as conn:
            row = conn.execute("SELECT lines FROM files WHERE path = ?", (rel,)).fetchone()
        return int(row[0]) if row else None

    def read_map(self, path: str = ".", *, max_lines: int = 80) -> str:
        """The directory tree under ``path`` with a short summary per directory (no model involved)."""
        from moot.codeindex.repomap import render_map

        real = confine(self.root, path)
        rel = relative(self.root, real)
        with self._guard() as conn:
            return render_map(conn, rel, max_lines=max_lines)

    def stats(self) -> dict[str, Any]:
        """Counts (files, chunks, symbols, references), skipped files by reason, languages, the db path, the last build."""
        with self._guard() as conn:
            count = lambda table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: E731
            languages = dict(conn.execute("SELECT language, count(*) FROM files GROUP BY language ORDER BY 2 DESC").fetchall())
            skipped = dict(conn.execute("SELECT reason, count(*) FROM skipped GROUP BY reason ORDER BY reason").fetchall())
            last = self._meta("last_build")
            size = sum(os.path.getsize(p) for p in (str(self.db_path), f"{self.db_path}-wal") if os.path.exists(p))
            return {
                "root": str(self.root),
                "db_path": str(self.db_path),
                "db_bytes": size,
                "files": count("files"),
                "chunks": count("chunks"),
                "symbols": count("symbols"),
                "references": count("refs"),
                "skipped": skipped,
                "languages": languages,
                "embedding_model": self._meta("embedding_model"),
                "embedded_chunks": count("chunk_vectors"),
                "last_build": json.loads(last) if last else None,
                "seconds": json.loads(last)["seconds"] if last else None,
            }


_DECLARATION_SQL = "(" + " OR ".join(f"f.path LIKE '%{suffix}'" for suffix in DECLARATION_SUFFIXES) + ")"
"""SQL that is 1 for a definition in a declaration file (:func:`~moot.codeindex.walk.is_declaration`)."""


def _stem(path: str) -> str:
    """A file's name up to its first dot: ``dist/parser.cjs.js`` → ``parser``."""
    return path.rsplit("/", 1)[-1].split(".", 1)[0].lower()


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def snippet(text: str, start_line: int, terms: list[str], kind: str, line_map: list[list[int]] | None = None) -> str:
    """A few numbered lines: the first line of a definition, then lines with the query's terms."""
    from moot.codeindex.parse import line_number
    from moot.codeindex.terms import term_stream

    lines = text.split("\n")
    chosen: list[int] = [0] if kind != "text" and lines and lines[0].strip() else []
    for i, line in enumerate(lines):
        if len(chosen) >= SNIPPET_LINES:
            break
        if i in chosen or not line.strip():
            continue
        line_terms = term_stream(line)
        if any(term in line_terms for term in terms):
            chosen.append(i)
    for i, line in enumerate(lines):  # pad with the first lines when few lines matched
        if len(chosen) >= min(SNIPPET_LINES, 2):
            break
        if i not in chosen and line.strip():
            chosen.append(i)
    # Class and module chunks skip nested bodies; the line map gives each line its real number.
    return "\n".join(f"{line_number(line_map or [], start_line, i)}| {lines[i].strip()[:160]}" for i in sorted(chosen))


__all__ = ["MODES", "CodeIndex", "PathEscapeError", "check_root"]
