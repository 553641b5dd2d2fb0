"""Full-text search: any text is a safe query, and the relevant fact ranks first."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.memory import Fact, KnowledgeBase, build_match_query

NASTY_QUERIES = [
    'what\'s "Norway\'s" count?',
    '"unbalanced quote',
    "gold AND OR NOT medals",
    "NEAR(gold medals, 2)",
    "-norway",
    "entity:norway",
    "gold*",
    "^start",
    "(((",
    "a + b = c; DROP TABLE facts; --",
    "{curly} [square] <angle>",
    "Zürich café naïve — “smart quotes”",
    "日本 金メダル",
    "",
    "   ",
    "?!.,",
]


@pytest.fixture
def kb(tmp_path: Path):  # type: ignore[no-untyped-def]
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        kb.add_facts(
            [
                Fact("Norway won the gold medal in the men's biathlon relay", entity="Norway", concept="biathlon", tags=("medals",)),
                Fact("Italy hosted the opening ceremony in Milan", entity="Italy", concept="ceremony"),
                Fact("The curling final went to an extra end", entity="Curling", concept="curling"),
                Fact("Japan's skaters set a team record in Zürich café qualifiers", entity="Japan", concept="skating"),
                Fact("日本 won a 金メダル in ski jumping", entity="日本", concept="ski jumping"),
            ]
        )
        yield kb


@pytest.mark.parametrize("query", NASTY_QUERIES)
def test_user_text_never_breaks_the_query(kb: KnowledgeBase, query: str) -> None:
    hits = kb.search(query)
    assert isinstance(hits, list)
    assert kb.retrieve(query) if query.strip() else True


def test_operators_are_searched_as_words_not_obeyed(kb: KnowledgeBase) -> None:
    # Were "-norway" a column filter or NOT an operator, the Norway fact would be excluded.
    assert kb.search("NOT norway")[0].fact.entity == "Norway"
    assert build_match_query('gold" OR "x') == '"gold" OR "x"'
    assert build_match_query("?!") is None


def test_bm25_ranks_the_relevant_fact_first(kb: KnowledgeBase) -> None:
    hits = kb.search("Who won gold in the biathlon relay?")
    assert hits[0].fact.entity == "Norway"
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    assert kb.search("opening ceremony")[0].fact.entity == "Italy"
    assert kb.search("medals")[0].fact.entity == "Norway"  # tags are searchable
    assert kb.search("Zurich cafe")[0].fact.entity == "Japan"  # diacritics folded


def test_stemming_matches_word_forms(kb: KnowledgeBase) -> None:
    assert kb.search("hosting ceremonies")[0].fact.entity == "Italy"


def test_limit_is_respected(kb: KnowledgeBase) -> None:
    assert len(kb.search("the", limit=2)) <= 2
    assert kb.search("norway", limit=0) == []
