"""Consolidation merges what says the same thing, keeps what differs, and prunes weak superseded facts."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from moot.errors import MootError
from moot.memory import Fact, KnowledgeBase, consolidate


@pytest.fixture
def kb(tmp_path: Path):  # type: ignore[no-untyped-def]
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        yield kb


def test_near_duplicates_merge_into_the_most_confident_keeping_tags_and_sources(kb: KnowledgeBase) -> None:
    a = kb.add_fact(Fact("Norway won 13 gold medals", entity="Norway", source="Wire", confidence=0.6, tags=("medals",)))
    b = kb.add_fact(Fact("Norway has won 13 gold medals.", entity="Norway", source="Daily", confidence=0.9, tags=("norway",)))
    c = kb.add_fact(Fact("norway won thirteen... no: Norway won 13 gold medal", entity="Norway", source="Blog", confidence=0.5))
    other = kb.add_fact(Fact("Norway won 13 silver medals", entity="Norway", confidence=0.7))
    report = consolidate(kb)
    [merge] = report.merged
    assert merge.kept_id == b.id and set(merge.removed_ids) == {a.id}
    kept = kb.get(b.id)
    assert kept is not None and kept.tags == ("norway", "medals") and kept.also_from == ("Wire",)
    assert kb.get(a.id) is None
    assert kb.get(c.id) is not None and kb.get(other.id) is not None  # different wording / different medal
    assert (report.facts_before, report.facts_after) == (4, 3)
    assert kb.search("Norway gold medals")[0].fact.id == b.id  # the index follows the merge
    assert "merged 1 duplicate facts into 1" in report.describe()


def test_different_numbers_or_entities_never_merge(kb: KnowledgeBase) -> None:
    long_tail = " during the second week of the games in the northern mountain venues near the lake"
    kb.add_fact(Fact("Ticket sales rose 5 percent" + long_tail))
    kb.add_fact(Fact("Ticket sales rose 6 percent" + long_tail))
    kb.add_fact(Fact("The team won the relay", entity="Norway"))
    kb.add_fact(Fact("The team won the relay", entity="Sweden"))
    assert consolidate(kb, similarity=0.8).merged == []
    assert kb.count() == 4


def test_prunes_weak_superseded_facts_and_keeps_history_consistent(kb: KnowledgeBase) -> None:
    weak = kb.add_fact(Fact("Norway may have 9 golds", entity="Norway", attribute="golds", value="9", confidence=0.2, source_date=date(2026, 2, 12)))
    solid = kb.add_fact(Fact("Norway has 10 golds", entity="Norway", attribute="golds", value="10", confidence=0.9, source_date=date(2026, 2, 13)))
    newest = kb.add_fact(Fact("Norway has 13 golds", entity="Norway", attribute="golds", value="13", confidence=0.95, source_date=date(2026, 2, 16)))
    weak_current = kb.add_fact(Fact("Italy might have 2 golds", entity="Italy", attribute="golds", value="2", confidence=0.1))
    report = consolidate(kb, prune_below=0.3)
    assert [p.id for p in report.pruned] == [weak.id]
    assert kb.get(weak_current.id) is not None  # weak but current: still the best we know
    assert [f.id for f in kb.history("Norway", "golds")] == [solid.id, newest.id]
    assert [(link.newer_id, link.older_id) for link in kb.links()] == [(newest.id, solid.id)]


def test_weak_fact_replaced_by_another_weak_fact_is_kept(kb: KnowledgeBase) -> None:
    kb.add_fact(Fact("rumour: 9", entity="X", attribute="n", value="9", confidence=0.2, temporal_index=1))
    kb.add_fact(Fact("rumour: 10", entity="X", attribute="n", value="10", confidence=0.1, temporal_index=2))
    assert consolidate(kb).pruned == []


def test_dry_run_reports_without_changing_anything(kb: KnowledgeBase) -> None:
    kb.add_fact(Fact("Italy hosted the games", entity="Italy", confidence=0.5))
    kb.add_fact(Fact("Italy has hosted the Games.", entity="Italy", source="Other", confidence=0.6))
    report = consolidate(kb, similarity=0.9, dry_run=True)
    assert report.dry_run and len(report.merged) == 1 and report.facts_after == 1
    assert kb.count() == 2
    assert "would merge" in report.describe()


def test_bad_thresholds_are_refused(kb: KnowledgeBase) -> None:
    with pytest.raises(MootError, match="similarity"):
        consolidate(kb, similarity=0)
    with pytest.raises(MootError, match="prune_below"):
        consolidate(kb, prune_below=2)
