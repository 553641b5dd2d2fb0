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


def _crowded_kb(path: Path) -> KnowledgeBase:
    """200 facts that all say "event"; a few also name a rare sport or place."""
    kb = KnowledgeBase.open(path)
    facts = [Fact(f"Team {i} won the event in heat {i}", entity=f"Team {i % 7}", concept="results") for i in range(180)]
    facts += [
        Fact("Team 3 won the curling event in Cortina", entity="Team 3", concept="curling"),
        Fact("Team 4 lost the curling event in Cortina", entity="Team 4", concept="curling"),
        Fact("Team 5 won the curling final", entity="Team 5", concept="curling"),
        Fact("A curling stone broke during practice", entity="Venue", concept="curling"),
    ]
    facts += [Fact(f"Spectators queued for the luge event, gate {i}", entity="Venue", concept="luge") for i in range(16)]
    kb.add_facts(facts)
    return kb


def test_large_knowledge_bases_search_rare_terms_first_with_the_same_top_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.memory import search

    with _crowded_kb(tmp_path / "kb.sqlite3") as kb:
        exact = [h.fact.content for h in kb.search("which teams won the curling event in Cortina", limit=3)]
        # Make this small file count as large: "event" and "won" are then common, "curling" rare.
        monkeypatch.setattr(search, "LARGE_KB_FACTS", 10)
        monkeypatch.setattr(search, "OVERFETCH", 1)
        monkeypatch.setattr(search, "TIE_MARGIN", 1)
        fast = [h.fact.content for h in kb.search("which teams won the curling event in Cortina", limit=3)]
    assert fast[0] == exact[0] == "Team 3 won the curling event in Cortina"
    assert fast[1] == exact[1] == "Team 4 lost the curling event in Cortina"
    # Only facts with the rare words were ranked, and among those the common words broke the tie:
    # the fact saying "won" beats the one that shares no other word with the question.
    assert fast[2] == "Team 5 won the curling final"


def test_large_knowledge_base_search_falls_back_when_rare_terms_find_too_little(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.memory import search

    monkeypatch.setattr(search, "LARGE_KB_FACTS", 10)
    with _crowded_kb(tmp_path / "kb.sqlite3") as kb:
        # Four facts mention curling; ten are asked for, so facts with only "event" fill the rest.
        hits = kb.search("curling event", limit=10)
    assert len(hits) == 10
    assert {h.fact.content for h in hits[:4]} >= {"Team 3 won the curling event in Cortina", "Team 4 lost the curling event in Cortina"}


def test_entity_retrieval_on_an_entity_with_many_facts_returns_the_newest_current_ones(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        kb.add_facts([Fact(f"Harbor note {i}", entity="Harbor", temporal_index=i) for i in range(60)])
        kb.add_facts([Fact(f"Other note {i}", entity="Elsewhere", temporal_index=i) for i in range(30)])
        found = kb.retrieve("Harbor?", limit=5)
    assert found.strategy == "entity"
    assert [f.content for f in found.facts] == [f"Harbor note {i}" for i in (59, 58, 57, 56, 55)]
    assert "(60 in all)" in found.note
