"""Asking plainly: the pure choices Python makes from a model's odds (the runs are in
test_graph_family.py)."""

from __future__ import annotations

from moot.teams.graph import DEFAULT, FAMILY
from moot.teams.graph.plain import (
    is_name,
    kind_task,
    pick_kind,
    pick_relation,
    relation_questions,
    relation_task,
    yes_margin,
)


def test_only_a_vocabulary_whose_every_choice_is_a_question_asks_plainly() -> None:
    assert FAMILY.asks_plainly and not DEFAULT.asks_plainly


def test_an_asymmetric_relation_is_asked_both_ways_round_and_a_symmetric_one_once() -> None:
    questions = relation_questions(FAMILY, "Noah", "Karen")
    asked = {(q.relation, q.source, q.target): q.text for q in questions}
    assert asked == {
        ("married_to", "Noah", "Karen"): "Are Noah and Karen married to each other?",
        ("parent_of", "Noah", "Karen"): "Is Karen a child of Noah?",
        ("parent_of", "Karen", "Noah"): "Is Noah a child of Karen?",
        ("sibling_of", "Noah", "Karen"): "Are Noah and Karen siblings?",
    }
    task = relation_task("Noah is married to Hannah. They have a child called Karen.", questions[1])
    assert task.endswith("Is Karen a child of Noah? Answer yes or no.") and '"Noah is married to Hannah.' in task


def test_the_relation_drawn_is_the_clearest_yes_and_none_when_every_answer_leans_no() -> None:
    married, child_of_noah, child_of_karen, siblings = relation_questions(FAMILY, "Noah", "Karen")
    leaning = [(married, yes_margin({"yes": -0.9, "no": -0.5})), (child_of_noah, yes_margin({"yes": -0.2, "no": -1.9})),
               (child_of_karen, yes_margin({"yes": -0.6, "no": -0.8})), (siblings, yes_margin({"no": -0.1}))]
    assert pick_relation(leaning) == child_of_noah
    assert pick_relation([(q, -0.3) for q, _ in leaning]) is None
    assert yes_margin({}) == 0.0 and pick_relation([(married, 0.0)]) is None  # no odds either way: no link


def test_the_type_is_the_likeliest_of_the_vocabularys_own_answers() -> None:
    assert pick_kind(FAMILY, {"woman": -0.3, "man": -1.4, "a": -2.0}) == "woman"
    assert pick_kind(FAMILY, {"man": -2.2, "the": -0.1}) == "man"  # only the vocabulary's answers count
    assert pick_kind(FAMILY, {"yes": -0.1}) is None
    task = kind_task(FAMILY, "Karen", ["They have a child called Karen."])
    assert task == 'Text: "They have a child called Karen."\nIs Karen a man or a woman? Answer with one word.'


def test_a_name_is_a_label_whose_every_word_is_capitalised() -> None:
    assert is_name("Karen") and is_name("Ana Lima") and not is_name("child") and not is_name("the Lima family")
    assert not is_name("")


def test_asked_plainly_the_focus_is_the_questions_names_in_its_order_those_the_sources_name_first() -> None:
    from moot.teams.graph.plain import question_focus

    named = {"jacob", "barbara", "lisa"}
    assert question_focus("What relation is Jacob to Barbara? Answer with a single word.", FAMILY, named) == ("Jacob", "Barbara")
    assert question_focus("How is Lisa related to Jacob?", FAMILY, named) == ("Lisa", "Jacob")
    assert question_focus("Who is Ana?", FAMILY, set()) == ("Ana", "")
    assert question_focus("what about the child?", FAMILY, named) is None
