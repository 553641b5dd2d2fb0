"""Retrieval picks the strategy a question needs, says which, and returns the right facts."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from moot.errors import MootError
from moot.memory import Fact, KnowledgeBase, Strategy


def medal_facts() -> list[Fact]:
    facts = []
    for country, counts in {"Norway": [8, 10, 13], "Italy": [3, 4, 6], "Germany": [5, 7, 9]}.items():
        for day, count in zip((7, 8, 10), counts):
            facts.append(
                Fact(
                    f"{country} has {count} gold medals after day {day}",
                    entity=country,
                    attribute="gold medals",
                    value=str(count),
                    concept="medal table",
                    source=f"Day {day} report",
                    source_date=date(2026, 2, 6 + day),
                )
            )
    facts += [
        Fact("Norway's Johannes Klaebo won the sprint", entity="Norway", attribute="sprint winner", value="Klaebo", concept="cross-country"),
        Fact("Norway's biathlon team trains in Lillehammer", entity="Norway", attribute="training base", value="Lillehammer", concept="biathlon"),
        Fact("Italy's curling team reached the semi-final", entity="Italy", attribute="curling result", value="semi-final", concept="curling"),
        Fact("The ice hockey final was played in Milan", entity="Ice hockey", attribute="final venue", value="Milan", concept="ice hockey"),
    ]
    # Padding so the knowledge base is not "small" for limit=5.
    facts += [Fact(f"Volunteer shift {i} covered the ticket gates", concept="logistics") for i in range(10)]
    return facts


@pytest.fixture
def kb(tmp_path: Path):  # type: ignore[no-untyped-def]
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        kb.add_facts(medal_facts())
        yield kb


def test_a_small_knowledge_base_hands_over_every_current_fact(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "small.sqlite3") as kb:
        kb.add_facts(medal_facts()[:9])
        result = kb.retrieve("Tell me about Italy", limit=20)
    assert result.strategy is Strategy.ALL_FACTS
    assert len(result.facts) == 3 and all(f.is_current for f in result.facts)
    assert "small knowledge base" in result.note


def test_entity_question_returns_that_entitys_current_facts(kb: KnowledgeBase) -> None:
    result = kb.retrieve("What do we know about Norway's sprint?", limit=5)
    assert result.strategy is Strategy.ENTITY
    assert result.entities == ["Norway"]
    assert {f.entity for f in result.facts} == {"Norway"}
    assert result.facts[0].attribute == "sprint winner"  # the question's other words rank it first
    assert all(f.is_current for f in result.facts)
    assert "Norway" in result.note


def test_temporal_question_returns_the_history_in_time_order(kb: KnowledgeBase) -> None:
    result = kb.retrieve("How did Norway's gold medals change over the days?", limit=5)
    assert result.strategy is Strategy.TEMPORAL
    assert [f.value for f in result.facts] == ["8", "10", "13"]
    assert [f.is_current for f in result.facts] == [False, False, True]
    assert "latest: Norway gold medals = 13" in result.note
    assert "superseded" in result.render()


def test_when_question_without_entity_finds_histories_by_keyword(kb: KnowledgeBase) -> None:
    result = kb.retrieve("When was the ice hockey final played?", limit=5)
    assert result.strategy is Strategy.TEMPORAL
    assert result.facts[0].value == "Milan"


def test_aggregation_counts_by_entity(kb: KnowledgeBase) -> None:
    result = kb.retrieve("How many countries have gold medals?", limit=5)
    assert result.strategy is Strategy.AGGREGATION
    assert {(g.key, g.count) for g in result.groups} == {("Norway", 1), ("Italy", 1), ("Germany", 1)}
    assert all(f.is_current for f in result.facts)  # counts use the latest values only
    assert sorted(f.value for f in result.facts) == ["13", "6", "9"]
    assert "3 groups by entity" in result.note


def test_aggregation_about_an_entity_groups_by_concept(kb: KnowledgeBase) -> None:
    result = kb.retrieve("List all the facts about Norway", limit=5)
    assert result.strategy is Strategy.AGGREGATION
    assert {g.key for g in result.groups} == {"medal table", "cross-country", "biathlon"}
    assert sum(g.count for g in result.groups) == len(result.facts) == 3


def test_the_opening_cue_decides_between_counting_and_time(kb: KnowledgeBase) -> None:
    assert kb.retrieve("When did the total number of golds change?").strategy is Strategy.TEMPORAL
    assert kb.retrieve("How many times did the gold count change?").strategy is Strategy.AGGREGATION


def test_short_question_uses_keyword_search(kb: KnowledgeBase) -> None:
    result = kb.retrieve("curling semi-final", limit=5)
    assert result.strategy is Strategy.KEYWORD
    assert result.facts[0].attribute == "curling result"


def test_long_question_uses_two_phase_rerank(kb: KnowledgeBase) -> None:
    result = kb.retrieve("which team trains for biathlon events in Lillehammer in the winter", limit=3)
    assert result.strategy is Strategy.TWO_PHASE
    assert result.facts[0].attribute == "training base"
    assert "reranking" in result.note


def test_strategy_can_be_forced_and_bad_input_is_refused(kb: KnowledgeBase) -> None:
    assert kb.retrieve("Norway", strategy="keyword").strategy is Strategy.KEYWORD
    with pytest.raises(MootError, match="unknown retrieval strategy"):
        kb.retrieve("Norway", strategy="psychic")
    with pytest.raises(MootError, match="question is empty"):
        kb.retrieve("  ")


def test_retrieval_serialises_for_traces(kb: KnowledgeBase) -> None:
    data = kb.retrieve("How many countries have gold medals?").to_dict()
    assert data["strategy"] == "aggregation" and data["groups"] and data["facts"][0]["source_date"]


def test_a_question_naming_a_month_or_year_gets_the_history_not_only_the_current_value(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt

    from moot.memory import Fact, KnowledgeBase

    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        kb.add_fact(Fact("Oxygen at Mill Bridge was 4.1 mg/L", entity="Mill Bridge", attribute="oxygen", value="4.1 mg/L",
                         source_date=dt.date(2026, 1, 10)))
        kb.add_fact(Fact("Oxygen at Mill Bridge was 6.3 mg/L", entity="Mill Bridge", attribute="oxygen", value="6.3 mg/L",
                         source_date=dt.date(2026, 5, 12)))
        found = kb.retrieve("What was the oxygen level at Mill Bridge in January 2026?")
        current_only = kb.retrieve("What is the oxygen level at Mill Bridge?")
    assert found.strategy == "temporal"
    assert [f.value for f in found.facts] == ["4.1 mg/L", "6.3 mg/L"]  # the January value is there, superseded
    assert [f.value for f in current_only.facts] == ["6.3 mg/L"]
