"""Asking: the question frame, recall, the specialist contract, the checker and the selection.

Every test runs on a real SQLite knowledge base holding source passages, and a FunctionModel that
answers by the calling agent's name — so a test sees which specialists ran, what each chose and
what the user gets, including when the model reads the question wrongly.
"""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from moot.errors import MootError
from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.runtime import RunStore
from moot.teams.learning import LearningTeam, ROLES
from moot.teams.learning.ask.checker import Evidence, check
from moot.teams.learning.ask.drafts import Draft, Verdict
from moot.teams.learning.ask.frame import kind_options
from moot.teams.learning.ask.recall import recall
from moot.teams.learning.ask.select import UNKNOWN, select
from moot.teams.learning.specialists import REGISTRY
from moot.teams.learning.specialists.compute import CalculationRefused, evaluate
from moot.teams.learning.specialists.common import Amount
from moot.teams.learning.specialists.dates import between
from moot.teams.learning.specialists.sources import compare
from moot.teams.learning.specialists.steps import answer_by_position
from moot.teams.learning.ask.recall import Passage, Recall, StepList

SOURCES = [
    ("Harbour Gazette: Pier reopens", "2025-03-01",
     "The Ashby Pier reopened on 1 March 2025 after a two-year repair.\n\n"
     "The repair cost 2.4 million pounds. The pier has 40 berths.\n\n"
     "To book a berth:\n\n1. Call the harbour office.\n2. Pay the deposit.\n3. Collect the gate key."),
    ("Harbour Gazette: Summer at the pier", "2025-07-10",
     "By 10 July 2025 the Ashby Pier had 55 berths. The repair finally cost 3.1 million pounds.\n\n"
     "The pier closed in 2023 because storm waves cracked its main beam."),
    ("Ashby Boat Club newsletter", "2025-07-10",
     "The club counts 48 berths at the Ashby Pier this summer."),
]


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    base = KnowledgeBase.open(tmp_path / "pier.sqlite3")
    for source, published, text in SOURCES:
        base.store_source(source, [(text, [Fact(text.split(". ")[0], entity="Ashby Pier")])], published=published)
    yield base
    base.close()


class Router:
    """One canned behaviour per agent (the frame, the plain draft, each specialist), and a log."""

    def __init__(self, **answers: Any) -> None:
        self.calls: list[str] = []
        self.answers = answers

    async def __call__(self, request: ModelRequest) -> Any:
        role = request.agent or "?"
        self.calls.append(role)
        answer = self.answers.get(role)
        if callable(answer):
            return answer(request)
        if answer is not None:
            return answer
        if role == "frame":
            options = request.output.json_schema["properties"]["asks_for"]["enum"]  # type: ignore[union-attr]
            return {"asks_for": options[0], "about": [], "unit": ""}
        if role == "single":
            return "The Ashby Pier has 40 berths."
        return {}


def team(kb: KnowledgeBase, router: Router, **kwargs: Any) -> LearningTeam:
    return LearningTeam(kb, model=FunctionModel(router), store=kwargs.pop("store", False), budget="deep", **kwargs)


def ask(kb: KnowledgeBase, question: str, router: Router, mode: str = "multi", **kwargs: Any) -> Any:
    return team(kb, router, **kwargs).ask_sync(question, mode=mode)


def menu_ids(request: ModelRequest, field: str) -> list[str]:
    schema = request.output.json_schema  # type: ignore[union-attr]
    prop = schema["properties"][field]
    if "items" in prop:
        prop = prop["items"]
    return [o for o in prop.get("enum", []) if o != "none"]


def listed_dates(request: ModelRequest) -> dict[str, str]:
    """The dates the `dates` specialist was shown, by id (``d1`` …), each with its whole line."""
    return {line.split(":")[0]: line for line in request.messages[-1].content.splitlines() if line.startswith("d")}


def span_of(start: str, end: str, unit: str) -> Any:
    """A scripted `dates` choice: the listed dates whose lines hold ``start`` and ``end``, and ``unit``."""
    def choose(request: ModelRequest) -> Any:
        ids = listed_dates(request)
        return {"start": next(i for i, line in ids.items() if start in line),
                "end": next(i for i, line in ids.items() if end in line), "unit": unit}
    return choose


def line_of(request: ModelRequest, needle: str) -> str:
    return next(line for line in request.messages[-1].content.splitlines() if needle in line)


# --------------------------------------------------------------------------- the frame


