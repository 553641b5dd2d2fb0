"""Documented rules: a fee schedule and a code format read in Python, checked against the notice's
own example, and applied to a question's case by the RulesAgent.

The parser runs on real notices (one in the bundled suite's wording, one in other words); the team
runs on a real SQLite knowledge base with test models that answer by the calling agent's name.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.memory.rules import case_count, find_rules, parse_code_rule, parse_fee_rule, quantities_in, rule_asked
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.teams.learning.rules import build_rules
from learning_support import ask

DUES = """# Gullwick ferry fares for vehicles

Gullwick Ferry Company, 4 April 2025. From this summer, vehicles crossing to Gullwick pay as follows.

1. Every vehicle pays a base fare of 6 florins a crossing.
2. Vehicles longer than 5 metres also pay 3 florins for each metre over 5 metres.
3. On market days, which the company announces each month, the whole fare is doubled.
4. Vehicles registered with the Gullwick Residents Scheme get 4 florins off each crossing. The discount is taken off after any doubling.
5. For a book of several crossings, every fifth crossing is free.

Example: a 7-metre van pays 6 + 2 x 3 = 12 florins on an ordinary day and 24 florins on a market day. If it is a Gullwick Residents Scheme van, it pays 8 florins on an ordinary day and 20 florins on a market day.
"""

CODES = """# Gullwick parking permits

Gullwick Ferry Company, 9 April 2025. Every vehicle waiting for the ferry shows a permit code.

A permit code has three parts, joined by hyphens:

- First, one letter for the car park: Q for the quay car park, H for the hill car park and T for the town car park.
- Second, the bay number in that car park, always written with three digits, so bay 7 is written 007.
- Third, one letter for the weight class: L for vehicles under 2 tonnes, M for vehicles from 2 tonnes and up to and including 3.5 tonnes, and X for vehicles over 3.5 tonnes.

