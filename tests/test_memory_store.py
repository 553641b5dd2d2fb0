"""The knowledge-base file: where it lives, what it refuses, and that it persists and is shared."""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

import pytest

from moot import config
from moot.errors import MootError
from moot.memory import SCHEMA_VERSION, Fact, KnowledgeBase


def test_name_resolves_under_moot_home_and_path_dirs_are_created(tmp_path: Path) -> None:
    with KnowledgeBase.open("olympics") as kb:
        assert kb.path == config.home() / "kb" / "olympics.sqlite3"
        assert kb.path.exists()
    nested = tmp_path / "a" / "b" / "kb.sqlite3"
    with KnowledgeBase.open(nested) as kb:
        assert kb.path == nested
    assert nested.exists()


def test_facts_and_episodes_persist_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite3"
    with KnowledgeBase.open(path) as kb:
        episode = kb.add_episode("Norway won 3 golds on day 1.", source="Day 1", published="2026-02-07")
        kb.add_fact(Fact("Norway won 3 golds on day 1", entity="Norway", attribute="golds", value="3", episode_id=episode.id))
        kb.set_source_summary("Day 1", "Opening day results.")
    with KnowledgeBase.open(path) as kb:
        [fact] = kb.facts()
        assert fact.source == "Day 1"  # inherited from the episode
        assert fact.source_date == date(2026, 2, 7)
        assert kb.episode(episode.id).text == "Norway won 3 golds on day 1."  # type: ignore[union-attr]
        [info] = kb.sources()
        assert (info.facts, info.episodes, info.summary) == (1, 1, "Opening day results.")
        assert kb.search("golds")[0].fact.id == fact.id


def test_two_knowledge_base_objects_on_one_file_see_each_others_writes(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    with KnowledgeBase.open(path) as writer, KnowledgeBase.open(path) as reader:
        assert reader.count() == 0
        writer.add_fact(Fact("Italy leads the curling table", entity="Italy", attribute="curling rank", value="1"))
        assert reader.count() == 1
        assert "italy" in reader.entities()  # the entity cache notices the other connection's commit
        reader.add_fact(Fact("Italy dropped to second in curling", entity="Italy", attribute="curling rank", value="2"))
        assert writer.current("Italy", "curling rank").value == "2"  # type: ignore[union-attr]
        assert reader.database.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_file_that_is_not_sqlite_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 50)
    with pytest.raises(MootError) as info:
        KnowledgeBase.open(path)
    line = info.value.one_line()
    assert "not a moot knowledge base" in line and str(path) in line and "fix:" in line
    assert "\n" not in line
    assert path.read_text().startswith("these are my notes")  # untouched


def test_an_unrelated_sqlite_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(MootError, match="not a moot knowledge base"):
        KnowledgeBase.open(path)
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"customers"}


def test_a_knowledge_base_from_a_newer_moot_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    KnowledgeBase.open(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(MootError) as info:
        KnowledgeBase.open(path)
    assert "newer moot" in str(info.value) and "upgrade moot" in info.value.fix


def test_a_directory_or_a_bad_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MootError, match="is a directory"):
        KnowledgeBase.open(tmp_path)
    with pytest.raises(MootError, match="not a usable knowledge-base name"):
        KnowledgeBase.open("my kb!")


def test_empty_content_and_bad_confidence_are_refused_clearly() -> None:
    with pytest.raises(MootError, match="content is empty"):
        Fact("   ")
    with pytest.raises(MootError, match="between 0 and 1"):
        Fact("x", confidence=1.5)


