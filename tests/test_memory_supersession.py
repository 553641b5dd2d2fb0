"""SUPERSEDES: the latest value wins, the history is kept, whatever order facts arrive in."""

from __future__ import annotations

import itertools
from datetime import date, datetime
from pathlib import Path

import pytest

from moot.memory import Fact, KnowledgeBase


@pytest.fixture
def kb(tmp_path: Path):  # type: ignore[no-untyped-def]
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        yield kb


def golds(value: str, day: int, **extra: object) -> Fact:
    return Fact(
        f"Norway has {value} gold medals after day {day}",
        entity="Norway",
        attribute="gold medals",
        value=value,
        source=f"Day {day} report",
        source_date=date(2026, 2, 6 + day),
        **extra,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("order", list(itertools.permutations([0, 1, 2])))
def test_history_and_current_do_not_depend_on_learning_order(kb: KnowledgeBase, order: tuple[int, ...]) -> None:
    facts = [golds("8", 7), golds("10", 8), golds("13", 10)]
    for i in order:
        kb.add_fact(facts[i])
    history = kb.history("norway", "Gold Medals")
    assert [f.value for f in history] == ["8", "10", "13"]
    assert [f.is_current for f in history] == [False, False, True]
    assert history[0].superseded_by == history[1].id and history[1].superseded_by == history[2].id
    assert kb.current("Norway", "gold medals").value == "13"  # type: ignore[union-attr]
    links = {(link.newer_id, link.older_id) for link in kb.links()}
    assert links == {(history[1].id, history[0].id), (history[2].id, history[1].id)}


def test_an_older_fact_arriving_late_is_stored_as_superseded(kb: KnowledgeBase) -> None:
    newer = kb.add_fact(golds("13", 10))
    older = kb.add_fact(golds("8", 7))
    assert not older.is_current and older.superseded_by == newer.id
    assert kb.get(newer.id).is_current  # type: ignore[arg-type, union-attr]
    assert kb.search("Norway gold medals")[0].fact.value == "13"  # superseded facts stay out of search
    assert {h.fact.value for h in kb.search("Norway gold medals", include_superseded=True)} == {"8", "13"}


def test_explicit_temporal_index_orders_facts_without_dates(kb: KnowledgeBase) -> None:
    kb.add_fact(Fact("The record is 9.8s", entity="100m", attribute="record", value="9.8s", temporal_index=2))
    kb.add_fact(Fact("The record is 9.9s", entity="100m", attribute="record", value="9.9s", temporal_index=1))
    assert kb.current("100m", "record").value == "9.8s"  # type: ignore[union-attr]


def test_an_undated_correction_supersedes_what_was_known(kb: KnowledgeBase) -> None:
    kb.add_fact(golds("13", 10))
    kb.add_fact(Fact("Actually Norway has 14 golds", entity="Norway", attribute="gold medals", value="14"))
    kb.add_fact(Fact("Correction: Norway has 15 golds", entity="Norway", attribute="gold medals", value="15"))
    assert [f.value for f in kb.history("Norway", "gold medals")] == ["13", "14", "15"]


def test_same_time_different_values_is_a_conflict_not_a_supersession(kb: KnowledgeBase) -> None:
    a = kb.add_fact(Fact("Attendance was 40,000", entity="Final", attribute="attendance", value="40000", source="Paper A", source_date=date(2026, 2, 22)))
    b = kb.add_fact(Fact("Attendance was 45,000", entity="Final", attribute="attendance", value="45000", source="Paper B", source_date=date(2026, 2, 22)))
    assert kb.get(a.id).is_current and kb.get(b.id).is_current  # type: ignore[arg-type, union-attr]
    [conflict] = kb.conflicts()
    assert {f.source for f in conflict} == {"Paper A", "Paper B"}
    # A later report settles it, superseding both.
    c = kb.add_fact(Fact("Attendance was 42,000", entity="Final", attribute="attendance", value="42000", source_date=datetime(2026, 2, 23, 9)))
    assert kb.conflicts() == []
    assert {f.superseded_by for f in kb.history("final", "attendance") if not f.is_current} == {c.id}


def test_repeating_a_value_later_does_not_supersede_it(kb: KnowledgeBase) -> None:
    first = kb.add_fact(golds("13", 10))
    repeat = kb.add_fact(Fact("Norway still has 13 gold medals", entity="Norway", attribute="gold medals", value="13", source_date=date(2026, 2, 17)))
    assert kb.get(first.id).is_current and repeat.is_current  # type: ignore[arg-type, union-attr]
    assert kb.links() == []


def test_exact_duplicates_are_stored_once_keeping_the_higher_confidence_and_all_sources(kb: KnowledgeBase) -> None:
    first = kb.add_fact(golds("13", 10, confidence=0.6, tags=("medals",)))
    again = kb.add_fact(Fact("NORWAY has 13 gold medals after day 10.", entity="norway", attribute="gold medals", value="13", source="Wire", source_date=date(2026, 2, 16), confidence=0.9, tags=("Norway",)))
    assert again.id == first.id
    assert kb.count() == 1
    assert again.confidence == 0.9
    assert again.tags == ("medals", "norway")
    assert again.also_from == ("Wire",)


def test_facts_without_entity_and_attribute_never_supersede(kb: KnowledgeBase) -> None:
    kb.add_fact(Fact("It snowed on day 3", source_date=date(2026, 2, 9)))
    kb.add_fact(Fact("It rained on day 4", source_date=date(2026, 2, 10)))
    assert kb.count(include_superseded=False) == 2
