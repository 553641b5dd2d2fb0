"""The pieces a question that offers a choice is made of, and which of them only say when."""

from __future__ import annotations

from moot.teams.deliberation.options import request_pieces, says_only_when
from moot.text import alternatives


def test_a_choice_is_cut_at_its_conjunctions_modals_and_punctuation() -> None:
    pieces = alternatives("Tomorrow at 7am, should I do the hill repeats or go over the quarterly review slides?")
    assert [p.text for p in pieces] == ["Tomorrow at 7am", "do the hill repeats", "go over the quarterly review slides"]
    assert all(p.kind == "alternative" for p in pieces)
    # a dash is punctuation, an apostrophe is not; the leading "to" of a piece goes
    assert [p.text for p in alternatives("Saturday at 8pm — piano practice or to Mira's housewarming?")] == [
        "Saturday at 8pm", "piano practice", "Mira's housewarming"]
    # a question about one thing is one piece, without its "should I"
    assert [p.text for p in alternatives("Should I keep working tonight?")] == ["keep working tonight"]


def test_every_piece_is_a_span_of_the_text() -> None:
    text = "I slept badly. Should I go to the 6:30 pool session, or write the budget memo?"
    for p in alternatives(text):
        assert text[p.start:p.end] == p.text


def test_a_piece_that_only_says_when_is_not_offered_as_an_option() -> None:
    assert says_only_when("Tomorrow at 7am") and says_only_when("this evening at 7") and says_only_when("tonight")
    assert not says_only_when("go over the slides at 7am") and not says_only_when("piano practice")
    assert request_pieces("This evening at 7, should I go over the slides or practise the piano?") == [
        "go over the slides", "practise the piano"]
    # a piece that opens with a preposition says when or where, not what
    assert request_pieces("After work today, should I go to the gym or call my sister?") == ["go to the gym", "call my sister"]
    # each once, in the request's order
    assert request_pieces("Piano or slides? Piano or slides?") == ["Piano", "slides"]
