"""A question's own clauses (moot.text.questions): where one question asks two things."""

from __future__ import annotations

from moot.text import opens_question, question_clauses


def test_a_question_that_asks_twice_parts_before_its_second_interrogative_word() -> None:
    assert question_clauses("Why did the Grelmoth ferry stop, and what links the Tormish quarry to it?") == [
        "Why did the Grelmoth ferry stop", "what links the Tormish quarry to it"]
    assert question_clauses("Which function parses the header? Where is it called from?") == [
        "Which function parses the header", "Where is it called from"]
    assert question_clauses("What sets the rate; who pays it?") == ["What sets the rate", "who pays it"]


def test_a_list_or_a_short_opening_is_not_a_clause() -> None:
    assert question_clauses("How did the tides, the ferry and the quarry change?") == [
        "How did the tides, the ferry and the quarry change"]
    assert question_clauses("In Grelmoth, how did the quarry change the tides?") == ["how did the quarry change the tides"]


def test_a_clause_asks_when_it_opens_with_an_interrogative_word() -> None:
    assert opens_question("and what links the quarry to it")
    assert opens_question("Why did the ferry stop")
    assert not opens_question("Answer with a single word.")
    assert not opens_question("")


def test_what_a_clause_says_happened_runs_from_its_last_main_verb() -> None:
    from moot.text import predicate

    assert predicate("Why is the harbour board shutting its net loft") == "shutting its net loft"
    assert predicate("What led the council to sell the old quay") == "sell the old quay"
    assert predicate("Why was the ferry laid up in May") == "laid up in May"  # "was" only marks the voice
    assert predicate("Why is it") == ""  # no verb but an auxiliary
