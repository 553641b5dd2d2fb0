"""Asking plainly: the pure choices Python makes from a model's odds (the runs are in
test_graph_family.py)."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest

from moot.models import UNLISTED_LOGPROB
from moot.teams.graph import DEFAULT, FAMILY
from moot.teams.graph.plain import (
    answer_odds,
    how_task,
    is_name,
    kind_task,
    pick_how,
    pick_kind,
    pick_relation,
    pick_target,
    pick_targets,
    relation_questions,
    relation_task,
    target_task,
    yes_margin,
)


def test_a_vocabulary_asks_plainly_when_its_choices_are_questions_and_a_long_one_in_two_steps() -> None:
    assert FAMILY.asks_plainly and not FAMILY.asks_in_two_steps  # three relations: each asked about each pair
    assert DEFAULT.asks_plainly and DEFAULT.asks_in_two_steps  # fifteen: what each thing affects, then how
    assert not DEFAULT.listed().asks_plainly and not FAMILY.listed().asks_plainly
    broken = replace(DEFAULT, link_relation="nothing of the vocabulary")
    assert not broken.asks_in_two_steps and not broken.asks_plainly  # no fallback relation: never half asked


def test_a_one_word_answer_counts_the_tokens_that_begin_it() -> None:
    odds = {"fac": -0.7, "facility": -1.2, "place": -1.0, "a": -0.5, "organ": -3.0}
    scored = answer_odds(odds, ["facility", "place", "substance", "organism"])
    assert scored["facility"] == pytest.approx(math.log(math.exp(-0.7) + math.exp(-1.2)))
    assert scored["place"] == -1.0 and scored["organism"] == -3.0
    assert scored["substance"] == UNLISTED_LOGPROB  # "a" begins it, but one letter begins too much
    assert pick_kind(DEFAULT, odds) == "facility"
    assert pick_kind(DEFAULT, {"the": -0.1}) is None
    assert pick_how(DEFAULT, {"in": -0.1, "re": -0.2}) == "related_to"  # two letters begin too many answers
    assert answer_odds({"organ": -1.0}, ["organisation", "organism"]) == {"organisation": -1.0, "organism": -1.0}


def test_each_thing_a_text_names_is_linked_to_the_thing_whose_word_most_likely_begins_what_it_affects() -> None:
    targets = [("river", "Varn river"), ("lake", "Lake Mira"), ("waste", "waste water")]
    assert pick_target({"lake": -0.4, "varn": -1.2, "the": -0.1}, targets) == ("lake", -0.4)
    best = pick_target({"wast": -0.5, "waste": -0.9, "lake": -2.0}, targets)  # a token that begins the word counts too
    assert best is not None and best[0] == "waste" and best[1] == pytest.approx(math.log(math.exp(-0.5) + math.exp(-0.9)))
    assert pick_target({"the": -0.1, "it": -0.5}, targets) is None  # the answer begins with no target's word: no link
    assert pick_target({"lake": -0.4}, []) is None
    # a made-up name's first token is a piece of it; an article is not the word it begins
    assert pick_target({"g": -0.3, "the": -0.1}, [("x", "Varn river"), ("y", "Grelmoth farm")]) == ("y", -0.3)
    assert pick_target({"a": -0.1, "it": -0.2}, [("x", "apple"), ("y", "item")]) is None
    assert pick_target({"to": -0.6, "the": -0.1}, [("x", "Tormish yard"), ("y", "Varn river")]) == ("x", -0.6)
    # two targets of one first word tie, and the first listed is drawn
    assert pick_target({"lake": -0.4}, [("mira", "Lake Mira"), ("tarn", "lake shore")]) == ("mira", -0.4)
    # a pair each end picked as the other's target is drawn once, the surer way; one pick per source
    picks = [("mill", "lake", -0.3), ("lake", "mill", -1.5), ("river", "lake", -0.8)]
    assert pick_targets(picks) == [("mill", "lake"), ("river", "lake")]
    assert pick_targets([("a", "b", -2.0), ("b", "a", -0.2)]) == [("b", "a")]
    assert pick_targets([]) == []


def test_a_link_drawn_is_the_relation_whose_word_is_likeliest_else_the_fallback() -> None:
    assert pick_how(DEFAULT, {"uses": -0.4, "causes": -1.0}) == "uses"
    assert pick_how(DEFAULT, {"loc": -0.3, "causes": -2.0}) == "located_in"
    assert pick_how(DEFAULT, {"the": -0.1}) == "related_to"
    asked = target_task(DEFAULT, "The mill draws water from the river.", "Ostby mill")
    assert asked.startswith('Text: "The mill draws water from the river."')
    assert asked.endswith("what does Ostby mill affect? Answer with words from the text.")
    how = how_task(DEFAULT, "The mill draws water from the river.", "Ostby mill", "Varn river")
    assert "links Ostby mill to Varn river: causes, increases, decreases," in how and how.endswith("Answer with one word.")


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

    named = {"jacob": "Jacob", "barbara": "Barbara", "lisa": "Lisa"}
    assert question_focus("What relation is Jacob to Barbara? Answer with a single word.", FAMILY, named) == ("Jacob", "Barbara")
    assert question_focus("How is Lisa related to Jacob?", FAMILY, named) == ("Lisa", "Jacob")
    assert question_focus("Who is Ana?", FAMILY, {}) == ("Ana", "")
    assert question_focus("what about the child?", FAMILY, named) is None


def reader(*, says_no: bool = False, how_fails: bool = False, target_fails: str = ""):  # type: ignore[no-untyped-def]
    """A model with a reader's odds for the default vocabulary's plain questions (the test reads its
    own questions); every other agent is the scripted one, routed by its output schema."""
    from moot.models import ModelResponse
    from moot.models.testing import FunctionModel
    from test_graph_support import LINKS, TYPES, GraphScript

    script = GraphScript()
    asked: list[str] = []
    whole: list[str] = []
    script.whole = whole  # type: ignore[attr-defined]  # each plain question with its text
    relation = {(s.split(f" {w} ")[0], s.split(f" {w} ")[1]): w for s in LINKS for w in ("uses", "produces", "decreases", "supplies")
                if f" {w} " in s}

    async def reply(request):  # type: ignore[no-untyped-def]
        if not request.settings.top_logprobs:
            return await script(request)
        question = str(request.messages[-1].content).split("\n")[-1]
        asked.append(question)
        whole.append(str(request.messages[-1].content))
        if m := re.search(r'What is "(.+?)" in this text', question):
            kind = TYPES.get(m[1], "")
            return ModelResponse(text="x", top_logprobs={kind.split()[0]: -0.2, "the": -2.0} if kind and " " not in kind else {"the": -0.1})
        if m := re.search(r"what does (.+?) affect\? Answer with words from the text", question):
            # what the thing affects in this text, in a reader's eyes: the first word of each
            text = str(request.messages[-1].content).split("\n")[0]
            if target_fails and target_fails in text and whole.count(whole[-1]) == 1:
                raise RuntimeError("the first target call about this text fails")
            affected = [b for (a, b) in relation if a == m[1] and b.split()[-1] in text] if not says_no else []
            return ModelResponse(text="the", top_logprobs={"the": -1.0, **{b.split()[0].lower(): -0.3 for b in affected}})
        m = re.search(r"links (.+?) to (.+?): ", question)
        assert m, question
        if how_fails:
            raise RuntimeError("the relation call fails")
        return ModelResponse(text="x", top_logprobs={relation.get((m[1], m[2]), "the"): -0.2})

    return FunctionModel(reply), script, asked


def run_plainly(tmp_path, model, question: str = "How does the Ostby mill affect Lake Mira?"):  # type: ignore[no-untyped-def]
    from moot.teams.graph import GraphConfig, GraphTeam
    from test_graph_support import make_sources

    config = GraphConfig(iterations=2, hypotheses=False, max_calls=200)
    return GraphTeam(make_sources(tmp_path / "src"), model=model, config=config).ask_sync(question)


def test_a_run_asked_in_two_steps_draws_the_links_the_odds_show_with_the_relation_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model, script, asked = reader()
    result = run_plainly(tmp_path, model)
    s = result.scaffold
    drawn = {(s.label_of(e.source), e.type, s.label_of(e.target)) for e in s.edges.values() if not e.provisional}
    assert ("Ostby mill", "uses", "Varn river") in drawn and ("Varn river", "supplies", "Lake Mira") in drawn
    assert ("Ostby mill", "produces", "waste") in drawn
    assert all(f"{a} {r} {b}".replace("_", " ") in LINKS_READ for a, r, b in drawn)
    assert not {"EntityChoices", "LinkChoices", "AliasChoices"} & set(script.calls)  # no listed choice was asked
    assert any("what does Varn river affect?" in q for q in asked) and any("what does Lake Mira affect?" in q for q in asked)
    targets = [t for t in script.whole if "what does" in t]
    assert len(targets) == len(set(targets))  # each thing of a text asked once, however many pairs it is in
    # the sentence is shown with the one before it in its paragraph, whose things may link across:
    # the mill, the waste and the lake here, the river there, each asked once (the mill is in both)
    two = [t for t in targets if t.startswith('Text: "The Ostby mill draws water from the Varn river. In 2024 the paper mill')]
    assert sorted(t.split("what does ")[1].split(" affect")[0] for t in two) == ["Lake Mira", "Ostby mill", "Varn river", "waste"]
    hows = [q for q in asked if q.startswith("Which word says how")]
    assert len(hows) == len(drawn)  # the relation is asked only for a link drawn
    assert result.scaffold.path  # the mill reaches the lake by quoted hops
    for e in s.edges.values():
        if not e.provisional:
            assert all(x.quote and x.quote in (MILL_BODY + RIVER_BODY) for x in e.evidence)


def test_a_model_that_says_no_to_every_pair_draws_no_edge_from_the_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model, script, asked = reader(says_no=True)
    result = run_plainly(tmp_path, model)
    assert not [e for e in result.scaffold.edges.values() if not e.provisional]
    assert not any(q.startswith("Which word says how") for q in asked)
    assert any("what does Ostby mill affect?" in q for q in asked)


def _bodies() -> tuple[str, str, set[str]]:
    from moot.text import read_front_matter
    from test_graph_support import LINKS, MILL, RIVER

    return " ".join(read_front_matter(MILL).body.split()), " ".join(RIVER.split()), set(LINKS)


MILL_BODY, RIVER_BODY, LINKS_READ = _bodies()


def test_a_path_is_read_from_cause_to_effect_whichever_end_the_question_names_first(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model, _, _ = reader()
    result = run_plainly(tmp_path, model, "What did Lake Mira lose, and how is the Ostby mill linked to it?")
    s = result.scaffold
    assert s.label_of(s.subject) == "Ostby mill" and s.label_of(s.object) == "Lake Mira"
    assert s.path and all(hop.forward for hop in s.path)


def test_a_question_phrase_is_named_by_the_sources_in_another_word_order() -> None:
    from moot.teams.graph.plain import question_focus
    from moot.teams.graph.scaffold import label_key

    named = {label_key(x): x for x in ("paper mill at Ostby", "Lake Mira")}
    question = "What did Lake Mira lose, and how is the Ostby mill linked to it?"
    assert question_focus(question, DEFAULT, named) == ("Lake Mira", "Ostby mill")
    assert question_focus(question, DEFAULT, {label_key("Lake Mira"): "Lake Mira"}) == ("Lake Mira", "")


def test_the_answer_path_runs_through_stated_links_before_any_placeholder() -> None:
    from moot.teams.graph.paths import answer_path, find_path
    from moot.teams.graph.scaffold import Evidence, Scaffold

    s = Scaffold()
    chain = ["mill", "waste", "nitrogen", "algae", "oxygen", "trout"]
    ids = {label: s.add_entity(label)[0].id for label in chain}
    for a, b in zip(chain, chain[1:]):
        edge, _ = s.add_edge(ids[a], ids[b], "causes", evidence=[Evidence(source="a.md", quote=f"{a} feeds {b}.")],
                             provisional=False)
        edge.strength = 0.4
    gap, _ = s.add_gap("Nobody knows why the trout declined.", [ids["mill"], ids["trout"]])
    s.add_placeholder(gap, "unknown factor")  # a two-hop guess beside the five weak stated hops
    guessed = find_path(s, ids["mill"], ids["trout"])
    assert any(hop.provisional for hop in guessed)  # cheaper by cost alone
    stated = answer_path(s, ids["mill"], ids["trout"])
    assert [hop.target for hop in stated] == [ids[x] for x in chain[1:]] and not any(h.provisional for h in stated)
    del s.edges[next(e for e in s.edges if s.edges[e].source == ids["algae"])]
    assert any(hop.provisional for hop in answer_path(s, ids["mill"], ids["trout"]))  # no stated chain: the guess


def test_a_link_whose_relation_call_failed_is_not_drawn_but_asked_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model, _, asked = reader(how_fails=True)
    result = run_plainly(tmp_path, model)
    assert not [e for e in result.scaffold.edges.values() if not e.provisional]  # no guessed relation drawn
    first = [q for q in asked if q.startswith("Which word says how the text links Ostby mill to Varn river")]
    assert len(first) >= 2  # the pair was asked again in the second iteration
    assert sum("what does Ostby mill affect?" in q for q in asked) >= 2


def test_a_text_whose_target_call_failed_is_asked_again_and_linked_then(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model, script, _ = reader(target_fails="The Varn river supplies Lake Mira.")
    result = run_plainly(tmp_path, model)
    s = result.scaffold
    drawn = {(s.label_of(e.source), e.type, s.label_of(e.target)) for e in s.edges.values() if not e.provisional}
    again = [t for t in script.whole if t.startswith('Text: "The Varn river supplies Lake Mira."') and "what does" in t]
    assert len(again) == 4  # its two things, asked in the first iteration and again in the second
    assert ("Varn river", "supplies", "Lake Mira") in drawn  # drawn once the call answered


def test_only_stated_directed_hops_decide_which_way_a_path_is_read() -> None:
    from moot.teams.graph.paths import runs_against_links
    from moot.teams.graph.scaffold import PathHop

    def hop(forward: bool, type: str = "causes", provisional: bool = False) -> PathHop:
        return PathHop(edge="e", source="a", target="b", type=type, forward=forward, strength=0.5, provisional=provisional)

    symmetric = {"related_to"}
    assert runs_against_links([hop(False), hop(False), hop(True)], symmetric)
    assert not runs_against_links([hop(False), hop(True)], symmetric)  # a tie keeps the question's order
    # a symmetric relation's hop and a placeholder's guess have no stated direction: they do not vote
    assert not runs_against_links([hop(True), hop(False, "related_to"), hop(False, provisional=True)], symmetric)
    assert not runs_against_links([], symmetric)


def test_a_question_that_asks_twice_names_one_end_in_each_clause_by_its_first_phrase() -> None:
    from moot.teams.graph.plain import question_ends
    from moot.teams.graph.scaffold import label_key

    named = {label_key(x): x for x in ("Grelmoth ferry", "closure of the Tormish quarry", "Tormish quarry", "tides")}
    ends = question_ends("Why was the Grelmoth ferry laid up in May, and what connects the closure of the Tormish quarry to it?",
                         DEFAULT, named)
    assert ends is not None
    (first, first_clause), (last, last_clause) = ends
    assert first == "Grelmoth ferry"
    assert last == "closure of the Tormish quarry"  # the whole phrase, not the place inside it
    assert first_clause.startswith("Why was") and last_clause.endswith("to it")
    # "links" before an article is the clause's verb, never an end
    ends = question_ends("Why did the tides rise, and what links the Tormish quarry to them?", DEFAULT, named)
    assert ends is not None and ends[1][0] == "Tormish quarry"
    # a list, or a place set before the question, does not make a second clause: the phrases decide
    assert question_ends("How did the tides, the ferry and the Tormish quarry change?", DEFAULT, named) is None
    assert question_ends("In Grelmoth, how did the Tormish quarry change the tides?", DEFAULT, named) is None
    assert question_ends("How does the Ostby mill affect Lake Mira?", DEFAULT, named) is None
    assert question_ends("What relation is Jacob to Barbara? Answer with a single word.", FAMILY, {}) is None


def test_the_clause_breaks_a_tie_between_entities_a_question_phrase_names_equally() -> None:
    from moot.teams.graph.build import Entities, match_phrase
    from moot.teams.graph.candidates import Candidate
    from moot.teams.graph.scaffold import label_key

    entities = Entities(DEFAULT)
    for label in ("Quellish dairy", "price of Quellish cheese"):
        entities.accept(Candidate(label_key(label), label), "measure", {}, 1)
    clause = "Why did the price of Quellish cheese rise"
    assert entities.info[match_phrase(entities, "Quellish")].label == "Quellish dairy"  # alone: the first seen
    assert entities.info[match_phrase(entities, "Quellish", clause)].label == "price of Quellish cheese"
    assert match_phrase(entities, "harvest", clause) is None  # the phrase must name it; the clause only breaks ties


def test_the_end_a_clause_asks_about_is_what_it_says_happened_not_who_did_it() -> None:
    # "Why did the harbour board cancel the net sale": a reader's end is the cancellation, which the
    # board did; where nothing shares a word with what happened ("close"), the clause's phrase decides
    from moot.teams.graph.build import Entities, match_end
    from moot.teams.graph.candidates import Candidate

    entities = Entities(DEFAULT)
    for i, label in enumerate(("harbour board", "net loft", "cancellation of the net sale"), 1):
        entities.accept(Candidate(label, label, [i]), "organisation", {}, 1)
    clause = "Why did the harbour board cancel the net sale"
    assert entities.info[match_end(entities, "harbour board", clause, "cancel the net sale")].label == "cancellation of the net sale"
    assert entities.info[match_end(entities, "harbour board", "Why did the harbour board close", "close")].label == "harbour board"
    assert entities.info[match_end(entities, "harbour board", clause)].label == "harbour board"  # no event read: the phrase