def test_the_questions_form_proposes_the_kinds_the_model_chooses_among() -> None:
    assert kind_options("Why did the pier close?") == ["cause"]
    assert kind_options("How many days after the repair began did the pier reopen?")[0] == "duration"
    assert "what_if" in kind_options("If the repair had cost 1 million, how much would be left?")
    assert "steps" in kind_options("What is the first thing to do to book a berth?")
    assert kind_options("When did the pier reopen?") == ["date", "duration"]
    # a calendar word that anchors the question is not what it counts: money, not a span of time
    paid = kind_options("Had the school bought all the power it used in the first year, how much more would it have paid?")
    assert "duration" not in paid and "what_if" in paid
    assert "duration" in kind_options("Had the ban been lifted, how many weeks would the lake have needed to refill?")
    assert "duration" in kind_options("What was the number of days between the two readings?")
    # "when" inside a clause asks nothing: this is a yes/no question about a shared tank, not a date
    tank = kind_options("If both generators draw from one shared tank, does the second protect the ward when that tank runs empty?")
    assert "date" not in tank and "duration" not in tank and "value" in tank
    assert kind_options("According to the report, what was the root cause?")[0] == "value"  # after two prepositions
    # "how many more" asks for a difference of two figures, never one figure
    assert kind_options("How many more berths does the pier have now than in March?") == ["comparison", "change"]
    # a "when" with no auxiliary after it opens a time clause; the clause after the comma asks
    assert "steps" in kind_options("When booking a berth, what is done right after paying the deposit?")
    assert "date" not in kind_options("When the tank runs empty, does the second generator start?")
    assert kind_options("When was the pier built, and who repaired it?") == ["date", "duration"]
    assert kind_options("By how many points did the level fall?")[0] == "value"
    assert "duration" not in kind_options("The skipper reckons seven nights will cost £180. Is he right?")


def test_a_failed_frame_falls_back_and_the_plain_draft_still_answers(kb: KnowledgeBase) -> None:
    router = Router(frame=RuntimeError("the model crashed"))
    answer = ask(kb, "How many berths does the Ashby Pier have?", router)
    assert answer.trace.intent_decided_by == "fallback" and answer.intent == "unknown"
    assert "40 berths" in answer.answer or "berths" in answer.answer


# --------------------------------------------------------------------------- recall


def test_a_question_nothing_matches_is_unknown_without_a_model_call(kb: KnowledgeBase) -> None:
    router = Router()
    answer = ask(kb, "Who won the chess tournament in Reykjavik?", router)
    assert not answer.knows and answer.answer.startswith("I don't know") and router.calls == []
    assert "no passage" in answer.trace.retrieval_note


def test_a_word_or_year_the_sources_never_mention_does_not_make_a_question_unknown(kb: KnowledgeBase) -> None:
    router = Router()
    answer = ask(kb, "Would the Ashby Pier still have 40 berths in 2031, according to Describe?", router, mode="single")
    assert router.calls == ["single"] and answer.knows


def test_recall_gives_the_sources_whole_when_they_fit_and_marks_what_a_later_report_changed(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "k.sqlite3") as base:
        old = Fact("The pier has 40 berths.", entity="Ashby Pier", attribute="berths", value="40 berths")
        new = Fact("The pier has 55 berths.", entity="Ashby Pier", attribute="berths", value="55 berths")
        base.store_source("Gazette March", [("The pier has 40 berths.", [old])], published="2025-03-01")
        base.store_source("Gazette July", [("The pier has 55 berths.", [new])], published="2025-07-10")
        found = recall(base, "How many berths does the pier have?")
    assert found.relevant and found.whole
    assert [(p.text, p.earlier) for p in found.passages] == [("The pier has 40 berths.", True), ("The pier has 55 berths.", False)]
    assert found.render().index("55 berths") < found.render().index("40 berths")  # the newest source first


def test_recall_reads_the_lists_the_sources_write(kb: KnowledgeBase) -> None:
    found = recall(kb, "How do I book a berth at the Ashby Pier?")
    assert [(s.title, s.items) for s in found.lists] == [
        ("To book a berth:", ["Call the harbour office.", "Pay the deposit.", "Collect the gate key."])]


# --------------------------------------------------------------------------- the checker


def _evidence(*texts: str) -> Evidence:
    return Evidence([(t, date(2025, 7, 10)) for t in texts], dated=[date(2025, 3, 1), date(2025, 7, 10)])


@pytest.mark.parametrize("text", [
    "It has 1200 visitors.",                # "1,200" written without the comma
    "The repair cost 3.1 million pounds.",  # a scale word
    "Together they hold 95 berths.",        # 40 + 55: a sum of two evidence numbers
    "It took 131 days.",                    # 1 March to 10 July
    "The pier reopened on 1 March 2025.",   # a date of the evidence
    "It is the third of 3 steps.",          # a small count
    "It reopened on 1 March.",              # a day written without its year
])
def test_the_checker_grounds_numbers_the_evidence_gives_or_yields(text: str) -> None:
    evidence = _evidence("The pier has 1,200 visitors, 40 berths and 55 moorings.", "Repairs cost 3.1 million pounds.",
                         "It reopened on 1 March 2025.")
    assert check(Draft(specialist="single", text=text), evidence).passed


def test_the_checker_refuses_a_number_nothing_gives_and_ignores_wording() -> None:
    evidence = _evidence("The pier had 1,200 visitors on Sunday.")
    refused = check(Draft(specialist="single", text="It had 4,900 people."), evidence)
    assert not refused.passed and refused.ungrounded == ["4,900 people"]
    # the source says "visitors", the draft "people": the checker compares values, not nouns
    assert check(Draft(specialist="single", text="It had 1,200 people."), evidence).passed
    computed = check(Draft(specialist="compute", text="4,900 (a computed value).", computed=["4900"]), evidence)
    assert computed.passed