For example, a 1.5-tonne car in bay 21 of the hill car park has the permit code H-021-L. Permits are checked at the gate.
"""


def test_a_fee_schedule_is_read_as_charges_and_conditional_adjustments() -> None:
    rule = parse_fee_rule(DUES, source="Gullwick Ferry Company")
    assert rule is not None and rule.currency == "florins" and rule.period == "crossing"
    assert [(c.amount, c.per, c.over) for c in rule.charges] == [(6, None, 0), (3, "metre", 5)]
    assert [(a.kind, a.amount, a.condition.phrase) for a in rule.adjustments] == [
        ("multiply", 2, "market days"), ("subtract", 4, "Vehicles registered with the Gullwick Residents Scheme")]
    assert rule.adjustments[1].condition.name == "Gullwick Residents Scheme"
    assert rule.free_every == 5
    assert rule.verified  # 12, 24, 8 and 20 florins all come out of the rule for a 7-metre van


@pytest.mark.parametrize(("case", "conditions", "periods", "value"), [
    ({"metre": 4}, {}, 1, 6),  # no length charge at or under 5 metres
    ({"metre": 9}, {}, 1, 18),
    ({"metre": 9}, {"market days": True}, 1, 36),
    # the discount after the doubling: (6 + 12) × 2 − 4, not (6 + 12 − 4) × 2
    ({"metre": 9}, {"market days": True, "Vehicles registered with the Gullwick Residents Scheme": True}, 1, 32),
    ({"metre": 6}, {}, 5, 36),  # 9 florins × 4: the fifth crossing is free
])
def test_the_rule_computes_the_fee_in_python(case: dict[str, float], conditions: dict[str, bool], periods: int,
                                             value: float) -> None:
    rule = parse_fee_rule(DUES)
    assert rule is not None
    result = rule.evaluate(case, conditions, periods=periods)
    assert result is not None and result[0] == value


def test_a_rule_its_own_example_contradicts_is_not_verified() -> None:
    # The notice says the discount comes before the doubling, but its example took it off after:
    # the rule as read gives 22 florins for a resident's van on a market day, the example says 20.
    misread = DUES.replace("The discount is taken off after any doubling.", "The discount is taken off before any doubling.")
    rule = parse_fee_rule(misread)
    assert rule is not None and rule.adjustments[1].before_multiply
    assert not rule.verified and rule.contradicted


def test_a_code_format_is_read_part_by_part_and_checked_against_its_example() -> None:
    rule = parse_code_rule(CODES)
    assert rule is not None and rule.name == "permit code" and rule.separator == "-"
    assert [p.kind for p in rule.parts] == ["letter", "number", "letter"]
    assert rule.parts[1].digits == 3 and rule.parts[1].label == "bay"
    assert rule.verified and rule.expected == "H-021-L"
    assert rule.evaluate("a 3.5-tonne lorry in bay 4 of the quay car park")[0] == "Q-004-M"  # the boundary is in M
    assert rule.evaluate("a 3.6-tonne lorry in bay 120 of the town car park")[0] == "T-120-X"
    assert rule.evaluate("a lorry in bay 4 of the quay car park") is None  # no weight: no code


@pytest.mark.parametrize(("case", "holds"), [
    ("a 9-metre van that is not in the Gullwick Residents Scheme", False),
    ("a 9-metre Gullwick Residents Scheme van", True),
    ("a 9-metre van", False),
    ("a 9-metre van of a Gullwick resident", None),  # names part of it: the model decides
])
def test_a_condition_holds_where_the_case_names_it_unnegated(case: str, holds: bool | None) -> None:
    rule = parse_fee_rule(DUES)
    assert rule is not None
    condition = rule.adjustments[1].condition
    assert condition.holds(case) is holds


def test_the_question_kind() -> None:
    assert rule_asked("How much does a 9-metre van pay for one crossing?") == "fee"
    assert rule_asked("What is the fare for a 9-metre van on a market day?") == "fee"
    assert rule_asked("What permit code does a car in bay 3 of the quay car park get?") == "code"
    assert rule_asked("When does the ferry leave?") is None
    assert parse_fee_rule("The ferry leaves at nine. It costs a lot.") is None
    assert parse_code_rule("The code of conduct is short.") is None


@pytest.fixture
def kb(tmp_path: Path) -> Any:
    base = KnowledgeBase.open(tmp_path / "ferry.sqlite3")
    base.add_episode(DUES, source="Gullwick Ferry Company", published="2025-04-04")
    base.add_episode(CODES, source="Gullwick Ferry Company", published="2025-04-09")
    base.add_facts([
        Fact("Vehicles crossing to Gullwick pay a base fare of 6 florins a crossing", entity="Gullwick ferry",
             attribute="base fare", value="6 florins", source="Gullwick Ferry Company"),
        Fact("On market days the whole fare of a vehicle crossing to Gullwick is doubled", entity="Gullwick ferry",
             attribute="market day fare", value="doubled", source="Gullwick Ferry Company"),
        Fact("A permit code for a vehicle waiting for the Gullwick ferry has three parts", entity="permit code",
             attribute="parts", value="three", source="Gullwick Ferry Company"),
    ])
    yield base
    base.close()


def test_find_rules_matches_the_kind_asked(kb: KnowledgeBase) -> None:
    [fee] = find_rules(kb, "How much does a 9-metre van pay for one crossing to Gullwick?")
    assert fee.rule.title == "Gullwick ferry fares for vehicles" and fee.rule.verified
    [code] = find_rules(kb, "What permit code does a 2-tonne car in bay 3 of the quay car park at Gullwick get?")
    assert code.rule.title == "Gullwick parking permits"


def test_a_notice_is_parsed_once_however_often_it_is_read(kb: KnowledgeBase) -> None:
    # The memory's recall and the RulesAgent both look for the rule of one question.
    question = "How much does a 9-metre van pay for one crossing to Gullwick?"
    parse_fee_rule.cache_clear()
    first = find_rules(kb, question)
    misses = parse_fee_rule.cache_info().misses
    again = find_rules(kb, question)
    assert parse_fee_rule.cache_info().misses == misses and parse_fee_rule.cache_info().hits >= misses
    assert [f.rule for f in again] == [f.rule for f in first] and first[0].rule.verified


def test_the_team_answers_a_fee_from_the_rule_not_from_the_models_sum(kb: KnowledgeBase) -> None:
    question = "How much does a 9-metre Gullwick Residents Scheme van pay for one market-day crossing to Gullwick?"
    answer, model = ask(kb, question, {"single": "The van pays 6 florins doubled, so 12 florins."})
    assert answer.answer.startswith("32 florins a crossing")
    assert "(6 + 3 × (9 − 5)) × 2 − 4 = 32" in answer.answer
    assert any("documented fee rule" in n for n in answer.trace.notes)
    assert not model.requests_from("rules")  # every condition was settled by the question's words
    single, _ = ask(kb, question, {"single": "The van pays 6 florins doubled, so 12 florins."}, mode="single")
    assert single.answer == "The van pays 6 florins doubled, so 12 florins."  # the baseline is unchanged


def test_a_stay_of_several_periods_counts_the_free_one(kb: KnowledgeBase) -> None:
    answer, _ = ask(kb, "How much does a 6-metre van that is not in the Gullwick Residents Scheme pay in total for 5 "
                        "ordinary crossings to Gullwick?", {"single": "45 florins."})
    assert answer.answer.startswith("36 florins for 5 crossings")


def test_the_team_writes_a_code_and_the_model_chooses_an_unnamed_part(kb: KnowledgeBase) -> None:
    seen: list[str] = []

    def choose(request: ModelRequest) -> Any:
        seen.append(request.messages[-1].content)
        return {"choice": "T: the town car park"}

    # "the car park by the church" names none of the three car parks: the model chooses among them.
    answer, model = ask(kb, "What permit code does a 2-tonne car in bay 5 of the car park by the church in Gullwick get?",
                        {"single": "H-5-M", "rules": choose})
    assert answer.answer.startswith("T-005-M")
    assert len(model.requests_from("rules")) == 1 and "Q: the quay car park" in seen[0]


def test_a_contradicted_rule_is_never_applied(tmp_path: Path) -> None:
    base = KnowledgeBase.open(tmp_path / "misread.sqlite3")
    base.add_episode(DUES.replace("taken off after any doubling", "taken off before any doubling"),
                     source="Gullwick Ferry Company", published="2025-04-04")
    agent = build_rules(FunctionModel(lambda request: None), base)
    result = asyncio.run(agent.run("How much does a 9-metre Gullwick Residents Scheme van pay for one market-day "
                                   "crossing to Gullwick?"))
    base.close()
    assert result.output["draft"] == ""  # (6 + 12 − 4) × 2 = 28 florins is never offered
    assert "contradict" in (result.detail or "")


def test_no_rules_draft_when_the_case_lacks_a_quantity(kb: KnowledgeBase) -> None:
    answer, _ = ask(kb, "How much does a van pay for one crossing to Gullwick?",
                    {"single": "A van pays a base fare of 6 florins a crossing."})
    assert answer.answer == "A van pays a base fare of 6 florins a crossing."


HALL = """# Hire charges for Penwick Community Hall

