"""The pieces a question that offers a choice is made of, and which of them only say when."""

from __future__ import annotations

from moot.teams.deliberation.options import request_pieces, request_sets, says_only_when
from moot.text import alternatives
from moot.text.phrases import choice_sets


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


def sets(text: str) -> list[list[str]]:
    return [[p.text for p in found] for found in choice_sets(text)]


def test_the_choices_an_alternation_sets_against_each_other_are_read_whole() -> None:
    # "and" joins the words of one choice; a comma before "or" does not end the first
    assert sets("Should I stay in tonight and fix the bike, or go to the climbing wall at 7?") == [
        ["stay in tonight and fix the bike", "go to the climbing wall at 7"]]
    # context sentences are not choices; an abbreviation's full stop ends nothing
    assert sets("Got back late from Leeds. Should I do the 7:00 swim or send the figures to Hart & Co.?") == [
        ["do the 7:00 swim", "send the figures to Hart & Co"]]
    # other alternations than "or", and a question's inverted frame left out
    assert sets("choir practice vs the call with Dr. Ames (20 min)") == [["choir practice", "the call with Dr. Ames"]]
    assert sets("Thinking of repainting the hall instead of the quiz night.") == [
        ["Thinking of repainting the hall", "the quiz night"]]
    assert sets("Is it better to go through the lease or go to yoga?") == [["go through the lease", "go to yoga"]]
    assert sets("either the gym or the pool") == [["the gym", "the pool"]]
    # a run of alternations is one set; a sentence without one has none
    assert sets("Swim or cycle or rest?") == [["Swim", "cycle", "rest"]]
    assert sets("Should I keep working tonight?") == []


def test_every_choice_is_a_span_of_the_text() -> None:
    text = "Long week.  The match is at 10 vs Riverside - should I play the match or rest my knee? Short of players."
    found = choice_sets(text)
    assert len(found) == 2
    for choice in (p for s in found for p in s):
        assert text[choice.start:choice.end] == choice.text


def test_a_request_with_an_alternation_offers_its_choices_whole_and_no_finer_pieces() -> None:
    assert request_pieces("Got home at 1am. Should I sleep in or go to the 6:45 squash with Tom?") == [
        "sleep in", "go to the 6:45 squash with Tom"]
    # a choice of time is no choice of options: the finer pieces are offered
    assert request_sets("Should I run tonight or tomorrow?") == []
    assert request_pieces("Should I run tonight or tomorrow?") == ["run tonight"]
    # a long choice is cut at a word's end
    long = "Should I rest or " + "finish the very long and detailed quarterly report for the regional board meeting on Friday morning" + "?"
    (piece,) = [p for p in request_pieces(long) if p != "rest"]
    at = long.find(piece)
    assert len(piece) <= 80 and at == len("Should I rest or ") and long[at + len(piece)] == " "


def test_a_choice_opening_with_a_verb_and_its_object_keeps_them() -> None:
    # "skip it" is a verb and its object, not a question's inverted frame
    assert sets("Kettlebell at 7:30, or should I skip it and build the desk?") == [["Kettlebell at 7:30", "skip it and build the desk"]]