def test_a_month_the_question_names_grounds_the_draft_that_repeats_it() -> None:
    # "in October" in a question about a fee notice dated in January: the draft's "October" is the
    # question's, not an invented date (it used to refuse a right plain draft for it)
    notice = Passage(id="s1", source="Harbour office", published="2025-01-06", text="The minimum charge is £25 a night.")
    found = Recall(question="q", relevant=True, why="test", passages=[notice])
    evidence = Evidence.of(found, "A 6.1 m boat stays one night in October. What is the fee?")
    assert check(Draft(specialist="single", text="One night in October costs £25."), evidence).passed
    assert not check(Draft(specialist="single", text="One night in March costs £25."), evidence).passed


def test_a_measure_does_not_answer_a_question_that_counts_things() -> None:
    fair = Passage(id="s1", source="Fair report", published="2025-09-01",
                   text="The mill ground 1,800 kilograms of flour and took 450 euros; 600 people came.")
    found = Recall(question="q", relevant=True, why="test", passages=[fair])
    sacks = Evidence.of(found, "How many sacks of flour were sold at the fair?")
    refused = check(Draft(specialist="single", text="They sold 1,800 kilograms of flour."), sacks)
    assert not refused.passed and refused.unlike == ["1,800 kilograms"] and "counts sacks" in refused.note
    assert not check(Draft(specialist="single", text="They took 450 euros."), sacks).passed
    # a count (of any noun: the checker does not compare nouns) or a bare number passes
    assert check(Draft(specialist="single", text="600 people came."), sacks).passed
    assert check(Draft(specialist="single", text="The sources give 600."), sacks).passed
    # a question that asks for a measure is not a count; a number the question states is not the answer
    kilograms = Evidence.of(found, "How many kilograms of flour did the mill grind?")
    assert check(Draft(specialist="single", text="It ground 1,800 kilograms."), kilograms).passed
    of_them = Evidence.of(found, "How many of the 1,800 kilograms were sold?")
    assert check(Draft(specialist="single", text="Of the 1,800 kilograms, the sources give no share sold."), of_them).passed
    # in multi mode such a plain draft gives way to "the sources do not say"
    resolution = select([Draft(specialist="single", text="They sold 1,800 kilograms.")], [refused], {}, mode="multi")
    assert resolution.answer == UNKNOWN and "not a count of what is asked" in resolution.rule


# --------------------------------------------------------------------------- the selection


def _drafts(*specs: tuple[str, bool]) -> list[Draft]:
    return [Draft(specialist=name, text=f"{name} says so", replaces=replaces) for name, replaces in specs]


def test_a_specialist_replaces_the_plain_draft_only_when_its_precondition_holds_and_it_checks() -> None:
    authority = {s.name: s.authority for s in REGISTRY}
    drafts = _drafts(("single", False), ("compute", True), ("quote", False))
    passed = [Verdict(specialist=d.specialist, passed=True) for d in drafts]
    assert select(drafts, passed, authority, mode="multi").chosen == "compute"
    refused = [Verdict(specialist="compute", passed=False, ungrounded=["7"]), *passed[::2]]
    assert select(drafts, refused, authority, mode="multi").chosen == "single"  # never made worse by a failed compute
    merely_ran = _drafts(("single", False), ("quote", False))
    assert select(merely_ran, [Verdict(specialist=d.specialist, passed=True) for d in merely_ran], authority,
                  mode="multi").chosen == "single"


def test_an_ungrounded_plain_draft_gives_way_to_a_grounded_one_or_to_the_sources_do_not_say() -> None:
    authority = {s.name: s.authority for s in REGISTRY}
    drafts = _drafts(("single", False), ("quote", False))
    verdicts = [Verdict(specialist="single", passed=False, ungrounded=["9"]), Verdict(specialist="quote", passed=True)]
    assert select(drafts, verdicts, authority, mode="multi").chosen == "quote"
    alone = select(drafts[:1], verdicts[:1], authority, mode="multi")
    assert (alone.answer, alone.knows) == (UNKNOWN, False)
    kept = select(drafts[:1], verdicts[:1], authority, mode="single")  # the baseline keeps its answer, noted
    assert kept.answer == "single says so" and "9" in kept.rule


# --------------------------------------------------------------------------- the specialists in Python


def _amount(i: int, value: float, unit: str, source: str = "", published: str | None = None) -> Amount:
    return Amount(f"q{i}", value, unit, f"{value:g} {unit}", f"s{i}", source, published, "")