Penwick Hall Committee, 2 May 2025. Groups hiring the hall are charged as follows.

The hall costs a flat fee of 20 crowns per booking. On top of that, every hour above 3 hours costs 5 crowns per hour.
For bookings on Sundays the total charge is one and a half times the usual amount.
Members of the Penwick Arts Society receive 10% off the charge, applied after any Sunday increase.
No booking is ever charged more than 80 crowns.

Example: a 5-hour Saturday booking costs 20 + 2 x 5 = 30 crowns, and 45 crowns on a Sunday. For a Penwick Arts Society member it costs 27 crowns on Saturday and 40.5 crowns on a Sunday.
"""


def test_other_wordings_threshold_before_the_rate_a_percentage_off_and_a_cap() -> None:
    rule = parse_fee_rule(HALL)
    assert rule is not None and rule.period == "booking"
    assert [(c.amount, c.per, c.over) for c in rule.charges] == [(20, None, 0), (5, "hour", 3)]
    assert [(a.kind, a.amount) for a in rule.adjustments] == [("multiply", 1.5), ("percent_off", 10)]
    assert rule.cap == 80 and rule.verified  # 30, 45, 27 and 40.5 crowns for the example's 5 hours
    sunday = rule.adjustments[0].condition
    assert sunday.holds("a 4-hour booking on a Sunday") is True
    assert sunday.holds("a 4-hour booking on a Saturday") is False
    assert rule.evaluate({"hour": 10}, {sunday.phrase: True}) == (80, "(20 + 5 × (10 − 3)) × 1.5, capped at 80")
    assert rule.evaluate({"hour": 2}, {}) == (20, "20")


KAYAKS = """# Kayak hire on the Lune

Lune Water Sports, 1 June 2025. Prices for hiring a kayak from the boathouse.

