"""Evidence for the graph: the user's sources read as documents (front matter → metadata, body →
sentences), searched with SQLite FTS5, and the mechanical check that a quote really occurs.

A source's front matter (YAML between ``---`` lines, TOML between ``+++`` lines, or a first
``Date:`` line, read by :func:`moot.text.read_front_matter`) is *metadata*: its title, its
publisher, author and date are kept on the :class:`Document` and are never evidence or
entities. The body is cut into sentences, list items and table rows by
:func:`moot.text.split_units` (headings and code blocks carry no claim and are left out); each
unit is one row, so every quote the team stores is a sentence of a source by construction.

Files are read line by line and written to a SQLite file in batches, so a huge source costs
disk, not memory. Search uses the memory layer's query builder (user and model text is never
FTS syntax) and BM25.
"""

from __future__ import annotations

import itertools
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from moot.errors import MootError
from moot.files import credentials_error, open_regular, stream_contains_credentials, text_lines, wide_unicode
from moot.memory.search import build_match_query, query_terms
from moot.text import read_front_matter, split_units
from moot.text.frontmatter import FrontMatterError

MAX_SOURCE_BYTES = 512 * 1024 * 1024
"""A single source larger than this is refused (it would take hours for the model to read)."""

BATCH_CHARS = 20_000
"""Body text is cut into units this many characters at a time (at a blank line), so memory stays flat."""

_QUOTE_CHARS = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})
_FRONT_MATTER_LINES = 400
_EVIDENCE_KINDS = ("sentence", "item", "row")


def normalise(text: str) -> str:
    """Text for quote matching: case, curly quotes, dashes and runs of whitespace ignored."""
    return " ".join(text.translate(_QUOTE_CHARS).lower().split())


@dataclass(frozen=True)
class Sentence:
    """One sentence (or list item, or table row) of a source's body."""

    id: int
    source: str
    position: int
    """Its place in the source, from 0."""
    block: int
    """The paragraph, list or table it belongs to."""
    text: str


@dataclass(frozen=True)
class Document:
    """One source and what its front matter says about it: provenance, never content."""

    name: str
    title: str = ""
    publisher: str = ""
    author: str = ""
    published: str = ""
    """ISO date, or empty."""
    sentences: int = 0
    meta_keys: list[str] = field(default_factory=list)

    def provenance_names(self) -> list[str]:
        """Who published or wrote it: never entities of its world (nor is the document itself, its title)."""
        return [n for n in dict.fromkeys((self.publisher, self.author)) if n]

    @property
    def year(self) -> int | None:
        return int(self.published[:4]) if self.published[:4].isdigit() else None


def _split_head(lines: Iterator[str]) -> tuple[dict[str, object], Iterator[str]]:
    """Read the front matter off the first lines (if any); returns its fields and the body's lines."""
    first = next(lines, None)
    if first is None:
        return {}, iter(())
    head = [first]
    opener = first.lstrip("\ufeff").strip()
    if opener in ("---", "+++"):
        for line in itertools.islice(lines, _FRONT_MATTER_LINES):
            head.append(line)
            if line.strip() in (opener, "...") and len(head) > 1:
                break
    matter = read_front_matter("".join(h if h.endswith("\n") else h + "\n" for h in head))
    fields: dict[str, object] = {}
    if matter.format != "none":
        try:
            published = matter.published
        except FrontMatterError:
            published = None
        if isinstance(published, datetime):
            published = published.date()
        fields = {"title": matter.title, "publisher": matter.source, "author": matter.author,
                  "published": published.isoformat() if isinstance(published, date) else "",
                  "meta_keys": sorted(matter.meta)}
    return fields, itertools.chain(matter.body.splitlines(keepends=True), lines)


def _body_batches(lines: Iterable[str], size: int = BATCH_CHARS) -> Iterator[str]:
    """The body in pieces of about ``size`` characters, cut only at a blank line outside a code fence."""
    buf: list[str] = []
    length = 0
    fenced = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        buf.append(line if line.endswith("\n") else line + "\n")
        length += len(line)
        if not stripped and not fenced and length >= size:
            yield "".join(buf)
            buf, length = [], 0
    if buf:
        yield "".join(buf)