def test_compute_evaluates_and_refuses_what_cannot_be_computed() -> None:
    two = [_amount(1, 38, "tonnes"), _amount(2, 71, "tonnes")]
    assert evaluate("difference", two)[:2] == (33, "tonnes")
    assert evaluate("change", two[::-1])[0] == -33
    assert round(evaluate("percent_change", two)[0], 1) == 86.8
    with pytest.raises(CalculationRefused):
        evaluate("difference", two[:1])
    with pytest.raises(CalculationRefused):
        evaluate("ratio", [_amount(1, 3, ""), _amount(2, 0, "")])
    with pytest.raises(CalculationRefused, match="different units"):  # metres and years do not add up
        evaluate("percent_change", [_amount(1, 31.5, "metres"), _amount(2, 10, "years")])
    assert evaluate("product", [_amount(1, 2, "florins"), _amount(2, 5, "hours")])[0] == 10  # a rate times a time may mix
    with pytest.raises(CalculationRefused, match="one unit twice"):  # 12 m × 9.3 m × 8 nights: not one figure
        evaluate("product", [_amount(1, 12, "m"), _amount(2, 9.3, "metres"), _amount(3, 8, "nights")])
    with pytest.raises(CalculationRefused, match="a product of 4"):
        evaluate("product", [_amount(1, 2, ""), _amount(2, 3, ""), _amount(3, 4, ""), _amount(4, 5, "")])


def test_time_between_dates_counts_calendar_months_and_years() -> None:
    assert between(date(2025, 3, 1), date(2025, 7, 10), "days") == 131
    assert between(date(2025, 3, 15), date(2025, 7, 10), "months") == 3
    assert between(date(2023, 7, 11), date(2025, 7, 10), "years") == 1


def test_steps_are_answered_by_position() -> None:
    steps = StepList(id="p1", source="Guide", items=["Call.", "Pay.", "Collect."])
    assert answer_by_position(steps, "after", 0) == "After step 1: Call. comes step 2: Pay."
    assert answer_by_position(steps, "position", 2) == "It is step 3 of 3: Collect."
    assert answer_by_position(steps, "before", 0).startswith("Nothing")  # type: ignore[union-attr]
    assert answer_by_position(steps, "after", None) is None


def test_a_count_of_steps_answers_only_a_question_that_counts_steps(kb: KnowledgeBase) -> None:
    count = {"procedure": "p1", "relation": "count", "step": ""}
    router = Router(frame={"asks_for": "steps", "about": [], "unit": "berths"}, steps=count)
    berths = ask(kb, "How many berths does the Ashby Pier have?", router)  # counts berths, not the booking list
    assert berths.trace.chosen == "single" and berths.answer == "The Ashby Pier has 40 berths."
    steps = ask(kb, "How many steps does booking a berth at the Ashby Pier take?",
                Router(frame={"asks_for": "steps", "about": [], "unit": "steps"}, steps=count))
    assert steps.trace.chosen == "steps" and steps.answer == "There are 3 steps."


def test_sources_name_a_disagreement_and_an_update() -> None:
    disagree = compare([_amount(1, 55, "berths", "Gazette", "2025-07-10"), _amount(2, 48, "berths", "Club", "2025-07-10"),
                        _amount(3, 40, "berths", "Gazette", "2025-03-01")])
    assert disagree.startswith("The sources disagree: Gazette (2025-07-10) gives 55 berths; Club (2025-07-10) gives 48 berths.")
    assert "Earlier: 40 berths (Gazette, 2025-03-01)" in disagree
    update = compare([_amount(1, 40, "berths", "Gazette", "2025-03-01"), _amount(2, 55, "berths", "Gazette", "2025-07-10")])
    assert update.startswith("The latest report, Gazette (2025-07-10), gives 55 berths.")


# --------------------------------------------------------------------------- the pipeline on scripted models


def test_single_mode_is_recall_and_one_plain_draft(kb: KnowledgeBase) -> None:
    router = Router()
    answer = ask(kb, "How many berths does the Ashby Pier have?", router, mode="single")
    assert router.calls == ["single"] and answer.mode == "single"
    assert [s.task for s in answer.trace.sub_agents] == ["recall", "single", "check", "select"]


def test_multi_mode_computes_a_difference_the_model_chose_and_the_trace_shows_the_frame(kb: KnowledgeBase) -> None:
    def compute(request: ModelRequest) -> Any:
        ids = sorted(line.split(":")[0] for line in request.messages[-1].content.splitlines() if "million pounds" in line)
        return {"operation": "difference", "first": ids[0], "second": ids[1]}

    router = Router(frame={"asks_for": "calculation", "about": [], "unit": "cost"}, compute=compute,
                    single="The repair cost 2.4 million pounds.")
    answer = ask(kb, "How much more did the repair cost in the end than first reported?", router)
    assert answer.trace.chosen == "compute" and "700,000 pounds" in answer.answer
    assert answer.trace.frame["kind"] == "comparison" and answer.trace.frame["decided_by"] == "model"
    assert {d["specialist"] for d in answer.trace.drafts} >= {"single", "compute"}


