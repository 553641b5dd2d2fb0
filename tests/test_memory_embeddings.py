"""Embeddings are optional: a clear error without the extra, and a seam any embedder plugs into."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from moot.errors import MootError
from moot.memory import Fact, KnowledgeBase, Strategy, load_default_embedder
from moot.memory.embeddings import EMBEDDINGS_MODULE


@pytest.mark.skipif(importlib.util.find_spec(EMBEDDINGS_MODULE) is not None, reason="the embeddings extra is installed")
def test_missing_extra_gives_one_line_naming_the_install_command() -> None:
    with pytest.raises(MootError) as info:
        load_default_embedder()
    line = info.value.one_line()
    assert "pip install 'moot[embeddings]'" in line and "\n" not in line


class SynonymEmbedder:
    """A tiny deterministic embedder: words mapped onto a few concept axes, so synonyms meet."""

    name = "synonyms-test"
    AXES = {"gold": 0, "first-place": 0, "first": 0, "victory": 0, "won": 0, "snow": 1, "weather": 1, "ticket": 2}

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += len(texts)
        vectors = []
        for text in texts:
            vector = [0.0, 0.0, 0.0, 0.01]
            for word in re.findall(r"[\w-]+", text.lower()):
                if word in self.AXES:
                    vector[self.AXES[word]] += 1.0
            vectors.append(vector)
        return vectors


def test_an_embedder_adds_semantic_reranking_and_vectors_are_cached(tmp_path: Path) -> None:
    embedder = SynonymEmbedder()
    with KnowledgeBase.open(tmp_path / "kb.sqlite3", embedder=embedder) as kb:
        kb.add_facts([Fact(f"Weather note {i}: snow expected at the venues of the games") for i in range(30)])
        kb.add_facts([Fact("Norway took first-place finishes at the games venues of the relay")])
        question = "which country took the gold victory at the games venues"
        result = kb.retrieve(question, limit=3)
        assert result.strategy is Strategy.TWO_PHASE
        assert "semantic similarity" in result.note
        assert result.facts[0].content.startswith("Norway")
        calls = embedder.calls
        kb.retrieve(question, limit=3)
        assert embedder.calls == calls + 1  # only the question is embedded again
        stored = kb.database.conn.execute("SELECT COUNT(*) FROM fact_embeddings").fetchone()[0]
        assert stored == 31