class SourceIndex:
    """Every source's sentences in one SQLite file with an FTS5 index over them, and its documents."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="moot-graph-")
            path = Path(self._tmp.name) / "sources.sqlite3"
        else:
            self._tmp = None
        self.path = Path(path)
        self.conn = sqlite3.connect(self.path, check_same_thread=False)
        self.conn.executescript(
            "CREATE TABLE IF NOT EXISTS sentences (id INTEGER PRIMARY KEY, source TEXT NOT NULL, position INTEGER NOT NULL,"
            " block INTEGER NOT NULL, text TEXT NOT NULL);"
            "CREATE INDEX IF NOT EXISTS sentences_place ON sentences (source, position);"
            "CREATE VIRTUAL TABLE IF NOT EXISTS sentences_fts USING fts5 (text, content='sentences', content_rowid='id',"
            " tokenize='porter unicode61 remove_diacritics 2');"
        )
        self.sources: list[str] = []
        """Sources with at least one sentence, in the order read."""
        self.documents: dict[str, Document] = {}
        """Every source read (one with only front matter too), by name."""
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
        """Read one source (front matter, then body sentences); returns how many sentences it gave."""
        meta, body = _split_head(iter(lines))
        count = position = block_offset = 0
        batch: list[tuple[str, int, int, str]] = []

        def flush() -> None:
            with self.conn:
                for row in batch:
                    cur = self.conn.execute("INSERT INTO sentences (source, position, block, text) VALUES (?, ?, ?, ?)", row)
                    self.conn.execute("INSERT INTO sentences_fts (rowid, text) VALUES (?, ?)", (cur.lastrowid, row[3]))
            batch.clear()

        for piece in _body_batches(body):
            units = split_units(piece)
            for unit in units:
                if unit.kind not in _EVIDENCE_KINDS:
                    continue  # a heading or a code block states no claim
                batch.append((source, position, block_offset + unit.block, unit.render()))
                position += 1
                count += 1
            block_offset += (units[-1].block + 1) if units else 0
            if len(batch) >= 500:
                flush()
                if progress:
                    progress(source, count)
        flush()
        if progress:
            progress(source, count)
        document = Document(name=source, sentences=count, **meta)  # type: ignore[arg-type]
        self.documents[source] = document
        years = [document.year] if document.year else []
        if not years and count:
            from moot.teams.graph.quantify import years_in

            for (text,) in self.conn.execute("SELECT text FROM sentences WHERE source = ?", (source,)):
                years += years_in(text)
        if years:
            self.newest_year = max(self.newest_year or 0, max(years))
        if count:
            self.sources.append(source)
        return count

    def add_file(self, path: str | Path, progress: Callable[[str, int], None] | None = None, *,
                 root: str | Path | None = None) -> int:
        """Read one text file through the one safe reader (a regular file only, at most
        :data:`MAX_SOURCE_BYTES`, no credentials; under ``root`` when one is given)."""
        path = Path(path).expanduser()
        if not path.exists():
            raise MootError(f"source {path} does not exist", fix="pass --source with the path of a text or Markdown file")
        if path.is_dir():
            raise MootError(f"source {path} is a folder", fix="pass the text or Markdown files inside it, e.g. --source DIR/*.md")
        with open_regular(path, root=root, max_bytes=MAX_SOURCE_BYTES, what="source") as fh:
            head = fh.read(8192)
            wide = wide_unicode(head)
            if wide is not None:
                raise MootError(f"source {path} is {wide.upper()} text, not UTF-8",
                                fix=f"convert it to UTF-8, e.g. iconv -f {wide} -t utf-8 {path.name} > {path.stem}.utf8{path.suffix}")
            if b"\x00" in head:
                raise MootError(f"source {path} is a binary file", fix="pass text or Markdown files (convert PDFs and documents to text first)")
            if stream_contains_credentials(fh):
                raise credentials_error(f"source {path}")
            try:
                name = path.name if path.name not in self.documents else str(path)
                return self.add_text(name, text_lines(fh), progress)
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
                total += self.add_text(episode.source or f"episode {episode.id}", episode.text.splitlines(keepends=True))
        return total

    # ------------------------------------------------------------------ reading

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM sentences").fetchone()[0])

    def sentence(self, sentence_id: int) -> Sentence | None:
        row = self.conn.execute("SELECT id, source, position, block, text FROM sentences WHERE id = ?", (sentence_id,)).fetchone()
        return Sentence(*row) if row else None

    def all(self, limit: int) -> list[Sentence]:
        """The first ``limit`` sentences of every source, in reading order."""
        rows = self.conn.execute("SELECT id, source, position, block, text FROM sentences ORDER BY id LIMIT ?", (limit,))
        return [Sentence(*r) for r in rows]

    def neighbour(self, sentence: Sentence, step: int) -> Sentence | None:
        """The sentence ``step`` places after (or before) this one in its source."""
        row = self.conn.execute("SELECT id, source, position, block, text FROM sentences WHERE source = ? AND position = ?",
                                (sentence.source, sentence.position + step)).fetchone()
        return Sentence(*row) if row else None

    def search(self, text: str, limit: int = 3, *, min_shared: int = 1) -> list[Sentence]:
        """The sentences that best match ``text`` (BM25), sharing at least ``min_shared`` of its words."""
        query = build_match_query(text)
        if query is None:
            return []
        rows = self.conn.execute(
            "SELECT s.id, s.source, s.position, s.block, s.text FROM sentences_fts JOIN sentences s ON s.id = sentences_fts.rowid "
            "WHERE sentences_fts MATCH ? ORDER BY bm25(sentences_fts) LIMIT ?", (query, limit * 4)).fetchall()
        terms = query_terms(text)
        out = []
        for row in rows:
            found = Sentence(*row)
            lowered = set(query_terms(found.text, max_terms=10_000))
            if sum(1 for t in terms if t in lowered or _stem_in(t, lowered)) >= min(min_shared, len(terms)):
                out.append(found)
                if len(out) >= limit:
                    break
        return out

    def locate(self, quote: str, hint: Iterable[Sentence] = ()) -> Sentence | None:
        """The sentence in which ``quote`` really occurs (case and spacing ignored), or ``None``.

        A quote of two adjacent sentences is found by its first sentence."""
        needle = normalise(quote).strip(" .\"'")
        if len(needle) < 3:
            return None
        for found in hint:
            if needle in normalise(found.text):
                return found
        for found in self.search(quote, limit=10):
            if needle in normalise(found.text):
                return found
            following = self.neighbour(found, 1)
            if following is not None and needle in normalise(f"{found.text} {following.text}"):
                return found
        return None


def _stem_in(term: str, words: set[str]) -> bool:
    return any(w.startswith(term[:5]) for w in words) if len(term) >= 5 else False


__all__ = ["Document", "MAX_SOURCE_BYTES", "Sentence", "SourceIndex", "normalise"]