def test_a_frame_filled_wrongly_leaves_the_plain_draft_standing(kb: KnowledgeBase) -> None:
    # "steps" for a question about berths, where the lists are about booking: the steps specialist
    # may run, but its answer does not replace the plain draft unless the frame asks for steps.
    router = Router(frame={"asks_for": "how long", "about": [], "unit": ""},
                    dates={"start": "d1", "end": "d1", "unit": "days"})  # the same date twice: no span
    answer = ask(kb, "How many berths did the pier have when it reopened?", router)
    assert answer.trace.chosen == "single" and answer.answer == "The Ashby Pier has 40 berths."


def test_the_plain_draft_reads_the_sources_whole_oldest_first(kb: KnowledgeBase) -> None:
    seen: list[str] = []

    def single(request: ModelRequest) -> str:
        seen.append(request.messages[-1].content)
        return "The Ashby Pier reopened on 1 March 2025."

    answer = ask(kb, "When did the Ashby Pier reopen?", Router(single=single), mode="single")
    prompt = seen[0]
    # oldest first; two of one date by name, in whatever order they were learned
    heads = ["[Harbour Gazette: Pier reopens, 2025-03-01]", "[Ashby Boat Club newsletter, 2025-07-10]",
             "[Harbour Gazette: Summer at the pier, 2025-07-10]"]
    assert [prompt.index(h) for h in heads] == sorted(prompt.index(h) for h in heads)
    # the list as the source writes it, numbers and all, not regrouped sentences
    assert "1. Call the harbour office.\n2. Pay the deposit.\n3. Collect the gate key." in prompt
    assert answer.answer == "The Ashby Pier reopened on 1 March 2025."


def test_the_plain_draft_does_not_wait_for_the_frame(kb: KnowledgeBase) -> None:
    # The frame's reading finishes only once the plain draft has been asked: were the two
    # sequential, the question would never be answered (the wait below gives up after 10 s).
    drafted = asyncio.Event()
    order: list[str] = []
    router = Router()

    async def model(request: ModelRequest) -> Any:
        order.append(request.agent or "?")
        if request.agent == "frame":
            await asyncio.wait_for(drafted.wait(), timeout=10)
        if request.agent == "single":
            drafted.set()
        return await router(request)

    answer = LearningTeam(kb, model=FunctionModel(model), store=False, budget="deep").ask_sync(
        "How many berths does the Ashby Pier have?", mode="multi")
    assert order[:2] in (["frame", "single"], ["single", "frame"])
    assert answer.trace.frame["decided_by"] == "model" and answer.answer == "The Ashby Pier has 40 berths."


def test_a_chosen_sentence_never_replaces_a_grounded_plain_draft(kb: KnowledgeBase) -> None:
    # the model chooses a neighbour of the sentence that answers; the plain draft had it right
    def neighbour(request: ModelRequest) -> Any:
        return {"sentence": next(i for i in menu_ids(request, "sentence") if "storm" not in line_of(request, f"{i}:"))}

    router = Router(frame={"asks_for": "why", "about": [], "unit": ""}, quote=neighbour,
                    single="The pier closed in 2023 because storm waves cracked its main beam.")
    answer = ask(kb, "Why did the Ashby Pier close?", router)
    assert answer.trace.chosen == "single" and "storm waves" in answer.answer
    # it stands by: with a grounded draft in hand it is not even asked (one call saved)
    assert "quote" not in router.calls and any(n.startswith("not asked (quote)") for n in answer.trace.notes)


def test_the_stand_by_sentence_answers_when_no_draft_is_grounded(kb: KnowledgeBase, tmp_path: Path) -> None:
    def storm(request: ModelRequest) -> Any:
        return {"sentence": next(i for i in menu_ids(request, "sentence") if "storm" in line_of(request, f"{i}:"))}

    store = RunStore(tmp_path / "runs.sqlite3")
    router = Router(frame={"asks_for": "why", "about": [], "unit": ""}, quote=storm,
                    single="The pier closed in 1999 because of a fire.")  # a year no source gives
    answer = ask(kb, "Why did the Ashby Pier close?", router, store=store)
    assert router.calls.count("quote") == 1 and answer.trace.chosen == "quote"
    assert answer.answer.startswith("The pier closed in 2023 because storm waves cracked its main beam.")
    started = [e.task_id for e in store.events(answer.run_id) if str(e.type) == "task_started"]
    assert started.index("check") < started.index("quote") < started.index("check-stand-by") < started.index("select")


def test_a_step_the_question_does_not_name_gives_no_steps_answer(kb: KnowledgeBase) -> None:
    # the frame misreads a count as a question about steps, and the model "names" a step the
    # question never mentions: the steps specialist says nothing, the plain draft answers
    def some_step(request: ModelRequest) -> Any:
        return {"procedure": "p1", "relation": "position", "step": "p1.2"}

    router = Router(frame={"asks_for": "steps", "about": [], "unit": ""}, steps=some_step, quote={"sentence": "none"},
                    single="The Ashby Pier has 40 berths.")
    answer = ask(kb, "How many berths did the Ashby Pier have when it reopened?", router)
    assert "steps" in router.calls and "steps" not in {d["specialist"] for d in answer.trace.drafts}
    assert answer.trace.chosen == "single" and answer.answer == "The Ashby Pier has 40 berths."
    # a question that does name the step still gets its position
    router = Router(frame={"asks_for": "steps", "about": [], "unit": ""}, steps=some_step, quote={"sentence": "none"})
    answer = ask(kb, "Which step is paying the deposit when booking a berth?", router)
    assert answer.trace.chosen == "steps" and answer.answer == "It is step 2 of 3: Pay the deposit."


