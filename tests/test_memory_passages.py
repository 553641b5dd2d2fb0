"""Source passages: the paragraphs of stored articles that match a question best."""

from __future__ import annotations

from pathlib import Path

from moot.memory import KnowledgeBase
from moot.memory.passages import find_passages, split_paragraphs

ARTICLE_A = """# Drain sealed

The council sealed the Tannery Lane storm drain on 14 April, so plastic no longer reaches the river.

Volunteers met at the Harbour Street depot as usual and collected 12 bags of waste."""

ARTICLE_B = """# Oxygen rises

Dissolved oxygen at Mill Bridge rose to 6.3 mg/L in May. Biologists credit the sealed Tannery Lane drain.

The river festival drew a large crowd to the depot."""


def test_the_paragraph_with_the_rarest_shared_words_ranks_first(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        kb.add_episode(ARTICLE_A, source="Herald", published="2026-04-15")
        kb.add_episode(ARTICLE_B, source="Riverwatch", published="2026-05-20")
        found = find_passages(kb, "Why did the oxygen at Mill Bridge rise?", limit=2)
    assert [p.source for p in found] == ["Riverwatch"]  # only one paragraph shares two or more words
    assert found[0].text.startswith("Dissolved oxygen at Mill Bridge rose to 6.3 mg/L")
    assert found[0].published == "2026-05-20"


def test_no_passage_for_a_single_stray_word_and_none_from_an_empty_base(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        assert find_passages(kb, "What did the depot sell?") == []
        kb.add_episode(ARTICLE_A, source="Herald")
        kb.add_episode(ARTICLE_B, source="Riverwatch")
        assert find_passages(kb, "What did the depot sell on Sundays?") == []


def test_titles_are_dropped_and_long_paragraphs_are_cut_at_sentences() -> None:
    long = " ".join(f"Sentence number {i} is here." for i in range(60))
    pieces = split_paragraphs(f"# Title\n\n{long}\n\nShort one.", max_chars=200)
    assert all(len(p) <= 200 for p in pieces)
    assert pieces[0].startswith("Sentence number 0 is here.") and pieces[-1] == "Short one."
    assert " ".join(pieces[:-1]) == long


def test_source_sentences_skip_headings(tmp_path: Path) -> None:
    from moot.memory.passages import find_source_sentences

    with KnowledgeBase.open(tmp_path / "h.sqlite3") as kb:
        kb.add_episode("# Lanterns over the river\nRiver Post, 14 October 2024. Lanterns were floated from Orley Bridge.",
                       source="River Post", published="2024-10-14")
        [found] = find_source_sentences(kb, "From which bridge were the lanterns floated over the river?")
        assert all(not s.startswith("#") for s in found.sentences)
        assert "Lanterns were floated from Orley Bridge." in found.sentences
