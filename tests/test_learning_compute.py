"""Multi mode's compute specialist, answer checker and selector.

The model only chooses (an operation and operands by id, or a draft); Python computes and
checks. Every test runs on a real SQLite knowledge base with test models that answer by the
calling agent's name (``request.agent``), never by recognising prompt text.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel, by_agent, tool_call
from moot.teams.learning import LearningTeam
from moot.teams.learning.checker import Evidence, check_draft, plain_statement
from moot.teams.learning.compute import (
    ComputeError,
    choice_schema,
    collect_quantities,
    derivation_asked,
    derivation_required,
    evaluate,
    find_quantities,
    narrow,
)
from learning_support import ask as ask_team

# --------------------------------------------------------------------------- compute: Python does the arithmetic


def _q(text: str, origin: str = "#1", year: int | None = 2023) -> list[Any]:
    return find_quantities(text, origin=origin, year=year)


def test_quantities_carry_value_unit_date_and_the_fact_they_came_from() -> None:
    found = _q("The reservoir stood at 82% of capacity on 14 March; the pipeline is 14 kilometres long and cost 4,200,000 crowns.")
    by_text = {q.text: q for q in found}
    assert by_text["82%"].value == 82 and by_text["82%"].unit == "%"
    assert by_text["14 March"].date == dt.date(2023, 3, 14)
    assert by_text["14 kilometres"].value == 14 and by_text["14 kilometres"].unit == "kilometres"
    assert by_text["4,200,000 crowns"].value == 4_200_000
    assert all(q.origin == "#1" for q in found)
    assert _q("It cost 6.8 million crowns")[0].value == 6_800_000


@pytest.mark.parametrize(("operation", "texts", "value", "unit"), [
    ("difference", ["82%", "61%"], 21, "percentage points"),
    ("sum", ["14 member-bakers", "9 member-bakers"], 23, "member-bakers"),
    ("product", ["900 loaves", "0.5 kg", "2 crowns"], 900, ""),
    ("ratio", ["900 loaves", "600 loaves"], 1.5, ""),
    ("percent_change", ["82%", "61%"], -25.6, "%"),
    ("days_between", ["12 May 2023", "1 June 2023"], 20, "days"),
    ("months_between", ["1 June 2023", "1 September 2023"], 3, "months"),
    ("years_between", ["1 May 2019", "1 May 2022"], 3, "years"),
    ("maximum", ["900 loaves", "600 loaves"], 900, "loaves"),
    ("order", ["30 minutes", "10 minutes", "20 minutes"], 10, "minutes"),
])
def test_each_operation_is_computed_exactly(operation: str, texts: list[str], value: float, unit: str) -> None:
    operands = [dataclasses.replace(_q(t, origin=f"#{i}")[0], id=f"q{i}") for i, t in enumerate(texts, 1)]
    result = evaluate(operation, operands)
    assert result.value == pytest.approx(value) and result.unit == unit
    assert result.origins == [f"#{i}" for i in range(1, len(texts) + 1)]
    sentence = result.sentence()
    assert sentence.startswith(result.value_text()) and "[#1]" in sentence  # the value first, then its sources


def test_a_formula_from_the_documentation_binds_quantity_ids_to_values() -> None:
    base, per_metre, length = _q("10 marks")[0], _q("2 marks")[0], _q("4 metres")[0]
    base, per_metre, length = (type(base)(f"q{i}", q.value, q.date, q.unit, q.text, q.origin, q.context)
                               for i, q in enumerate((base, per_metre, length), 1))
    result = evaluate("formula", [base, per_metre, length], formula="(q1 + q3 * q2) * 2")
    assert result.value == 36 and "(10 + 4 * 2) * 2 = 36" in result.expression


def test_conversion_and_refusals() -> None:
    assert evaluate("convert", _q("14 kilometres"), to_unit="m").value == 14000
    with pytest.raises(ComputeError, match="two dates"):
        evaluate("days_between", _q("82%"))
    with pytest.raises(ComputeError, match="cannot convert"):
        evaluate("convert", _q("14 crowns"), to_unit="m")
    with pytest.raises(ComputeError, match="not chosen"):
        evaluate("formula", _q("10 marks"), formula="q1 + q7")
    with pytest.raises(ComputeError):
        evaluate("none", _q("10 marks"))
    bakers = [dataclasses.replace(_q("14 member-bakers")[0], id="q1"), dataclasses.replace(_q("9 member-bakers")[0], id="q2")]
    with pytest.raises(ComputeError, match="counts nothing"):  # seen on L2: "14 × 9 = 126 member-bakers"
        evaluate("product", bakers)


def test_the_schema_only_admits_listed_quantity_ids() -> None:
    schema = choice_schema(["q1", "q2"])
    assert schema.model_validate({"operation": "sum", "operands": ["q1", "q2"]}).operands == ["q1", "q2"]
    with pytest.raises(ValueError):
        schema.model_validate({"operation": "sum", "operands": ["q9"]})
    with pytest.raises(ValueError):
        schema.model_validate({"operation": "integrate", "operands": ["q1"]})


def test_python_narrows_the_menu_to_what_can_answer_the_question() -> None:
    facts = [{"id": 1, "content": "The reservoir stood at 82% on 14 March 2023; 14 kilometres of pipe", "source_date": "2023-03-14"},
             {"id": 2, "content": "It was at 61% on 20 June 2023 and 61% again on 21 June", "source_date": "2023-06-20"}]
    question = "By how many percentage points did the level fall between 14 March and 20 June 2023?"
    menu, operations, why = narrow(question, collect_quantities(question, facts))
    assert [q.text for q in menu] == ["82%", "61%"]  # no dates, no kilometres, the repeated 61% once
    assert "days_between" not in operations and "difference" in operations and "percentages only" in why
    days = "How many days after 14 March 2023 was the level at 61%?"
    menu, operations, _ = narrow(days, collect_quantities(days, facts))
    assert operations == ("days_between",) and all(q.date for q in menu)
    bakers = "How many member-bakers does the co-op have across its two bakeries?"
    facts = [{"id": 1, "content": "Millgate has 14 member-bakers and bakes 900 loaves a day"},
             {"id": 2, "content": "Ridgeway has 9 member-bakers and 3 ovens"}]
    menu, operations, _ = narrow(bakers, collect_quantities(bakers, facts))
    assert [q.text for q in menu] == ["14 member-bakers", "9 member-bakers"] and operations == ("sum", "none")


def test_bare_years_are_dates_and_a_daily_amount_is_not_a_duration() -> None:
    founded = [dataclasses.replace(q, id=f"q{i}") for i, q in enumerate(
        _q("The co-op was founded in 2019") + _q("Ridgeway opened in 2022"), 1)]
    result = evaluate("years_between", founded)
    assert result.value == 3 and result.expression == "from 2019 to 2022"
    loaves = "How many loaves do the two bakeries bake together each day?"
    facts = [{"id": 1, "content": "Millgate bakes 900 loaves a day since 10 February 2024"},
             {"id": 2, "content": "Ridgeway bakes 600 loaves a day since 24 February 2024"}]
    menu, operations, _ = narrow(loaves, collect_quantities(loaves, facts))
    assert operations == ("sum", "none") and [q.text for q in menu] == ["900 loaves", "600 loaves"]  # seen: "14 days"


def test_values_at_the_dates_the_question_names_and_the_most_relevant_first() -> None:
    # Seen on L3: asked for the fall "between 14 March and 20 June", the model took 38% and 47%.
    facts = [{"id": 1, "content": "The reservoir stood at 82% of capacity on 14 March.", "source_date": "2023-03-14"},
             {"id": 2, "content": "The reservoir was at 61% of capacity on 20 June.", "source_date": "2023-06-20"}]
    passages = [{"text": "It reached its lowest level, 38% of capacity, on 10 August. On 5 September it stood at 47%.",
                 "published": "2023-09-05"}]
    question = "By how many percentage points did the reservoir level fall between 14 March and 20 June 2023?"
    menu, operations, why = narrow(question, collect_quantities(question, facts, passages))
    assert [q.text for q in menu] == ["82%", "61%"] and operations == ("difference", "none")
    assert "values at the question's dates" in why
    # Events, not dates: the dates whose sentence shares the question's words come first.
    facts = [{"id": 1, "content": "The board lifted the ban on 1 September.", "source_date": "2023-09-05"},
             {"id": 2, "content": "Work on the pipeline began on 12 May.", "source_date": "2023-06-20"},
             {"id": 3, "content": "The hosepipe ban started on 1 June.", "source_date": "2023-06-20"}]
    question = "How many days after work on the pipeline began did the hosepipe ban start?"
    menu, operations, _ = narrow(question, collect_quantities(question, facts))
    assert operations == ("days_between",) and [q.text for q in menu][:2] in (["12 May", "1 June"], ["1 June", "12 May"])
    with pytest.raises(ComputeError, match="mixes units"):  # seen on L3: "82% − 18 = 64"
        evaluate("difference", [dataclasses.replace(_q("82%")[0], id="q1"), dataclasses.replace(_q("18 and")[0], id="q2")])


def test_amounts_of_different_kinds_are_not_added_or_subtracted() -> None:
    # Seen on L6 and L8: "2024 − 900 swimmers" for more lifeguards, "30 pear − 12 varieties".
    lifeguards = "The lido opened with six lifeguards; it now has eight lifeguards and 900 swimmers a day in 2024."
    found = {q.text: q for q in _q(lifeguards)}
    assert found["six lifeguards"].value == 6 and found["eight lifeguards"].unit == "lifeguards"
    assert found["2024"].value is None and found["2024"].date == dt.date(2024, 1, 1)  # a year is no amount
    pair = [dataclasses.replace(found["eight lifeguards"], id="q1"), dataclasses.replace(found["six lifeguards"], id="q2")]
    assert evaluate("difference", pair).value == 2
    with pytest.raises(ComputeError, match="mixes units"):
        evaluate("difference", [dataclasses.replace(_q("30 pear")[0], id="q1"), dataclasses.replace(_q("12 varieties")[0], id="q2")])
    assert not derivation_required("How many pear varieties grow in the orchard?")


def test_derivation_cues() -> None:
    assert derivation_asked("How many more lifeguards does the lido have now?")
    assert derivation_asked("How many days after the work began did the ban start?")
    assert derivation_asked("How many loaves do the two bakeries bake together each day?")
    assert derivation_asked("How much did the reservoir level rise between its lowest point and 5 September?")
    assert not derivation_asked("Who is the captain of the Marren Star?")


# --------------------------------------------------------------------------- the checker

FACTS = [
    {"id": 1, "content": "The Tessaly reservoir stood at 82% of capacity on 14 March 2023", "source": "Varnby Courier",
     "source_date": "2023-03-14"},
    {"id": 2, "content": "The reservoir was at 61% on 20 June 2023", "source": "Varnby Courier", "source_date": "2023-06-20"},
]


def test_checker_passes_numbers_dates_and_names_from_the_facts() -> None:
    evidence = Evidence.build(question="How did the Tessaly reservoir change?", facts=FACTS)
    verdict = check_draft("The Tessaly reservoir fell from 82% on 14 March 2023 to 61% on 20 June [#1] [#2].", evidence)
    assert verdict.ok, verdict.reason()


@pytest.mark.parametrize(("draft", "offending"), [
    ("The reservoir fell by 25 percentage points.", ["25"]),           # a derived number nobody computed
    ("It was 82% in March, says Marit Ossel.", ["Marit", "Ossel"]),    # a name in no fact
    ("The level reached 38% on 10 August 2023.", ["10", "38"]),       # a date and value in no fact
])
def test_checker_refuses_what_no_fact_or_computation_holds(draft: str, offending: list[str]) -> None:
    verdict = check_draft(draft, Evidence.build(question="How did the Tessaly reservoir change?", facts=FACTS))
    assert not verdict.ok
    assert verdict.unsupported == offending
    assert all(o in verdict.reason() for o in offending)


ORCHARD = [
    {"id": 1, "content": "A cider press donated by the Marsh family pressed 1,800 litres of apple juice.",
     "value": "1,800", "entity": "cider press"},  # a bare value field says nothing of the unit
    {"id": 2, "content": "The juice was bottled on site and sold at 3 crowns a bottle."},
    {"id": 3, "content": "The orchard has 140 apple trees of 12 varieties and 30 pear trees."},
    {"id": 4, "content": "About 600 visitors came to the orchard's Apple Day on 12 October."},
]


@pytest.mark.parametrize(("question", "draft", "offending"), [
    # A number the sources give in another kind of unit.
    ("How much did the Marsh family pay for the cider press?", "The Marsh family paid $1,800 for it.", "1800 as money"),
    # A count of things no source counts: the price per bottle does not count bottles sold.
    ("How many bottles of apple juice were sold?", "600 visitors came on 12 October.", "600 (no source gives a number of bottles)"),
    # The modifier matters: 12 varieties of apple and 30 pear trees give no number of pear varieties.
    ("How many pear varieties grow in the orchard?", "The orchard has 30 pear trees.", "30 (no source gives a number of pear varieties)"),
    # A length asked, a price answered (seen on L1: "the ferry is 6.8 million crowns long").
    ("How long is the cider press?", "It is 1,800 litres long.", "1800 as volume (the question asks for length)"),
    ("How long is the cider press?", "It is 6.8 million crowns long.", "6.8 as money (the question asks for length)"),
])
def test_checker_refuses_a_number_that_answers_another_question(question: str, draft: str, offending: str) -> None:
    verdict = check_draft(draft, Evidence.build(question=question, facts=ORCHARD))
    assert not verdict.ok and any(u.startswith(offending) for u in verdict.unsupported), verdict.unsupported


@pytest.mark.parametrize(("question", "draft"), [
    ("How many apple trees does the orchard have?", "It has 140 apple trees."),
    ("How many litres of apple juice were pressed?", "1,800 litres [#1]."),
    ("How many people came to Apple Day?", "About 600 visitors came."),    # people and visitors are one kind
    ("How much does a bottle cost?", "3 crowns a bottle."),
    ("How long is the Apple Day?", "It runs from seven in the morning until dusk on 12 October."),
    ("How many bottles were sold?", "The sources do not say how many bottles were sold on 12 October."),
])
def test_checker_keeps_numbers_that_answer_the_question(question: str, draft: str) -> None:
    verdict = check_draft(draft, Evidence.build(question=question, facts=ORCHARD))
    assert verdict.ok, verdict.reason()


def test_a_computed_value_grounds_a_derived_number() -> None:
    evidence = Evidence.build(question="By how much did it fall?", facts=FACTS, computed=["82 - 61 = 21"])
    assert check_draft("It fell by 21 percentage points.", evidence).ok
    assert not check_draft("It fell by 22 percentage points.", evidence).ok


def test_step_numbers_are_not_claims() -> None:
    evidence = Evidence.build(question="What are the steps?", facts=[{"id": 1, "content": "Wait, then unlock the door"}])
    assert check_draft("1. Wait.\n2. Unlock the door.", evidence).ok
    assert check_draft("Unlocking the door is step 2.", evidence).ok


def test_plain_statement_says_what_the_sources_do_and_do_not_say() -> None:
    text = plain_statement("How many bottles were sold?", FACTS, unsupported=["300"])
    assert text.startswith("The sources do not say") and "300" in text and "82% of capacity" in text


# --------------------------------------------------------------------------- the team, multi mode


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    base = KnowledgeBase.open(tmp_path / "reservoir.sqlite3")
    base.add_facts([
        Fact("The Tessaly reservoir stood at 82% of capacity on 14 March 2023", entity="Tessaly reservoir",
             attribute="level", value="82%", source="Varnby Courier", source_date=dt.date(2023, 3, 14)),
        Fact("The Tessaly reservoir was at 61% of capacity on 20 June 2023", entity="Tessaly reservoir",
             attribute="level", value="61%", source="Varnby Courier", source_date=dt.date(2023, 6, 20)),
        Fact("Work on the Orrin springs pipeline began on 12 May 2023", entity="Orrin springs pipeline",
             attribute="start", value="12 May 2023", source="Varnby Courier", source_date=dt.date(2023, 6, 20)),
        Fact("The hosepipe ban started on 1 June 2023", entity="hosepipe ban", attribute="start",
             value="1 June 2023", source="Varnby Courier", source_date=dt.date(2023, 6, 20)),
    ])
    yield base
    base.close()


def pick(*texts: str) -> Any:
    """A compute route that picks the quantities whose value is written ``texts`` (dates in ISO)."""

    def choose(operation: str) -> Any:
        def answer(request: ModelRequest) -> Any:
            menu = [line for line in request.messages[-1].content.splitlines() if " = " in line]
            ids = [next(line.split(" = ")[0] for line in menu if line.split(" = ", 1)[1].split(" (")[0] == t)
                   for t in texts]
            return {"operation": operation, "operands": ids}
        return answer
    return choose


def ask(kb: KnowledgeBase, question: str, routes: dict[str, Any], mode: str = "multi") -> tuple[Any, FunctionModel]:
    return ask_team(kb, question, routes, mode, default=None)


def test_multi_answers_a_derived_value_with_the_computed_number(kb: KnowledgeBase) -> None:
    question = "By how many percentage points did the Tessaly reservoir level fall between 14 March and 20 June 2023?"
    routes = {"single": "It fell by 25 percentage points [#1] [#2].",  # the small model's arithmetic
              "compute": pick("82%", "61%")("difference"),
              "reasoning": "The level went from 82% to 61% [#1] [#2]."}
    answer, model = ask(kb, question, routes)
    assert answer.answer.startswith("21 percentage points") and "82% − 61% = 21" in answer.answer
    assert "25" not in answer.answer
    assert any("worked-out value" in n for n in answer.trace.notes)
    assert any("single: fails" in n and "'25'" in n for n in answer.trace.notes)
    single, _ = ask(kb, question, routes, mode="single")
    assert "25 percentage points" in single.answer  # the baseline keeps its own answer


def test_days_between_two_dates_from_two_facts(kb: KnowledgeBase) -> None:
    answer, _ = ask(kb, "How many days after work on the Orrin springs pipeline began did the hosepipe ban start?",
                    {"single": "About three weeks.", "compute": pick("2023-05-12", "2023-06-01")("days_between"),
                     "reasoning": "It began on 12 May 2023 and the ban on 1 June 2023."})
    assert answer.answer.startswith("20 days") and "12 May 2023" in answer.answer


@pytest.mark.parametrize(("question", "unit", "clauses", "span"), [
    ("How many days after work on the Orrin springs pipeline began did the hosepipe ban start?", "days",
     ("work on the Orrin springs pipeline began", "the hosepipe ban start"), False),
    ("How many years after the co-op was founded did its Ridgeway bakery open?", "years",
     ("the co-op was founded", "its Ridgeway bakery open"), False),
    ("How many days passed between the storm and the reopening?", "days", ("the storm", "the reopening"), False),
    ("For how many months was the Varnby hosepipe ban in force?", "months",
     ("the Varnby hosepipe ban in force", "the Varnby hosepipe ban in force"), True),
    ("How long did the road closure last?", "days", ("the road closure", "the road closure"), True),
])
def test_the_events_of_a_duration_question(question: str, unit: str, clauses: tuple[str, str], span: bool) -> None:
    from moot.teams.learning.events import read_events

    events = read_events(question)
    assert events is not None and events.unit == unit and events.clauses == clauses and events.span == span
    assert read_events("How many loaves do the bakeries bake each day?") is None


def test_each_event_gets_its_own_date_and_python_counts_the_days(kb: KnowledgeBase) -> None:
    # Seen on L3: offered every date at once, the model took the pipeline's end (110 days), then
    # the ban's lifting (112 days); and the datelines of two articles for a question in years.
    kb.add_episode("Varnby, 5 September 2023. The Orrin springs pipeline was finished on 30 August. The Varnby Water "
                   "Board lifted the hosepipe ban on 1 September.", source="Varnby Courier", published="2023-09-05")
    answer, model = ask(kb, "How many days after work on the Orrin springs pipeline began did the hosepipe ban start?",
                        {"single": "110 days."})
    assert answer.answer.startswith("20 days") and "12 May 2023" in answer.answer
    assert not model.requests_from("compute")  # each event's date led its list clearly: nothing to choose
    span, _ = ask(kb, "For how many months was the hosepipe ban in force?", {"single": "For 2 months."})
    assert span.answer.startswith("3 months") and "1 September 2023" in span.answer  # started 1 June, lifted 1 September


def test_the_model_chooses_an_events_date_when_two_match_alike(kb: KnowledgeBase) -> None:
    kb.add_episode("Varnby, 5 September 2023. Work on the Orrin springs pipeline began again on 3 July after a pause.",
                   source="Varnby Courier", published="2023-09-05")
    menus: list[str] = []

    def choose(request: ModelRequest) -> Any:
        menus.append(request.messages[-1].content)
        assert request.output is not None
        props = request.output.json_schema["properties"]
        first, second = (props[f].get("enum") or [props[f]["const"]] for f in ("first_date", "second_date"))
        line = {line.split(" = ")[0]: line for line in request.messages[-1].content.splitlines() if " = " in line}
        return {"first_date": next(i for i in first if "2023-05-12" in line[i]),
                "second_date": next(i for i in second if "2023-06-01" in line[i])}

    answer, model = ask(kb, "How many days after work on the Orrin springs pipeline began did the hosepipe ban start?",
                        {"single": "110 days.", "compute": choose})
    assert len(model.requests_from("compute")) == 1, [r.messages[-1].content for r in model.requests_from("compute")]
    assert "3 July" in menus[0] and "12 May" in menus[0]  # the pipeline's two beginnings, for the model to choose
    assert "Varnby, 5 September" not in menus[0]  # a dateline dates the article, not an event
    assert answer.answer.startswith("20 days")


def test_specialists_run_in_parallel_beside_the_single_draft(kb: KnowledgeBase) -> None:
    barrier = asyncio.Barrier(3)

    async def meet(value: Any) -> Any:
        async def answer(request: ModelRequest) -> Any:
            await asyncio.wait_for(barrier.wait(), timeout=10)  # only concurrent drafts get past
            return value(request) if callable(value) else value
        return answer

    async def run() -> Any:
        routes = {"single": await meet("The level fell from 82% to 61% [#1] [#2]."),
                  "compute": await meet(pick("82%", "61%")("difference")),
                  "reasoning": await meet("From 82% on 14 March 2023 to 61% on 20 June 2023.")}
        team = LearningTeam(kb, model=FunctionModel(by_agent(routes)), store=False)
        return await team.ask("By how much did the Tessaly reservoir level change between 14 March and 20 June 2023?",
                              mode="multi")

    answer = asyncio.run(run())
    assert {"single", "compute", "reasoning", "select"} <= set(answer.sub_agents)


def test_a_value_computed_from_the_questions_own_numbers_leads(kb: KnowledgeBase) -> None:
    # Seen on L12: compute took the slowest station (40) and the smallest load (20), and the
    # selector kept the single draft that restated one of the question's numbers (90, 40).
    kb.add_episode("The output of a chain of steps is set by its slowest step.", source="Oskry Newsletter",
                   published="2024-06-04")
    question = ("A reservoir pumping line has three pumps in a row: pump one moves 90 litres a second, pump two 40 "
                "and pump three 70. How many litres a second does the line move?")
    answer, _ = ask(kb, question, {"single": "The line moves 90 litres a second.",
                                   "compute": pick("40", "90 litres", "70")("minimum")})
    assert answer.answer.startswith("40"), answer.answer
    assert any("its own numbers" in n for n in answer.trace.notes)
    stations = [dataclasses.replace(q, id=f"q{i}") for i, q in enumerate(
        _q("At the stall, slicing can handle 90 an hour, filling 40 an hour and wrapping 70 an hour."), 1)]
    assert "= 40: filling 40" in evaluate("minimum", stations).sentence()  # which station, not only how many
    order = evaluate("order", [dataclasses.replace(q, id=f"q{i}") for i, q in enumerate(
        _q("30 minutes") + _q("10 minutes") + _q("20 minutes"), 1)])
    assert order.sentence().startswith("10 minutes (smallest first: 10 minutes, 20 minutes, 30 minutes")


def test_a_stated_price_is_not_replaced_by_a_computation(kb: KnowledgeBase) -> None:
    # Seen on L6: "How much does adult entry cost?" ran compute, whose "4 crowns / 16" replaced
    # the single agent's right answer. A plain cost question keeps a draft that passes the checker.
    draft = "The sources do not say what it cost to measure; the level was at 61% [#2]."
    answer, _ = ask(kb, "How much did the Tessaly reservoir level cost to measure?",
                    {"single": draft, "compute": pick("82%", "61%")("ratio")})
    assert answer.answer == draft
    assert any("the single draft passed the checker" in n for n in answer.trace.notes)


def test_multi_keeps_the_single_draft_when_it_passes_and_nothing_is_derived(kb: KnowledgeBase) -> None:
    answer, model = ask(kb, "When did the hosepipe ban start?",
                        {"single": "The hosepipe ban started on 1 June 2023 [#4].",
                         "reasoning": "On 12 May 2023."})
    assert answer.answer == "The hosepipe ban started on 1 June 2023 [#4]."
    assert any("the single draft passed the checker" in n for n in answer.trace.notes)


def test_a_refused_draft_goes_back_once_naming_the_span(kb: KnowledgeBase) -> None:
    drafts = iter(["The reservoir holds 9 million litres [#1].", "The sources do not say how much it holds."])
    answer, model = ask(kb, "How much water does the Tessaly reservoir hold?", {"single": lambda r: next(drafts)})
    second = model.requests_from("single")[1].messages[-1].content
    assert "It states 9" in second  # the offending span is named
    assert answer.answer == "The sources do not say how much it holds."
    assert any("revision: passes" in n for n in answer.trace.notes)


def test_a_draft_refused_twice_becomes_a_plain_statement(kb: KnowledgeBase) -> None:
    answer, model = ask(kb, "How much water does the Tessaly reservoir hold?",
                        {"single": "The reservoir holds 9 million litres [#1]."})
    assert len(model.requests_from("single")) == 2  # the draft and one revision, no more
    assert answer.answer.startswith("The sources do not say") and "9 million" not in answer.answer
    assert "82% of capacity" in answer.answer  # what the sources do say


def test_a_revision_that_repeats_the_checkers_note_is_no_answer(kb: KnowledgeBase) -> None:
    # Seen on L8 (run 1): the 0.5B reviser wrote the note back, and its words passed the checker.
    drafts = iter(["The reservoir holds 9 million litres [#1].",
                   "Answer again using only the facts and passages; if they do not give the answer, say plainly that "
                   "the sources do not say."])
    answer, _ = ask(kb, "How much water does the Tessaly reservoir hold?", {"single": lambda r: next(drafts)})
    assert answer.answer.startswith("The sources do not say") and "Answer again" not in answer.answer
    assert any("revision: fails" in n for n in answer.trace.notes)


def test_single_with_its_calculator_result_is_grounded(kb: KnowledgeBase) -> None:
    def single(request: ModelRequest) -> Any:
        if request.tools and len(request.messages) == 2:
            return tool_call("calculate", expression="82 - 61")
        return "It fell by 21 percentage points [#1] [#2]."

    answer, _ = ask(kb, "How many percentage points did the level fall between March and June?",
                    {"single": single, "compute": {"operation": "none", "operands": []}})
    assert answer.answer == "It fell by 21 percentage points [#1] [#2]."


def test_a_place_no_fact_covers_is_unknown_without_a_model_call(kb: KnowledgeBase) -> None:
    answer, model = ask(kb, "What was the level of the Harwick reservoir in June 2023?", {})
    assert not model.requests and not answer.knows
    assert "Harwick" in answer.answer and "don't know" in answer.answer


# --------------------------------------------------------------------------- one budget for the whole question


@pytest.mark.parametrize("seed", range(40))
def test_one_budget_holds_across_classification_drafts_and_selection(kb: KnowledgeBase, seed: int) -> None:
    """Random scripted costs, random limits: the question never makes more calls than its budget,
    never starts a call once its dollars are spent (so it overshoots by one call at most, not by a
    whole second budget), reports exactly what the model was paid, and still returns an answer."""
    import random

    from moot.models.base import ModelResponse, Usage
    from moot.runtime import Budget

    rng = random.Random(seed)
    costs: list[float] = []

    def paid(output: Any) -> Any:
        def answer(request: ModelRequest) -> ModelResponse:
            cost = round(rng.uniform(0.001, 0.02), 4)
            costs.append(cost)
            text = output if isinstance(output, str) else __import__("json").dumps(output)
            return ModelResponse(text=text, output=None if isinstance(output, str) else output,
                                 usage=Usage(input_tokens=rng.randint(50, 400), output_tokens=rng.randint(5, 80),
                                             requests=1, cost_usd=cost))
        return answer

    routes = {"coordinator": paid({"intent": "mathematical", "entities": []}),
              "single": paid(rng.choice(["It fell by 25 points [#1].", "It fell from 82% to 61% [#1] [#2]."])),
              "compute": paid({"operation": "difference", "operands": ["q1", "q2"]}),
              "reasoning": paid("From 82% to 61% [#1] [#2]."),
              "selector": paid({"best": "draft 1"})}
    budget = Budget(max_calls=rng.randint(1, 5), max_cost_usd=round(rng.uniform(0.005, 0.05), 4))
    model = FunctionModel(by_agent(routes))
    team = LearningTeam(kb, model=model, budget=budget, store=False)
    question = rng.choice(["Tessaly reservoir level drop March to June",
                           "By how much did the Tessaly reservoir level fall between March and June?"])
    answer = team.ask_sync(question, mode=rng.choice(["auto", "multi"]))
    assert len(model.requests) <= budget.max_calls
    assert answer.usage.requests == len(model.requests)
    assert answer.usage.cost_usd == pytest.approx(sum(costs))
    assert sum(costs[:-1]) < budget.max_cost_usd if costs else True  # no call started after the money ran out
    assert answer.answer  # a partial result at worst, never nothing


# --------------------------------------------------------------------------- a model per role


def test_each_role_runs_on_its_own_model(kb: KnowledgeBase) -> None:
    from moot.errors import MootError

    default = FunctionModel(by_agent({"single": "It fell by 25 points [#1] [#2]."}), name="small")
    bigger = FunctionModel(by_agent({"compute": pick("82%", "61%")("difference")}), name="bigger")
    team = LearningTeam(kb, model=default, models={"compute": bigger}, store=False)
    answer = team.ask_sync("By how many percentage points did the Tessaly reservoir level fall?", mode="multi")
    assert answer.answer.startswith("21 percentage points")
    assert [r.agent for r in bigger.requests] == ["compute"] and "compute" not in {r.agent for r in default.requests}
    assert team.model_names()["compute"] == "bigger" and team.model_names()["single"] == "small"
    with pytest.raises(MootError, match="no role 'judge'"):
        LearningTeam(kb, model=default, models={"judge": bigger})


def test_the_report_says_which_model_ran_which_role() -> None:
    from moot.eval.report import render_markdown
    from moot.eval.runner import new_results

    results = new_results(modes=["single", "multi", "context"], runs=1, model_name="local",
                          role_models={"selector": "local-1.5b"})
    text = render_markdown(results, chart=None)
    assert "Models per role: selector `local-1.5b`" in text
    assert "| context pass | context score |" in text and "Δ multi−context" in text


def test_a_compute_draft_that_crashes_leaves_the_single_draft(kb: KnowledgeBase) -> None:
    def crash(request: ModelRequest) -> Any:
        raise RuntimeError("the compute model is down")

    answer, _ = ask(kb, "By how many percentage points did the Tessaly reservoir level fall?",
                    {"single": "It fell from 82% to 61% [#1] [#2].", "compute": crash})
    assert answer.answered and answer.answer == "It fell from 82% to 61% [#1] [#2]."
    assert any("compute: fails (no draft)" in n for n in answer.trace.notes)


def test_the_temporal_worksheet_grounds_a_draft_and_labels_are_not_data(tmp_path: Path) -> None:
    # Seen on the embedded model: "Norway went from 9 to 14, 5 more" was refused ("5" in no fact),
    # and "day 7 and day 10" made compute answer "3 (10 − 7)".
    base = KnowledgeBase.open(tmp_path / "medals.sqlite3")
    base.add_facts([
        Fact("Norway had 9 gold medals after day 7", entity="Norway", attribute="gold medals", value="9",
             source="Day 7 report", source_date=dt.date(2026, 2, 13)),
        Fact("Norway had 14 gold medals after day 10", entity="Norway", attribute="gold medals", value="14",
             source="Day 10 report", source_date=dt.date(2026, 2, 16))])
    answer, model = ask(base, "How did Norway's gold medals change between day 7 and day 10?",
                        {"single": "Norway went from 9 to 14 gold medals, 5 more [#1] [#2].",
                         "reasoning": "From 9 to 14 [#1] [#2]."})
    assert answer.answer == "Norway went from 9 to 14 gold medals, 5 more [#1] [#2]."
    assert "compute" not in {r.agent for r in model.requests}
    base.close()


# --------------------------------------------------------------------------- capacity against demand


@pytest.mark.parametrize(("question", "yes_means_enough"), [
    ("If pump B's new motor had arrived on 1 November as ordered, would Tanner Street have flooded on 3 November?", False),
    ("Had both pumps been working but the inflow peaked at 900 litres a second, would the station have kept up?", True),
    ("If the inflow had never risen above 400 litres a second, would pump A alone have prevented the flood?", True),
    ("If pump A had been out of action instead, would Tanner Street still have flooded?", False),
    ("If both generators draw diesel from one shared tank, does the second generator protect the hospital?", None),
    ("If every flooded house had been sandbagged, how many sandbags would that have needed, and was it enough?", None),
    ("Would Tanner Street have flooded?", None),  # no what-if
])
def test_what_if_questions_that_a_comparison_decides(question: str, yes_means_enough: bool | None) -> None:
    from moot.teams.learning.threshold import read_threshold

    found = read_threshold(question)
    assert (found.yes_means_enough if found else None) == yes_means_enough


def test_capacity_against_demand_is_compared_in_python(tmp_path: Path) -> None:
    base = KnowledgeBase.open(tmp_path / "pumps.sqlite3")
    base.add_facts([
        Fact("Each of the two pumps can move 400 litres of water a second", entity="pumping station",
             attribute="pump capacity", value="400 litres a second", source="Gazette"),
        Fact("With both pumps running, the station can move 800 litres a second", entity="pumping station",
             attribute="capacity", value="800 litres a second", source="Council review"),
        Fact("Water flowed into the station at up to 700 litres a second", entity="pumping station",
             attribute="inflow", value="700 litres a second", source="Gazette"),
    ])

    def choose(request: ModelRequest) -> Any:
        lines = {line.split(" = ")[1].split(" (")[0]: line.split(" = ")[0]
                 for line in request.messages[-1].content.splitlines() if " = " in line}
        return {"capacity": lines["800 litres"], "demand": lines["700 litres"]}

    answer, model = ask(base, "If pump B had been working, would the station's street have flooded?",
                        {"single": "Yes, the street would have flooded.", "compute": choose})
    assert answer.answer.startswith("No: 800 litres could be handled, at least the 700 litres")
    assert "(800 ≥ 700)" in answer.answer
    assert any("capacity against demand" in n for n in answer.trace.notes)
    base.close()


def test_the_schema_asks_for_two_operands_and_the_question_dates_are_never_cut_off() -> None:
    schema = choice_schema(["q1", "q2", "q3"])
    with pytest.raises(ValueError):  # seen on L3: "difference" with no operands at all
        schema.model_validate({"operation": "difference", "operands": []})
    facts = [{"id": i, "content": f"On {i} May 2023 the gauge read {i * 3} metres and {i * 7} litres.",
              "source_date": "2023-05-30"} for i in range(1, 12)]
    question = "By how many metres did the gauge change between 14 March and 20 June 2023?"
    asked = [q for q in collect_quantities(question, facts) if q.origin == "question"]
    assert {q.text for q in asked} == {"14 March", "20 June 2023"}  # kept although the menu was full


def test_a_dateline_is_no_event() -> None:
    found = collect_quantities("How many years after the co-op was founded did its bakery open?",
                               [], [{"text": "Brackwater, 10 February 2024.", "published": "2024-02-10"},
                                    {"text": "The co-op was founded in 2019.", "published": "2024-02-10"}])
    assert [q.text for q in found] == ["2019"]


def test_capacity_and_demand_are_ranked_by_their_own_words_and_the_questions_case() -> None:
    from moot.teams.learning.threshold import roles, same_unit_amounts

    text = ("The mill has two wheels, each can grind 300 kilograms an hour. Grain flowed in at up to 500 kilograms an hour "
            "for a day, but the east wheel alone could grind only 300. With both wheels running, the mill can grind "
            "600 kilograms an hour. Twenty-eight sacks were wet and 12 sacks stayed dry.")
    passages = [{"text": text, "published": "2025-01-01"}]
    assert all(q.text != "eight sacks" for q in collect_quantities("q", [], passages))  # "Twenty-eight" is no "eight"

    def case(question: str) -> tuple[list[str], list[str]]:
        quantities = collect_quantities(question, [], passages, limit=80)
        listed = [dataclasses.replace(q, id=f"q{i}") for i, q in enumerate(same_unit_amounts(quantities, question), 1)]
        capacity, demand = roles(listed, question)
        return [q.text for q in capacity], [q.text for q in demand]

    capacity, demand = case("Had both wheels been running but the grain peaked at 700 kilograms an hour, would the mill "
                            "have kept up?")
    assert capacity == ["600 kilograms"] and demand == ["700 kilograms"]  # kilograms, not sacks; both wheels
    capacity, demand = case("If the grain had never risen above 300 kilograms an hour, would the east wheel alone have "
                            "prevented the backlog?")
    assert capacity[0] == "300" and demand == ["300 kilograms"]  # the question's 300 is the demand, the wheel's the capacity


def test_a_choice_among_the_questions_options_is_offered_as_one() -> None:
    question = ("A laundrette has one machine. Three customers arrive together with loads that take 40, 20 and 60 "
                "minutes. Which load should go first to keep the average wait short?")
    menu, operations, why = narrow(question, collect_quantities(question, []))
    assert operations == ("minimum", "maximum", "order", "none") and "a choice among the options" in why


def test_a_quoted_sentence_grounds_a_number_but_does_not_answer_a_count(kb: KnowledgeBase) -> None:
    # Seen on L8: a specialist's quoted sentence ("pressed 1,800 litres") joined the computed values,
    # and a computed number is exempt from "no source counts bottles": "1,800 litres were sold" passed.
    kb.add_episode("Fennel Parish Letter, 15 October 2025. The Fennel press made 1,800 litres of juice, sold at 3 "
                   "crowns a bottle.", source="Fennel Parish Letter", published="2025-10-15")
    kb.add_episode("Fennel Gazette, 16 October 2025. The Fennel press made 1,800 litres of juice on Apple Day.",
                   source="Fennel Gazette", published="2025-10-16")
    kb.add_facts([Fact("The Fennel press made 1,800 litres of juice", entity="Fennel press", attribute="juice",
                       value="1,800", source="Fennel Parish Letter")])
    answer, _ = ask(kb, "How many bottles of juice did the Fennel press sell?",
                    {"single": "1,800 litres of juice were sold."})
    assert "do not say" in answer.answer and not answer.answer.startswith("1,800")


def test_a_unit_written_once_reaches_every_number_of_its_list() -> None:
    found = {q.text: q.unit for q in find_quantities(
        "Loads take 40, 20 and 60 minutes; slicing handles 90 sandwiches an hour, filling 40 an hour.", origin="question")}
    assert found["20"] == "minutes" and found["60 minutes"] == "minutes"
    assert [q.unit for q in find_quantities("filling 40 an hour", origin="question")] == [""]  # no sibling, no unit
    rates = find_quantities("Slicing handles 90 sandwiches an hour, filling 40 an hour and wrapping 70 an hour.",
                            origin="question")
    assert [q.unit for q in rates] == ["sandwiches", "sandwiches", "sandwiches"]
    with pytest.raises(ComputeError, match="counts nothing"):  # seen on L12: "90 sandwiches × 40 × 70 = 252,000"
        evaluate("product", [dataclasses.replace(q, id=f"q{i}") for i, q in enumerate(rates, 1)])