def test_sources_that_disagree_are_added_to_a_plain_draft_that_took_one_of_them(kb: KnowledgeBase) -> None:
    router = Router(frame={"asks_for": "fact", "about": [], "unit": "berths"}, single="The pier has 48 berths.",
                    quote={"sentence": "none"})
    answer = ask(kb, "How many berths does the Ashby Pier have?", router)
    # the plain draft stays first; the comparison follows it with what it left out
    assert answer.trace.chosen == "single" and answer.answer.startswith("The pier has 48 berths.\n\n")
    assert "The sources disagree:" in answer.answer and "55 berths" in answer.answer
    assert any("sources's note added (the answer gave 48 berths of" in n for n in answer.trace.notes), answer.trace.notes


def test_a_plain_draft_that_gives_only_an_earlier_value_is_replaced_and_one_that_declines_is_kept(kb: KnowledgeBase) -> None:
    # 40 berths is what the March report said; both July reports give other figures
    router = Router(frame={"asks_for": "fact", "about": [], "unit": "berths"}, single="The pier has 40 berths.",
                    quote={"sentence": "none"})
    answer = ask(kb, "How many berths does the Ashby Pier have?", router)
    assert answer.trace.chosen == "sources" and answer.answer.startswith("The sources disagree:"), answer.answer
    assert "Earlier: 40 berths" in answer.answer
    # a plain draft that says the sources do not say gains no figures (a near miss is not an answer)
    router = Router(frame={"asks_for": "fact", "about": [], "unit": "berths"}, single="The sources do not say.",
                    quote={"sentence": "none"})
    answer = ask(kb, "How many berths does the Ashby Pier have?", router)
    assert answer.answer == "The sources do not say." and answer.trace.chosen == "single"
    assert any("note not added" in n for n in answer.trace.notes), answer.trace.notes
    # an answer that gives none of the compared figures is about another value: no note follows it
    router = Router(frame={"asks_for": "fact", "about": [], "unit": "berths"}, single="The pier reopened after two years.",
                    quote={"sentence": "none"})
    answer = ask(kb, "How many berths does the Ashby Pier have?", router)
    assert answer.answer == "The pier reopened after two years." and answer.trace.chosen == "single"


def test_reports_of_one_count_are_never_added_up(kb: KnowledgeBase) -> None:
    def add_everything(request: ModelRequest) -> Any:
        ids = {line.split(":")[0]: line for line in request.messages[-1].content.splitlines() if " berths" in line}
        pick = lambda needle: next(i for i, line in ids.items() if needle in line)  # noqa: E731
        return {"operation": "sum", "first": pick("55 berths"), "second": pick("48 berths")}

    # the model reads "how many" as a calculation and adds two reports of the pier's berth count
    router = Router(frame={"asks_for": "calculation", "about": [], "unit": "berths"}, compute=add_everything,
                    single="The club counts 48 berths.")
    answer = ask(kb, "How many berths does the club count at the Ashby Pier?", router)
    assert answer.trace.chosen != "compute" and "compute" not in {d["specialist"] for d in answer.trace.drafts}


