"""Evidence for the graph: the user's sources cut into chunks, searched with SQLite FTS5,
and the mechanical check that a quote really occurs in a source.

Sources are text or Markdown files (``--source``) and/or the episodes of a knowledge base made
with ``moot learn`` (``--kb``). Files are read line by line and written to a SQLite file in
batches, so a huge source costs disk, not memory. Search uses the memory layer's query builder
(user and model text is never FTS syntax) and BM25.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from moot.errors import MootError
from moot.files import credentials_error, open_regular, stream_contains_credentials, text_lines
from moot.memory.search import build_match_query, query_terms

CHUNK_CHARS = 900
"""A chunk is about this many characters of whole paragraphs (a paragraph longer than this is cut at sentences)."""

MAX_SOURCE_BYTES = 512 * 1024 * 1024
"""A single source larger than this is refused (it would take hours for the model to read)."""

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_QUOTE_CHARS = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})


def normalise(text: str) -> str:
    """Text for quote matching: case, curly quotes, dashes and runs of whitespace ignored."""
    return " ".join(text.translate(_QUOTE_CHARS).lower().split())


@dataclass(frozen=True)
class Chunk:
    id: int
    source: str
    text: str


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def _paragraphs(lines: Iterable[str]) -> Iterator[str]:
    buf: list[str] = []
    for line in lines:
        if line.strip():
            if line.lstrip().startswith("#") and not buf:
                continue  # a Markdown title carries no claim
            buf.append(line.strip())
        elif buf:
            yield " ".join(buf)
            buf = []
    if buf:
        yield " ".join(buf)


def chunk_text(lines: Iterable[str], size: int = CHUNK_CHARS) -> Iterator[str]:
    """Whole paragraphs packed into chunks of about ``size`` characters; long paragraphs cut at sentences."""
    current = ""
    for para in _paragraphs(lines):
        pieces = [para] if len(para) <= size else sentences(para)
        for piece in pieces:
            if current and len(current) + len(piece) + 1 > size:
                yield current
                current = ""
            current = f"{current} {piece}".strip()
    if current:
        yield current


class SourceIndex:
    """Chunks of every source in one SQLite file with an FTS5 index over them."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="moot-graph-")
            path = Path(self._tmp.name) / "sources.sqlite3"
        else:
            self._tmp = None
        self.path = Path(path)
        self.conn = sqlite3.connect(self.path, check_same_thread=False)
        self.conn.executescript(
            "CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY, source TEXT NOT NULL, text TEXT NOT NULL);"
            "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (text, content='chunks', content_rowid='id',"
            " tokenize='porter unicode61 remove_diacritics 2');"
        )
        self.sources: list[str] = []
        self.newest_year: int | None = None

    def close(self) -> None:
        self.conn.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> SourceIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ adding

    def add_text(self, source: str, lines: Iterable[str], progress: Callable[[str, int], None] | None = None) -> int:
        """Chunk and store one source; returns how many chunks it gave."""
        from moot.teams.graph.quantify import years_in

        count = 0
        batch: list[tuple[str, str]] = []

        def flush() -> None:
            with self.conn:
                for src, text in batch:
                    cur = self.conn.execute("INSERT INTO chunks (source, text) VALUES (?, ?)", (src, text))
                    self.conn.execute("INSERT INTO chunks_fts (rowid, text) VALUES (?, ?)", (cur.lastrowid, text))
            batch.clear()

        for text in chunk_text(lines):
            batch.append((source, text))
            years = [y for y in years_in(text)]
            if years:
                self.newest_year = max(self.newest_year or 0, max(years))
            count += 1
            if len(batch) >= 200:
                flush()
                if progress:
                    progress(source, count)
        flush()
        if progress:
            progress(source, count)
        if count:
            self.sources.append(source)
        return count

    def add_file(self, path: str | Path, progress: Callable[[str, int], None] | None = None, *,
                 root: str | Path | None = None) -> int:
        """Chunk and store one text file, read through the one safe reader (a regular file only,
        at most :data:`MAX_SOURCE_BYTES`, no credentials; under ``root`` when one is given)."""
        path = Path(path).expanduser()
        if not path.exists():
            raise MootError(f"source {path} does not exist", fix="pass --source with the path of a text or Markdown file")
        if path.is_dir():
            raise MootError(f"source {path} is a folder", fix="pass the text or Markdown files inside it, e.g. --source DIR/*.md")
        with open_regular(path, root=root, max_bytes=MAX_SOURCE_BYTES, what="source") as fh:
            if b"\x00" in fh.read(8192):
                raise MootError(f"source {path} is a binary file", fix="pass text or Markdown files (convert PDFs and documents to text first)")
            if stream_contains_credentials(fh):
                raise credentials_error(f"source {path}")
            try:
                return self.add_text(path.name if path.name not in self.sources else str(path), text_lines(fh), progress)
            except UnicodeDecodeError:
                raise MootError(f"source {path} is not UTF-8 text",
                                fix="convert it to UTF-8 text or Markdown (e.g. iconv -t utf-8)") from None
            except OSError as exc:
                raise MootError(f"cannot read source {path}: {exc.strerror or exc}", fix="check the path and its permissions") from None

    def add_knowledge_base(self, kb: str | Path) -> int:
        """Every episode (the raw text ``moot learn`` kept) of a knowledge base, as sources."""
        from moot.memory import KnowledgeBase
        from moot.memory.store import resolve_path

        path = resolve_path(kb)
        if not path.exists():
            raise MootError(f"no knowledge base at {path}", fix="learn the sources first: moot learn FILE --kb NAME")
        total = 0
        with KnowledgeBase.open(path) as base:
            for episode in base.episodes():
                total += self.add_text(episode.source or f"episode {episode.id}", episode.text.splitlines())
        return total

    # ------------------------------------------------------------------ reading

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def chunk(self, chunk_id: int) -> Chunk | None:
        row = self.conn.execute("SELECT id, source, text FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
        return Chunk(*row) if row else None

    def search(self, text: str, limit: int = 3, *, min_shared: int = 1) -> list[Chunk]:
        """The chunks that best match ``text`` (BM25), sharing at least ``min_shared`` of its words."""
        query = build_match_query(text)
        if query is None:
            return []
        rows = self.conn.execute(
            "SELECT c.id, c.source, c.text FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
            "WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?", (query, limit * 4)).fetchall()
        terms = query_terms(text)
        out = []
        for row in rows:
            chunk = Chunk(*row)
            lowered = set(query_terms(chunk.text, max_terms=10_000))
            if sum(1 for t in terms if t in lowered or _stem_in(t, lowered)) >= min(min_shared, len(terms)):
                out.append(chunk)
                if len(out) >= limit:
                    break
        return out

    def locate(self, quote: str, hint: Iterable[Chunk] = ()) -> Chunk | None:
        """The chunk in which ``quote`` really occurs (case and spacing ignored), or ``None``.

        The chunks the agent was shown are checked first, then FTS candidates for the quote's words.
        """
        needle = normalise(quote).strip(" .\"'")
        if len(needle) < 3:
            return None
        for chunk in hint:
            if needle in normalise(chunk.text):
                return chunk
        for chunk in self.search(quote, limit=10):
            if needle in normalise(chunk.text):
                return chunk
        return None


def _stem_in(term: str, words: set[str]) -> bool:
    return any(w.startswith(term[:5]) for w in words) if len(term) >= 5 else False


__all__ = ["CHUNK_CHARS", "Chunk", "SourceIndex", "chunk_text", "normalise", "sentences"]
