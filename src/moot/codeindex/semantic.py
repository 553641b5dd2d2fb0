"""Optional semantic search: chunk vectors from a :class:`moot.models.embeddings.Embedder`, and RRF.

Lexical search is complete on its own and is the default. With embeddings (the optional
``moot[embeddings]`` extra, or any object with ``name`` and ``embed``), each chunk's vector is
stored once in ``chunk_vectors`` and a query is compared against all of them (a brute-force
dot product: exact, and fast enough for a few hundred thousand chunks with numpy). Hybrid
search fuses the lexical and semantic rankings by reciprocal rank fusion, which needs no
score calibration between BM25 and cosine.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Callable, Sequence
from typing import Any

from moot.models.embeddings import Embedder

EMBED_BATCH = 64
EMBED_LINES = 40
"""A chunk is embedded from its name and first lines: the signature and docstring say most."""
RRF_K = 60
"""The usual reciprocal-rank-fusion constant: a rank-1 hit scores 1/61."""


def _pack(vector: Sequence[float]) -> bytes:
    return array("f", vector).tobytes()


def embed_text(name: str, text: str) -> str:
    return name + "\n" + "\n".join(text.split("\n")[:EMBED_LINES])


def embed_missing(conn: sqlite3.Connection, embedder: Embedder, *, on_batch: Callable[[int], None] | None = None) -> int:
    """Embed every chunk without a vector for this embedder; returns how many were embedded."""
    done = 0
    while True:
        rows = conn.execute(
            "SELECT c.id, c.name, c.text FROM chunks c LEFT JOIN chunk_vectors v "
            "ON v.chunk_id = c.id AND v.model = ? WHERE v.chunk_id IS NULL LIMIT ?",
            (embedder.name, EMBED_BATCH),
        ).fetchall()
        if not rows:
            return done
        vectors = embedder.embed([embed_text(name, text) for _, name, text in rows])
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT OR REPLACE INTO chunk_vectors (chunk_id, model, vector) VALUES (?, ?, ?)",
            [(cid, embedder.name, _pack(vec)) for (cid, _, _), vec in zip(rows, vectors, strict=True)],
        )
        conn.execute("COMMIT")
        done += len(rows)
        if on_batch is not None:
            on_batch(done)


class VectorTable:
    """All chunk vectors of one model in one numpy matrix, loaded once per open index."""

    def __init__(self, conn: sqlite3.Connection, model: str) -> None:
        import numpy as np

        rows = conn.execute("SELECT chunk_id, vector FROM chunk_vectors WHERE model = ?", (model,)).fetchall()
        self.ids = [cid for cid, _ in rows]
        self.matrix: Any = (
            np.vstack([np.frombuffer(blob, dtype=np.float32) for _, blob in rows]) if rows else np.zeros((0, 1), np.float32)
        )
        norms = np.linalg.norm(self.matrix, axis=1, keepdims=True) if rows else None
        if norms is not None:
            self.matrix = self.matrix / np.where(norms == 0, 1, norms)

    def nearest(self, query: Sequence[float], limit: int) -> list[tuple[int, float]]:
        import numpy as np

        if not self.ids:
            return []
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q)) or 1.0
        scores = self.matrix @ (q / norm)
        top = np.argsort(-scores)[:limit]
        return [(self.ids[i], float(scores[i])) for i in top]


def rrf(rankings: Sequence[Sequence[int]], *, k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of several ranked id lists: ``sum(1 / (k + rank))``, best first."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