def test_every_step_is_a_task_of_one_recorded_run(kb: KnowledgeBase, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    answer = ask(kb, "Why did the Ashby Pier close?", Router(frame={"asks_for": "why", "about": [], "unit": ""},
                                                             quote=lambda r: {"sentence": menu_ids(r, "sentence")[0]}),
                 store=store)
    run = store.get_run(answer.run_id)
    assert run.status == "completed"
    started = [e.task_id for e in store.events(answer.run_id) if str(e.type) == "task_started"]
    assert started[:2] == ["recall", "frame"] and started[-2:] == ["check", "select"]
    assert "single" in started and "quote" not in started  # the plain draft answered: quote not asked


def test_roles_are_the_frame_and_the_registry() -> None:
    assert ROLES == ("frame", *(s.name for s in REGISTRY))
    assert len(set(ROLES)) == len(ROLES)
    for specialist in REGISTRY:
        assert specialist.authority >= 0 and callable(specialist.applies) and callable(specialist.draft)


def test_bad_mode_and_empty_question_are_one_line_errors(kb: KnowledgeBase) -> None:
    with pytest.raises(MootError, match="unknown mode"):
        ask(kb, "Q?", Router(), mode="both")
    with pytest.raises(MootError, match="the question is empty"):
        ask(kb, "   ", Router())


# --------------------------------------------------------------------------- missing knowledge base and CLI


def test_ask_against_a_missing_kb_fails_and_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "nope.sqlite3"
    with pytest.raises(MootError, match="no knowledge base at") as error:
        LearningTeam(path, model=FunctionModel(Router()), store=False).ask_sync("anything?")
    assert "moot learn" in error.value.one_line() and not path.exists()


def _cli() -> typer.Typer:
    from moot.cli import ask_cmd

    app = typer.Typer()
    ask_cmd.register(app)
    app.command("noop")(lambda: None)  # a second command keeps `ask` a named sub-command
    return app


def test_cli_json_shows_the_frame_drafts_and_sources(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    import moot.models.registry as registry

    monkeypatch.setattr(registry, "infer_model", lambda name=None, **kw: FunctionModel(Router()))
    result = CliRunner().invoke(_cli(), ["ask", "How many berths does the Ashby Pier have?", "--kb", str(kb.path),
                                         "--mode", "single", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert payload["mode"] == "single" and payload["answer"] == "The Ashby Pier has 40 berths."
    assert payload["sub_agents"] == ["recall", "single", "check", "select"]
    assert payload["run_id"] and payload["usage"]["requests"] == 1
    assert payload["trace"]["chosen"] == "single"


def test_the_learning_team_asks_in_parallel_without_sharing_state(kb: KnowledgeBase) -> None:
    async def both() -> list[Any]:
        t = team(kb, Router())
        return await asyncio.gather(t.ask("How many berths does the Ashby Pier have?", mode="single"),
                                    t.ask("Why did the Ashby Pier close?", mode="single"))

    first, second = asyncio.run(both())
    assert first.run_id != second.run_id and first.question != second.question


def test_sources_compare_only_figures_about_what_is_asked(kb: KnowledgeBase) -> None:
    # "nights" is in no sentence that gives a figure: the berth counts are not about the question
    router = Router(frame={"asks_for": "fact", "about": [], "unit": "nights"}, single="The sources do not say.",
                    quote={"sentence": "none"})
    answer = ask(kb, "On how many nights is the Ashby Pier lit?", router)
    assert "sources" not in {d["specialist"] for d in answer.trace.drafts}
    assert answer.answer == "The sources do not say."


def test_sources_compare_dates_for_a_when_question(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "pool.sqlite3") as base:
        base.store_source("Council notice", [("The pool will reopen on 6 May 2024.", [])], published="2024-03-01")
        base.store_source("Council update", [("The pool will now reopen on 20 May 2024, two weeks late.", [])],
                          published="2024-04-20")
        router = Router(frame={"asks_for": "when", "about": [], "unit": "reopen"}, single="It reopens on 6 May 2024.",
                        quote={"sentence": "none"})
        answer = ask(base, "When does the pool reopen?", router)
    assert answer.trace.chosen == "sources"
    assert answer.answer.startswith("The latest report, Council update (2024-04-20), gives 20 May 2024.")
    assert "6 May 2024 (Council notice, 2024-03-01)" in answer.answer


def test_a_span_between_years_is_written_in_years_not_invented_days(tmp_path: Path) -> None:
    # "set up in 1987", "came in 2011": the dates are years, and the answer says so; it used to read
    # "from 1 January 1987", a day no source gives, and the checker refused its own specialist's draft
    with KnowledgeBase.open(tmp_path / "dairy.sqlite3") as base:
        base.store_source("Dairy profile", [("The co-operative was set up in 1987.", []),
                                            ("Its head cheesemaker came to the dairy in 2011.", [])], published="2025-06-30")
        router = Router(frame={"asks_for": "how long", "about": [], "unit": "years"}, dates=span_of("1987", "2011", "years"),
                        single="It had existed for many years.")
        answer = ask(base, "How many years had the co-operative existed when its head cheesemaker came?", router)
    assert answer.trace.chosen == "dates"
    assert answer.answer.startswith("24 years: from 1987 (“1987”) to 2011 (“2011”)"), answer.answer


def test_a_span_from_a_relative_date_does_not_repeat_words_that_mean_another_day_here(tmp_path: Path) -> None:
    def span(request: ModelRequest) -> Any:
        ids = list(listed_dates(request))
        return {"start": ids[0], "end": ids[-1], "unit": "days"}

    with KnowledgeBase.open(tmp_path / "roof.sqlite3") as base:
        base.store_source("Gazette", [("Scaffolding went up last week.", [])], published="2025-03-10")
        base.store_source("Report", [("The panels were switched on on 1 April 2025.", [])], published="2026-04-20")
        router = Router(frame={"asks_for": "how long", "about": [], "unit": "days"}, dates=span, single="A while.")
        answer = ask(base, "How many days passed between the scaffolding going up and the switch-on?", router)
    assert answer.trace.chosen == "dates", answer.trace.notes
    assert "last week" not in answer.answer and answer.answer.endswith("to 1 April 2025 (“1 April 2025”).")


def test_one_day_written_twice_is_no_span(tmp_path: Path) -> None:
    def same_day(request: ModelRequest) -> Any:
        ids = [line.split(":")[0] for line in request.messages[-1].content.splitlines() if "12 May" in line]
        return {"start": ids[0], "end": ids[1], "unit": "days"}

    with KnowledgeBase.open(tmp_path / "pipe.sqlite3") as base:
        base.store_source("Water board", [("Work on the pipeline began on 12 May 2023.", []),
                                          ("Work on the first section of the village pipeline also began on 12 May.", []),
                                          ("The village was reconnected on 1 June 2023.", [])], published="2023-06-05")
        router = Router(frame={"asks_for": "how long", "about": [], "unit": "days"}, dates=same_day,
                        single="20 days after work began.")
        answer = ask(base, "How many days after work began was the village reconnected?", router)
    assert answer.trace.chosen == "single" and not answer.answer.startswith("0 days"), answer.answer


def test_no_span_in_weeks_from_a_date_given_only_as_a_year(tmp_path: Path) -> None:
    def weeks(request: ModelRequest) -> Any:
        lines = list(listed_dates(request).values())
        start = next(line.split(":")[0] for line in lines if "2018" in line)
        end = next(line.split(":")[0] for line in lines if "12 September" in line)
        return {"start": start, "end": end, "unit": "weeks"}

    with KnowledgeBase.open(tmp_path / "ban.sqlite3") as base:
        base.store_source("Bulletin", [("The last hosepipe ban was in 2018.", []),
                                       ("The new ban began on 1 August 2025 and was still in force on 12 September 2025.", [])],
                          published="2025-09-12")
        router = Router(frame={"asks_for": "how long", "about": [], "unit": ""}, dates=weeks,
                        single="It had been in force for six weeks.")
        answer = ask(base, "How long had the hosepipe ban been in force on 12 September?", router)
    assert "dates" in router.calls  # the specialist ran and chose
    assert answer.trace.chosen == "single", answer.answer  # not "401.6 weeks: from 2018"


def test_a_length_of_time_the_sources_state_is_not_replaced_by_a_span_between_two_dates(tmp_path: Path) -> None:
    # "How long is the cycle?" asks a length the sources state; the model chose two dates of the
    # workshop's history and the span between them ("16 years") used to replace the right plain draft
    history = span_of("2009", "2025", "years")
    with KnowledgeBase.open(tmp_path / "kiln.sqlite3") as base:
        base.store_source("Workshop profile", [("The kiln workshop opened in 2009.", []),
                                               ("Each firing cycle of the kiln lasts 14 hours.", []),
                                               ("The kiln was relined in 2025.", [])], published="2025-10-01")
        router = Router(frame={"asks_for": "how long", "about": [], "unit": ""}, dates=history,
                        single="A firing cycle lasts 14 hours.")
        answer = ask(base, "How long is a firing cycle of the kiln?", router)
        assert "dates" in router.calls  # the span was worked out, and did not replace it
        assert answer.trace.chosen == "single" and answer.answer == "A firing cycle lasts 14 hours."
        assert any("states 14 hours as the sources write it" in n for n in answer.trace.notes), answer.trace.notes
        # a length the plain draft works out itself (the sources write no "3 hours") is replaced by the span
        router = Router(frame={"asks_for": "how long", "about": [], "unit": ""}, dates=history,
                        single="About 3 hours.")
        answer = ask(base, "How long ago was the kiln relined after the workshop opened?", router)
        assert answer.trace.chosen == "dates" and answer.answer.startswith("16 years"), answer.trace.notes


def test_a_distance_the_sources_state_is_not_replaced_by_a_span_between_two_dates(tmp_path: Path) -> None:
    # "How long is the race?" asks a distance; "4 years: from 1958 to 1962" replaced a right "12 km"
    with KnowledgeBase.open(tmp_path / "race.sqlite3") as base:
        base.store_source("Club website", [("The Tarn Rowing Club was founded in 1962.", []),
                                           ("Its best-known event is the Tarn Long Row, a 12 km race held each May.", [])],
                          published="2025-10-01")
        base.store_source("Courier", [("The club, founded in 1958, rows on Tarn Lake.", [])], published="2025-09-01")
        router = Router(frame={"asks_for": "how long", "about": [], "unit": ""}, dates=span_of("1958", "1962", "years"),
                        single="The Tarn Long Row is a 12 km race.")
        answer = ask(base, "How long is the Tarn Long Row?", router)
    assert "dates" in router.calls
    assert answer.trace.chosen == "single" and answer.answer == "The Tarn Long Row is a 12 km race.", answer.answer
    assert any("states 12 km as the sources write it" in n for n in answer.trace.notes), answer.trace.notes


def test_a_question_that_states_a_length_of_time_asks_no_span(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "loans.sqlite3") as base:
        base.store_source("Loan rules", [("A violin due on 3 March was returned on 9 March.", []),
                                         ("Each day late costs 50p after 2 days of grace.", [])], published="2025-10-01")
        router = Router(frame={"asks_for": "how long", "about": [], "unit": "days"}, single="The fee is £2.50.")
        answer = ask(base, "A violin is returned 7 days late. What is the late fee?", router)
    assert "dates" not in router.calls and answer.trace.chosen == "single"
    assert answer.trace.frame["times"] == ["7 days"]