- The starting charge is 9 shillings, which covers the first 2 hours.
- For each hour beyond the first 2 hours, 3 shillings are added.
- Any part of an hour counts as a full hour.
- Every fifth hour of a hire is free.
- A hire on a bank holiday or a Sunday is charged twice the normal amount.
- Members of the Lune Paddlers pay 4 shillings less; this comes off after any doubling.

For example, a Lune Paddlers member who hires a kayak for 3 hours on a Sunday pays (9 + 3) x 2 = 24 shillings, less 4, so 20 shillings; on a normal day 12 shillings, or 8 shillings.
"""

PADDLE_CODES = """# Paddle codes

Lune Water Sports, 2 June 2025. A paddle code is made of three parts, in this order, joined by slashes:

- the boat type: SK for a sea kayak, RK for a river kayak and CN for a canoe;
- the rack number, as a 2-digit number;
- the blade class: A for blades up to 200 cm long, B for blades over 200 cm.

For example, river kayak number 3 with a 210 cm blade has the paddle code RK/03/B.
"""


def test_a_rate_after_what_the_base_covers_rounding_free_hours_and_either_day() -> None:
    rule = parse_fee_rule(KAYAKS)
    assert rule is not None and rule.verified  # 24, 20, 12 and 8 shillings for the example's 3 hours
    assert [(c.amount, c.per, c.over) for c in rule.charges] == [(9, None, 0), (3, "hour", 2)]
    assert rule.round_up == ("hour",) and (rule.free_every, rule.free_unit) == (5, "hour")
    doubled = rule.adjustments[0].condition
    assert doubled.holds("a kayak for 4 hours on a Sunday") and doubled.holds("on the August bank holiday")
    assert doubled.holds("on a Saturday") is False
    member = rule.adjustments[1].condition
    assert member.holds("someone who is not one of the Lune Paddlers") is False
    # 5 h 10 min is charged as 6 hours, the fifth of them free: 9 + 3 × (6 − 1 − 2) = 18
    hours = quantities_in("a kayak for 5 hours and 10 minutes", ["hour"])["hour"]
    assert rule.evaluate({"hour": hours}, {}) == (18, "(9 + 3 × (6 − 1 free − 2))")
    assert quantities_in("out from 09:30 to 13:00", ["hour"]) == {"hour": 3.5}
    assert case_count("Three Lune Paddlers each hire a kayak for 3 hours", ["hour"]) == 3
    assert case_count("A kayak for 3 hours each day", ["hour"]) == 1


def test_a_code_listed_as_bullets_in_order() -> None:
    rule = parse_code_rule(PADDLE_CODES)
    assert rule is not None and rule.separator == "/" and rule.verified and rule.expected == "RK/03/B"
    assert rule.evaluate("a canoe on rack number 7 with a 200 cm blade")[0] == "CN/07/A"
    # "kayak" is in two options; "sea" is in one: the words only one option has decide
    assert rule.evaluate("sea kayak number 12 with a 230 cm blade")[0] == "SK/12/B"


@pytest.mark.parametrize(("question", "kind"), [
    ("What does a 3-hour hire on a Sunday cost?", "fee"),
    ("A member hires a kayak for 3 hours. What is the charge?", "fee"),
    ("How much do they pay altogether?", "fee"),
    ("What is the paddle code of river kayak number 3?", "code"),
    ("Where is river kayak number 3 kept?", None),
    ("What is its fleet code?", "code"),
])
def test_more_ways_to_ask(question: str, kind: str | None) -> None:
    assert rule_asked(question) == kind


def test_the_bundled_l11_is_answered_by_the_rules_agent_alone(tmp_path: Path) -> None:
    """The RulesAgent's drafts for the suite's own rule questions, graded by the suite's rubric, no
    model call: a change to the reader that breaks the bundled notices fails here, not in a
    90-minute eval."""
    from moot.eval.levels import load_suite
    from moot.eval.rubric import grade_question

    [level] = [lv for lv in load_suite() if lv.level == "L11"]
    base = KnowledgeBase.open(tmp_path / "l11.sqlite3")
    for article in level.articles:
        base.add_episode(level.article_path(article).read_text(encoding="utf-8"), source=article.source,
                         published=article.published)
    agent = build_rules(FunctionModel(lambda request: None), base)
    drafts = {q.id: asyncio.run(agent.run(q.question)).output["draft"] for q in level.questions}
    base.close()
    assert all(grade_question(drafts[q.id], q).passed for q in level.questions), drafts
