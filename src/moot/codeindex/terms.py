"""Identifier-aware search terms: ``read_file`` and ``ReadFile`` both match "read file".

SQLite's FTS5 tokenizers split on underscores but not on case changes, and they cannot be
extended from Python. So the index does not give FTS5 the raw code: it gives it a *term
stream* made here, where each identifier is followed by its lower-cased parts (``CodeIndex``
→ ``codeindex code index``). Queries go through the same function, so a person's words, a
model's snake_case guess and the real CamelCase name all meet on the same terms.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[^\W\d_][\w]*|\d+", re.UNICODE)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)

MAX_QUERY_TERMS = 24
"""A longer query keeps its first terms: more adds cost and no precision."""

STOPWORDS = frozenset(
    """a an and are as at be by can could do does done for from happen happens handled how i if in
    into is it its implemented of on or should so that the their then there these this to was
    what when where which who why will with work works""".split()
)
"""Words that carry nothing in a question about code ("how are retries handled", "where does
the config work"): dropped from queries, so BM25 ranks by the words that name the subject."""


def identifier_parts(word: str) -> list[str]:
    """The lower-cased parts of one identifier: ``HTTPServer_v2`` → ``["http", "server", "v2"]``."""
    parts: list[str] = []
    for piece in word.split("_"):
        if not piece:
            continue
        found = _CAMEL.findall(piece)
        parts.extend(p.lower() for p in found) if found else parts.append(piece.lower())
    # Digits stuck to a word ("v2", "utf8") read better joined to it.
    merged: list[str] = []
    for part in parts:
        if part.isdigit() and merged and not merged[-1].isdigit():
            merged.append(merged.pop() + part)
        else:
            merged.append(part)
    return merged


@lru_cache(maxsize=65536)
def _word_terms(word: str) -> str:
    # Code repeats its identifiers endlessly; caching their split makes indexing ~2x faster.
    parts = identifier_parts(word)
    joined = "".join(parts) or word.lower()
    return " ".join([joined, *parts]) if len(parts) > 1 else joined


def term_stream(text: str) -> str:
    """The text as FTS5 should see it: every word, then the parts of compound identifiers."""
    return " ".join(map(_word_terms, _WORD.findall(text)))


def query_terms(text: str, *, max_terms: int = MAX_QUERY_TERMS) -> list[str]:
    """The distinct terms of a query, stop words dropped unless nothing else is left."""
    terms = term_stream(text).split()
    kept = [t for t in terms if t not in STOPWORDS] or terms
    # A short query of plain words is often an identifier spelled out: "user data dir" also
    # searches "userdatadir", "userdata" and "datadir", the joined forms that the index holds for
    # user_data_dir / userDataDir. Those are rare terms, so the definition so named ranks first.
    # Longer questions are left alone: their word pairs ("rate limit") would outweigh the subject.
    words = [w.lower() for w in _WORD.findall(text) if w.lower() not in STOPWORDS]
    joined = (
        [
            "".join(words[i : i + n])
            for n in (3, 2)
            for i in range(len(words) - n + 1)
            if all(w.isalpha() for w in words[i : i + n])
        ]
        if len(words) <= 3
        else []
    )
    seen: dict[str, None] = {}
    for term in [*kept, *joined]:
        seen.setdefault(term, None)
        if len(seen) >= max_terms:
            break
    return list(seen)


def match_query(text: str) -> str | None:
    """An FTS5 MATCH expression that user text cannot break (every term quoted, joined by OR)."""
    terms = query_terms(text)
    if not terms:
        return None
    # A term is \w only, so it never contains a double quote: operators stay inert.
    return " OR ".join(f'"{t}"' for t in terms)