def test_empty_episode_and_bad_dates_are_refused(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        with pytest.raises(MootError, match="text is empty"):
            kb.add_episode("  ")
        with pytest.raises(MootError, match="is not a date"):
            kb.add_episode("text", published="next tuesday")
        # a month is a date (its first day): a monthly report is stored, not refused
        kb.add_episode("A monthly report.", published="2026-09")
        assert [str(e.published) for e in kb.episodes()] == ["2026-09-01"]
        with pytest.raises(MootError, match="episode 99 does not exist"):
            kb.add_fact(Fact("x", episode_id=99))


def test_the_same_episode_is_stored_once(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        first = kb.add_episode("Same article text.", source="Daily")
        again = kb.add_episode("Same article text.", source="Daily")
        assert first.id == again.id and len(kb.episodes()) == 1


def test_a_failed_batch_stores_nothing(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        with pytest.raises(MootError):
            kb.add_facts([Fact("fine"), Fact("points at a missing episode", episode_id=7)])
        assert kb.count() == 0


def test_summary_reports_counts_entities_sources_and_dates(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        kb.add_facts(
            [
                Fact("Norway has 10 golds", entity="Norway", attribute="golds", value="10", source="Day 5", source_date=date(2026, 2, 11), concept="medals"),
                Fact("Norway has 12 golds", entity="Norway", attribute="golds", value="12", source="Day 7", source_date=date(2026, 2, 13), concept="medals"),
                Fact("Italy has 4 golds", entity="Italy", attribute="golds", value="4", source="Day 7", source_date=date(2026, 2, 13), concept="medals"),
            ]
        )
        summary = kb.summary()
    assert (summary.facts, summary.current_facts, summary.superseded_facts, summary.supersedes_links) == (3, 2, 1, 1)
    assert summary.entities == [("Italy", 1), ("Norway", 1)]
    assert summary.sources == ["Day 5", "Day 7"]
    assert (summary.earliest, summary.latest) == (date(2026, 2, 11), date(2026, 2, 13))
    assert summary.to_dict()["latest"] == "2026-02-13"


_WRITER = """
import sys
from moot.memory import Fact, KnowledgeBase
path, who = sys.argv[1], sys.argv[2]
with KnowledgeBase.open(path) as kb:
    for i in range(40):
        kb.add_fact(Fact(f"{who} wrote fact {i}", entity=who, attribute="counter", value=str(i), temporal_index=i))
"""


def test_two_processes_can_write_the_same_file_at_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "busy.sqlite3"
    KnowledgeBase.open(path).close()
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), who], stderr=subprocess.PIPE, text=True)
        for who in ("alpha", "beta")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    with KnowledgeBase.open(path) as kb:
        assert kb.count() == 80
        assert kb.current("alpha", "counter").value == "39"  # type: ignore[union-attr]
        assert len(kb.history("beta", "counter")) == 40


def test_a_version_1_file_is_upgraded_in_place_and_keeps_its_facts(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite3"
    with KnowledgeBase.open(path) as kb:
        kb.add_fact(Fact("The ferry runs hourly", entity="Ferry", attribute="schedule", value="hourly"))
    with sqlite3.connect(path) as conn:  # make it look like a file written by moot with schema 1
        conn.execute("DROP INDEX facts_current_by_entity")
        conn.execute("DROP TABLE documents")
        conn.execute("DROP TABLE source_texts")
        conn.execute("PRAGMA user_version = 1")
    with KnowledgeBase.open(path) as kb:
        assert [f.content for f in kb.facts()] == ["The ferry runs hourly"]
        assert kb.documents() == []
        assert kb.source_texts() == {}
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'facts_current_by_entity'").fetchone()
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'documents'").fetchone()
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'source_texts'").fetchone()


def test_store_source_forgets_an_old_version_and_writes_the_new_one_in_one_transaction(tmp_path: Path) -> None:
    from moot.memory import DocumentRecord

    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        old = Fact("The pier has 40 berths.", entity="Pier", attribute="berths", value="40 berths")
        kept = Fact("The pier opened in 1911.", entity="Pier")
        kb.store_source("Notes", [("The pier has 40 berths.", [old]), ("The pier opened in 1911.", [kept])],
                        published="2026-03-01", document=DocumentRecord("Notes", "/x/notes.md", "a" * 64))
        stale = next(e.id for e in kb.episodes(source="Notes") if "40" in e.text)
        new = Fact("The pier has 55 berths.", entity="Pier", attribute="berths", value="55 berths")
        with pytest.raises(MootError):  # a failure half-way (not a fact) changes nothing
            kb.store_source("Notes", [("The pier has 55 berths.", [new]), ("x", ["not a fact"])], forget=[stale])  # type: ignore[list-item]
        assert [f.value for f in kb.history("Pier", "berths")] == ["40 berths"] and len(kb.episodes()) == 2
        kb.store_source("Notes", [("The pier has 55 berths.", [new])], published="2026-03-01", forget=[stale],
                        summary="A pier.", document=DocumentRecord("Notes", "/x/notes.md", "b" * 64))
        assert [f.value for f in kb.history("Pier", "berths")] == ["55 berths"]
        assert sorted(e.text for e in kb.episodes()) == ["The pier has 55 berths.", "The pier opened in 1911."]
        assert kb.document(path="/x/notes.md").sha256 == "b" * 64  # type: ignore[union-attr]
        assert kb.sources()[0].summary == "A pier."


def test_a_stored_fact_reads_back_with_every_field(tmp_path: Path) -> None:
    import datetime as dt

    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        stored = kb.add_fact(
            Fact("  The  ferry runs hourly ", entity="Ferry", attribute="schedule", value="hourly", confidence=0.6,
                 tags=("Transport", "port"), source="Harbor News", source_date=dt.date(2025, 3, 4))
        )
        again = kb.get(stored.id)
    assert again == stored
    assert (again.content, again.tags, again.confidence, again.source_date) == (
        "The ferry runs hourly", stored.tags, 0.6, dt.date(2025, 3, 4)
    )
    assert again.is_current and again.created_at is not None


def test_sources_of_one_date_are_shown_in_one_order_whatever_order_they_were_learned_in(tmp_path: Path) -> None:
    from moot.memory.units import source_units, whole_sources

    texts = {"b-notice.md": "The hall opens at nine.", "a-letter.md": "Tea is served at four.", "c-faq.md": "Parking is free."}
    seen = []
    for n, order in enumerate((["b-notice.md", "a-letter.md", "c-faq.md"], ["c-faq.md", "b-notice.md", "a-letter.md"])):
        kb = KnowledgeBase.open(tmp_path / f"hall{n}.sqlite3")
        for name in order:  # learned side by side, the files finish in any order
            kb.store_source(name, [(texts[name], [Fact(texts[name])])], published="2026-04-01")
        seen.append(([s.source for s in whole_sources(kb)], [u.source for u in source_units(kb)]))
        kb.close()
    assert seen[0] == seen[1] == (["a-letter.md", "b-notice.md", "c-faq.md"], ["a-letter.md", "b-notice.md", "c-faq.md"])
