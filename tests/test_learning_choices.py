"""Choices among listed dates and amounts: on a model on this machine they are asked twice, listed
both ways, and stand only when both answers name the same items; Python reads the asked unit and
the asked days before the model chooses.

The 0.5B model took whichever dates or amounts were listed first (on the bundled suite's duration
questions it answered "5 years" and "0 months" from the first two dates listed). A choice that
changes with the listing order is no choice: the plain draft answers instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.teams.learning import LearningTeam
from moot.teams.learning.specialists.common import same_unit

SOURCES = [
    ("Kettle Bay Courier: Jetty works", "2025-05-20",
     "Kettle Bay, 20 May 2025. Work on the new Kettle Bay jetty began on 12 May 2025. The old jetty dates from 1961."),
    ("Kettle Bay Courier: Ferry", "2025-06-05",
     "Kettle Bay Courier notice, 5 June 2025. The Kettle Bay ferry service started on 1 June 2025, the first since 1998."),
]

RESERVOIR = [
    ("Brask Courier: Spring", "2023-03-09",
     "The Brask lake stood at 74% of its capacity on 9 March. In a normal March it is above 85%."),
    ("Brask Courier: Summer", "2023-06-18",
     "The Brask lake was at 59% of capacity on 18 June."),
]


def open_kb(path: Path, sources: list[tuple[str, str, str]]) -> KnowledgeBase:
    base = KnowledgeBase.open(path)
    for source, published, text in sources:
        base.store_source(source, [(text, [Fact(text.split(". ")[0])])], published=published)
    return base


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    base = open_kb(tmp_path / "bay.sqlite3", SOURCES)
    yield base
    base.close()


def lines(request: ModelRequest) -> list[str]:
    return [line for line in request.messages[-1].content.splitlines() if line[:1] in "dqs" and line[1:2].isdigit() and ":" in line]


def id_of(request: ModelRequest, needle: str) -> str:
    return next(line.split(":")[0] for line in lines(request) if needle in line)


class Script:
    """The frame, the plain draft and one specialist's choice; every request's agent is logged."""

    def __init__(self, frame: dict[str, Any], single: str, **choices: Any) -> None:
        self.frame, self.single, self.choices = frame, single, choices
        self.calls: list[str] = []

    def __call__(self, request: ModelRequest) -> Any:
        role = request.agent or "?"
        self.calls.append(role)
        if role == "frame":
            return self.frame
        if role == "single":
            return self.single
        if role in self.choices:
            return self.choices[role](request)
        return {"sentence": "none"} if role == "quote" else {}


def ask(kb: KnowledgeBase, question: str, script: Script, *, model_name: str) -> Any:
    team = LearningTeam(kb, model=FunctionModel(script, name=model_name), store=False, budget="deep")
    return team.ask_sync(question, mode="multi")


QUESTION = "How many days after work on the Kettle Bay jetty began did the ferry service start?"
DURATION = {"asks_for": "how long", "about": [], "unit": "days"}
ANY_UNIT = {**DURATION, "unit": ""}
"""A frame that names no unit: every date is offered, a year alone too."""


def test_a_local_models_dates_stand_when_it_names_the_same_two_listed_both_ways(kb: KnowledgeBase) -> None:
    listed: list[list[str]] = []

    def by_meaning(request: ModelRequest) -> Any:
        listed.append(lines(request))
        return {"start": id_of(request, ": 12 May 2025"), "end": id_of(request, ": 1 June 2025"), "unit": "days"}

    script = Script(DURATION, "The ferry started on 1 June 2025.", dates=by_meaning)
    answer = ask(kb, QUESTION, script, model_name="local:scripted")
    assert script.calls.count("dates") == 2  # listed one way, then the other
    # the same dates, reversed, with ids by position; the dateline "Kettle Bay, 20 May 2025." is no event
    assert [line.split(":", 1)[1] for line in listed[0]] == [line.split(":", 1)[1] for line in reversed(listed[1])]
    assert [line.split(":")[0] for line in listed[1]] == [f"d{i}" for i in range(1, len(listed[1]) + 1)]
    # asked for days, a year alone ("dates from 1961") cannot be counted from, so it is not offered
    assert not any("20 May 2025" in line for line in listed[0]) and not any("1961" in line for line in listed[0])
    # "… notice, 5 June 2025." states its source's own date and has no verb: a dateline too
    assert not any("5 June 2025" in line for line in listed[0])
    assert answer.trace.chosen == "dates" and answer.answer.startswith("20 days"), answer.answer


def test_a_local_models_dates_that_follow_the_listing_order_are_no_choice(kb: KnowledgeBase) -> None:
    first_two = lambda r: {"start": lines(r)[0].split(":")[0], "end": lines(r)[1].split(":")[0], "unit": "years"}  # noqa: E731
    script = Script(ANY_UNIT, "The ferry started on 1 June 2025.", dates=first_two)
    answer = ask(kb, QUESTION, script, model_name="local:scripted")
    assert script.calls.count("dates") == 2
    assert answer.trace.chosen == "single" and answer.answer == "The ferry started on 1 June 2025."
    assert any(n.startswith("dates: no choice: listed both ways") for n in answer.trace.notes), answer.trace.notes


def test_two_readings_that_count_the_same_span_agree(tmp_path: Path) -> None:
    # each date is written in two sources: the two listings name different items for the same two days
    base = open_kb(tmp_path / "twice.sqlite3", [
        ("Bay Post", "2025-06-03", "Work on the jetty began on 12 May 2025. The ferry started on 1 June 2025."),
        ("Bay Herald", "2025-06-04", "The ferry started on 1 June 2025, after work began on 12 May 2025."),
    ])
    def by_meaning_from_the_end(request: ModelRequest) -> Any:
        listed = lines(request)
        last = lambda needle: next(line.split(":")[0] for line in reversed(listed) if needle in line)  # noqa: E731
        return {"start": last(": 12 May 2025"), "end": last(": 1 June 2025"), "unit": "days"}

    script = Script(DURATION, "The ferry started on 1 June 2025.", dates=by_meaning_from_the_end)
    answer = ask(base, QUESTION, script, model_name="local:scripted")
    assert script.calls.count("dates") == 2
    assert answer.trace.chosen == "dates" and answer.answer.startswith("20 days"), answer.answer
    base.close()


def test_asked_for_years_a_year_alone_is_offered(kb: KnowledgeBase) -> None:
    listed: list[list[str]] = []

    def by_meaning(request: ModelRequest) -> Any:
        listed.append(lines(request))
        return {"start": id_of(request, ": 1961"), "end": id_of(request, ": 12 May 2025"), "unit": "years"}

    script = Script({"asks_for": "how long", "about": [], "unit": "years"}, "It is old.", dates=by_meaning)
    answer = ask(kb, "How many years old was the old Kettle Bay jetty when work on the new one began?", script,
                 model_name="local:scripted")
    assert any(": 1961" in line for line in listed[0]) and answer.answer.startswith("64 years"), answer.answer


def test_a_hosted_model_is_asked_once(kb: KnowledgeBase) -> None:
    by_meaning = lambda r: {"start": id_of(r, ": 12 May 2025"), "end": id_of(r, ": 1 June 2025"), "unit": "days"}  # noqa: E731
    script = Script(DURATION, "The ferry started on 1 June 2025.", dates=by_meaning)
    answer = ask(kb, QUESTION, script, model_name="function")
    assert script.calls.count("dates") == 1 and answer.trace.chosen == "dates"


def test_two_amounts_are_chosen_one_field_each_and_checked_both_ways(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "brask.sqlite3", RESERVOIR)
    question = "What is the gap between the Brask lake's level in March and its level in June?"
    frame = {"asks_for": "calculation", "about": [], "unit": ""}
    fields: list[set[str]] = []

    def by_meaning(request: ModelRequest) -> Any:
        fields.append(set(request.output.json_schema["properties"]))  # type: ignore[union-attr]
        return {"operation": "difference", "first": id_of(request, "74%"), "second": id_of(request, "59%")}

    script = Script(frame, "It was 74%.", compute=by_meaning)
    answer = ask(base, question, script, model_name="local:scripted")
    assert script.calls.count("compute") == 2
    assert fields == [{"operation", "first", "second"}] * 2  # one amount a field: no list to fill with every id
    assert answer.trace.chosen == "compute" and answer.answer.startswith("15% (74% − 59%)"), answer.answer
    base.close()


def test_a_time_of_day_and_a_hyphened_label_are_not_listed_as_amounts(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "fair.sqlite3", [
        ("Tarnley Fair notes", "2025-09-02",
         "The fair opens at 6 pm. We sold 210 adult wristbands and 64 under-14 wristbands at the gate."),
    ])
    listed: list[list[str]] = []

    def by_meaning(request: ModelRequest) -> Any:
        listed.append(lines(request))
        return {"operation": "sum", "first": id_of(request, ": 210 adult —"), "second": id_of(request, ": 64 —")}

    frame = {"asks_for": "calculation", "about": [], "unit": ""}
    script = Script(frame, "They sold 210 wristbands.", compute=by_meaning)
    answer = ask(base, "How many wristbands were sold at the Tarnley fair gate in all?", script, model_name="local:scripted")
    offered = [line.split(":", 1)[1].split("—")[0].strip() for line in listed[0]]
    assert "210 adult" in offered and "64" in offered
    assert not any(o.startswith(("6 pm", "14")) for o in offered), offered
    assert answer.trace.chosen == "compute" and answer.answer.startswith("274"), answer.answer
    base.close()


def test_two_calculations_of_the_same_figures_agree_though_each_is_written_twice(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "brask2.sqlite3", [
        ("Brask Courier: Summer", "2023-06-18", "The lake was at 59% on 18 June, down from 74% on 9 March."),
        ("Brask Post", "2023-06-20", "The lake stood at 74% on 9 March and at 59% on 18 June."),
    ])
    question = "What is the gap between the Brask lake's level in March and its level in June?"

    def by_meaning_from_the_end(request: ModelRequest) -> Any:
        listed = lines(request)
        last = lambda needle: next(line.split(":")[0] for line in reversed(listed) if needle in line)  # noqa: E731
        return {"operation": "difference", "first": last(": 74%"), "second": last(": 59%")}

    script = Script({"asks_for": "calculation", "about": [], "unit": ""}, "It was 74%.", compute=by_meaning_from_the_end)
    answer = ask(base, question, script, model_name="local:scripted")
    assert script.calls.count("compute") == 2
    assert answer.trace.chosen == "compute" and answer.answer.startswith("15% (74% − 59%)"), answer.answer
    base.close()


def test_the_asked_days_pick_the_amounts_whose_sentences_state_them(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "brask.sqlite3", RESERVOIR)
    question = "How did the Brask lake level change between 9 March and 18 June 2023?"
    frame = {"asks_for": "change", "about": [], "unit": "level"}
    seen: list[str] = []

    def change(request: ModelRequest) -> Any:
        seen.append(request.messages[-1].content)
        return {"operation": "change"}

    script = Script(frame, "It fell.", compute=change)
    answer = ask(base, question, script, model_name="local:scripted")
    # 74% (its sentence states 9 March) is taken over 85% (a normal March, dated by its source):
    # Python lists only the two amounts of the asked days, and the model chooses the operation
    assert "85%" not in seen[0] and "74%" in seen[0] and "59%" in seen[0]
    assert answer.trace.chosen == "compute" and "down 15" in answer.answer and "(59% − 74%)" in answer.answer, answer.answer
    base.close()


def test_percent_is_one_unit_however_written() -> None:
    assert same_unit("%", "percentage") and same_unit("%", "percent") and same_unit("percentage", "%")
    assert not same_unit("%", "tonnes")
    # a rate is its own unit: a kiln's 60 °C is no report of its 100 °C per hour
    assert not same_unit("°C", "°C per hour") and same_unit("km per hour", "kilometres per hour")


def test_sources_that_agree_on_the_asked_unit_replace_a_plain_draft_that_took_another_figure(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "parade.sqlite3", [
        ("Tarrow Post", "2024-10-14", "Some 3,100 people came to the Tarrow boat parade, where 120 boats sailed."),
        ("Tarrow Echo", "2024-10-16", "The Tarrow boat parade drew 5,200 people, and 120 boats sailed."),
    ])
    frame = {"asks_for": "fact", "about": [], "unit": "boats"}
    script = Script(frame, "3,100 boats sailed.")  # a figure of the passage, not the boats
    answer = ask(base, "How many boats sailed in the Tarrow boat parade?", script, model_name="local:scripted")
    assert "sources" not in script.calls  # each source's boat count is read by Python: no choice asked
    assert answer.trace.chosen == "sources", answer.trace.notes
    assert answer.answer.startswith("120 boats — every source that gives it agrees: Tarrow Post (2024-10-14); Tarrow Echo")
    # asked about people, the same sources disagree, and say so
    script = Script({"asks_for": "fact", "about": [], "unit": "people"}, "3,100 people came.")
    answer = ask(base, "How many people came to the Tarrow boat parade?", script, model_name="local:scripted")
    assert answer.trace.chosen == "sources" and "5,200 people" in answer.answer and "3,100 people" in answer.answer
    base.close()


def test_a_plain_draft_that_says_the_sources_do_not_say_stands_and_no_sentence_is_chosen_over_it(kb: KnowledgeBase) -> None:
    # On the development suites a sentence chosen over "the sources do not say" was never the answer
    # (a neighbouring sentence, a heading) and twice replaced a right "do not say": the plain draft stands.
    question = "When did the Kettle Bay ferry service start?"
    frame = {"asks_for": "when", "about": [], "unit": ""}
    by_meaning = lambda r: {"sentence": id_of(r, "ferry service started")}  # noqa: E731
    script = Script(frame, "The sources do not say.", quote=by_meaning)
    answer = ask(kb, question, script, model_name="local:scripted")
    assert answer.answer == "The sources do not say." and answer.trace.chosen == "single"
    assert "quote" not in script.calls  # a draft passed the checker: the stand-by sentence is not asked
    assert any("the plain draft (it says the sources do not say)" in n for n in answer.trace.notes), answer.trace.notes
    # a plain draft the checker refuses still gives way to the sentence chosen the same both ways
    script = Script(frame, "The service started on 9 September 1999.", quote=by_meaning)
    answer = ask(kb, question, script, model_name="local:scripted")
    assert script.calls.count("quote") == 2
    assert answer.trace.chosen == "quote" and "started on 1 June 2025" in answer.answer, answer.answer


def test_figures_about_different_named_things_are_not_reports_of_one_value(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "workshops.sqlite3", [
        ("Brant Courier", "2024-02-10", "The Eastfield workshop of the Brant guild makes 90 chairs a week."),
        ("Brant guild newsletter", "2024-02-24", "The guild's Westmoor workshop, opened in 2022, makes 60 chairs a week."),
    ])
    frame = {"asks_for": "fact", "about": [], "unit": "chairs"}
    script = Script(frame, "The guild makes 90 chairs a week.")
    answer = ask(base, "How many chairs does the Brant guild make each week?", script, model_name="local:scripted")
    # not "the latest report gives 60 chairs; earlier 90": Eastfield's and Westmoor's are two workshops
    assert "sources" not in {d["specialist"] for d in answer.trace.drafts}, (answer.answer, answer.trace.notes)
    assert answer.trace.chosen == "single"
    base.close()


def test_one_sources_dates_of_different_days_are_different_events(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "bridge.sqlite3", [
        ("Selby Weekly", "2023-03-14", "Work on the Kessock bridge will begin on 12 May."),
        ("Selby Weekly", "2023-09-05", "The Kessock bridge was finished on 30 August."),
    ])
    script = Script({"asks_for": "when", "about": [], "unit": ""}, "It was finished on 30 August.")
    question = "Which came first: work on the Kessock bridge beginning, or the bridge being finished?"
    answer = ask(base, question, script, model_name="local:scripted")
    # not "the latest report gives 30 August; earlier: 12 May": one paper's two reports date two events
    assert "sources" not in {d["specialist"] for d in answer.trace.drafts}, (answer.answer, answer.trace.notes)
    assert answer.answer == "It was finished on 30 August."
    base.close()


def test_a_sources_table_row_is_its_answer_and_the_difference_follows_the_plain_draft(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "ferry.sqlite3", [
        ("Harran Ferries notice", "2026-03-02",
         "Our new ferry, the Kestrel, takes over the Harran crossing in May.\n\n"
         "- Passenger capacity: 180\n- Vehicle deck: 24 cars\n- Adult return: £9.60"),
        ("Coast Herald", "2026-03-05",
         "The Kestrel, built in Gdansk, can carry 200 passengers and 22 cars, the company says. "
         "An adult return on the Kestrel will cost £9.80, up from £8.90."),
    ])
    menus: list[dict[str, list[str]]] = []

    def by_meaning(request: ModelRequest) -> dict[str, str]:
        schema = request.output.json_schema  # type: ignore[union-attr]
        menus.append({k: v["enum"] for k, v in schema["properties"].items()})
        return {"source_1": id_of(request, "£9.80")}

    script = Script({"asks_for": "fact", "about": [], "unit": "passengers"}, "The Kestrel can carry 200 passengers.",
                    sources=by_meaning)
    answer = ask(base, "How many passengers can the Kestrel carry?", script, model_name="local:scripted")
    # the notice's row matches fewer of the question's words than the Herald's sentence, and is still
    # the notice's answer: a bare figure whose row names passengers. Python reads both; no choice
    assert "sources" not in script.calls
    assert answer.trace.chosen == "single" and answer.answer.startswith("The Kestrel can carry 200 passengers.\n\n")
    assert "Earlier: 180 (Harran Ferries notice, 2026-03-02)" in answer.answer, answer.answer
    # the Herald's sentence gives two fares: the model chooses between them, and "none" is no option
    script = Script({"asks_for": "fact", "about": [], "unit": "fare"}, "An adult return costs £9.80.", sources=by_meaning)
    answer = ask(base, "How much is an adult return fare on the Kestrel?", script, model_name="local:scripted")
    assert len(menus) == 1 and list(menus[0]) == ["source_1"] and "none" not in menus[0]["source_1"], menus
    assert "Earlier: £9.60 (Harran Ferries notice, 2026-03-02)" in answer.answer, answer.answer
    # a plain draft that already gives both figures gets no note
    script = Script({"asks_for": "fact", "about": [], "unit": "passengers"},
                    "The Herald says 200 passengers; the notice says 180.", sources=by_meaning)
    answer = ask(base, "How many passengers can the Kestrel carry?", script, model_name="local:scripted")
    assert answer.answer == "The Herald says 200 passengers; the notice says 180."
    base.close()


def test_years_the_sources_give_for_one_date_are_compared_and_follow_the_answer(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "club.sqlite3", [
        ("Club website", "2025-10-01", "The Tarn Rowing Club was founded in 1962 by six students."),
        ("Rowing federation register", "2025-10-01", "Tarn Rowing Club: founded in 1962, 140 members."),
        ("Courier", "2025-10-01", "The Tarn Rowing Club, founded in 1958, rows on Tarn Lake."),
    ])
    script = Script({"asks_for": "when", "about": [], "unit": "founded"}, "The Tarn Rowing Club was founded in 1962.")
    answer = ask(base, "When was the Tarn Rowing Club founded?", script, model_name="local:scripted")
    # a year alone is a date of its own unit: the three sources' years are compared
    assert answer.answer.startswith("The Tarn Rowing Club was founded in 1962.\n\nThe sources disagree:"), answer.answer
    assert "Courier (2025-10-01) gives 1958" in answer.answer, answer.answer
    base.close()



HALL = [
    ("Orrin Hall notes", "2023-10-02", "The Orrin Hall open day was held on 16 September 2023. Forty stalls came."),
    ("Orrin Hall notes", "2024-10-01", "This year's Orrin Hall open day took place on 14 September 2024, with 52 stalls. "
                                       "The hall's roof was mended in September."),
    ("Orrin Hall notes", "2025-10-06", "The open day at Orrin Hall fell on 20 September 2025 and drew 61 stalls."),
]


def test_two_years_the_question_names_bound_the_dates_listed_and_are_not_amounts(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "hall.sqlite3", HALL)
    listed: list[list[str]] = []

    def by_meaning(request: ModelRequest) -> Any:
        listed.append(lines(request))
        return {"start": id_of(request, ": 14 September 2024"), "end": id_of(request, ": 20 September 2025"), "unit": "days"}

    script = Script(DURATION, "About a year.", dates=by_meaning)
    answer = ask(base, "How many days were there between the 2024 Orrin Hall open day and the 2025 one?", script,
                 model_name="local:scripted")
    # the question's bare years are its dates, not two numbers for a calculation ...
    assert "dates 2024, 2025" in answer.trace.notes[0] and "numbers" not in answer.trace.notes[0], answer.trace.notes[0]
    assert "compute" not in script.calls
    # ... and the dates listed are the sources' days in those two years only ("this year" and
    # "September" say less than 14 September 2024)
    assert listed and all("2024" in line or "2025" in line for line in listed[0]), listed[0]
    assert not any("2023" in line for line in listed[0]) and len(listed[0]) == 2
    assert answer.trace.chosen == "dates" and answer.answer.startswith("371 days"), answer.answer
    base.close()


def test_a_year_the_question_names_picks_the_amount_dated_in_it_not_its_january(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "hall.sqlite3", HALL)
    seen: list[str] = []

    def change(request: ModelRequest) -> Any:
        seen.append(request.messages[-1].content)
        return {"operation": "change"}

    script = Script({"asks_for": "change", "about": [], "unit": "stalls"}, "More came.", compute=change)
    answer = ask(base, "How did the number of stalls at the Orrin Hall open day change from 2024 to 2025?", script,
                 model_name="local:scripted")
    # each named year holds one count: the code lists those two, and no year is offered as an amount
    assert seen and "52 stalls" in seen[0] and "61 stalls" in seen[0] and "Forty" not in seen[0], seen
    assert [line.split(":")[0] for line in seen[0].splitlines() if line[:1] == "q"] == ["q1", "q2"], seen[0]
    assert answer.trace.chosen == "compute" and "up 9" in answer.answer, answer.answer
    base.close()


def test_a_change_asked_across_three_reports_is_computed_step_by_step(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "rowing.sqlite3", [
        ("Tarn Rowing Club news", "2024-03-04", "The Tarn Rowing Club had 38 members this spring."),
        ("Tarn Rowing Club news", "2024-09-02", "Membership of the Tarn Rowing Club rose to 51 members."),
        ("Tarn Rowing Club news", "2025-03-03", "The Tarn Rowing Club now counts 47 members."),
    ])
    script = Script({"asks_for": "change", "about": [], "unit": "members"}, "The club has 47 members.")
    answer = ask(base, "How did the number of members of the Tarn Rowing Club change from one report to the next?", script,
                 model_name="local:scripted")
    # the code works out each step; the plain draft's latest figure stands, and the steps follow it
    assert answer.answer.startswith("The club has 47 members."), answer.answer
    assert "up 9" in answer.answer and "+13" in answer.answer and "−4" in answer.answer, answer.answer
    assert "The largest change: +13, from 38 members (2024-03-04) to 51 members (2024-09-02)" in answer.answer
    base.close()


def test_a_year_the_question_names_is_the_year_a_sentence_names_before_its_reports_date(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "fair.sqlite3", [
        ("Orrin Hall yearbook", "2025-01-20", "In 2024 the Orrin Hall fair drew 52 stalls."),
        ("Orrin Hall notes", "2025-10-06", "The Orrin Hall fair drew 61 stalls."),
    ])
    seen: list[str] = []

    def change(request: ModelRequest) -> Any:
        seen.append(request.messages[-1].content)
        return {"operation": "change"}

    script = Script({"asks_for": "change", "about": [], "unit": "stalls"}, "More came.", compute=change)
    answer = ask(base, "How did the number of stalls at the Orrin Hall fair change from 2024 to 2025?", script,
                 model_name="local:scripted")
    # the yearbook, published in January 2025, gives 2024's count: it is not a second 2025 figure
    assert seen and "52 stalls" in seen[0] and "61 stalls" in seen[0], seen
    assert answer.trace.chosen == "compute" and "It went from 52 stalls" in answer.answer and "up 9" in answer.answer, answer.answer
    base.close()


BRANCH_REPORT = [
    ("Harbour Lunch Club annual report", "2026-06-30",
     "Our three branches kept going all year.\n\n"
     "| Branch | Opening days | Meals served |\n|---|---|---|\n"
     "| North | Mon, Wed | 1,204 |\n| Mill Lane | Tue, Thu | 986 |\n| Station | Fri | 731 |\n"),
]


class ReadingPlainly(Script):
    """A script that also keeps each prompt the plain draft was given."""

    def __init__(self, frame: dict[str, Any], single: str, **choices: Any) -> None:
        super().__init__(frame, single, **choices)
        self.prompts: list[str] = []

    def __call__(self, request: ModelRequest) -> Any:
        if request.agent == "single":
            self.prompts.append(request.messages[-1].content)
        return super().__call__(request)


def test_a_tables_column_total_is_shown_to_the_plain_draft_and_counts_as_worked_out(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "club.sqlite3", BRANCH_REPORT)
    script = ReadingPlainly({"asks_for": "fact", "about": [], "unit": "meals"}, "The branches served 2,921 meals.")
    answer = ask(base, "How many meals did the branches serve altogether?", script, model_name="local:scripted")
    prompts = script.prompts
    assert "(Column totals worked out from the table, not written in the source: " \
           "Meals served: 2,921 (1,204 + 986 + 731).)" in prompts[0], prompts[0]
    # no source writes 2,921: it is grounded because it was added up from the table
    assert answer.trace.chosen == "single" and answer.answer == "The branches served 2,921 meals.", answer.trace.notes
    base.close()


def test_a_tables_column_total_is_an_amount_the_calculation_may_choose(tmp_path: Path) -> None:
    base = open_kb(tmp_path / "club.sqlite3", BRANCH_REPORT)
    menus: list[list[str]] = []

    def by_meaning(request: ModelRequest) -> Any:
        menus.append(lines(request))
        return {"operation": "percent_of", "first": id_of(request, "| North |"), "second": id_of(request, "the total of the column")}

    script = Script({"asks_for": "calculation", "about": [], "unit": ""}, "North gave out 1,204.", compute=by_meaning)
    answer = ask(base, "What share of all the meals did the North branch serve?", script, model_name="local:scripted")
    total = next(line for line in menus[0] if ": 2,921" in line)
    assert "the total of the column “Meals served”: 1,204 + 986 + 731" in total, total
    assert answer.trace.chosen == "compute" and answer.answer.startswith("41.22% (1,204 of 2,921)"), answer.answer
    base.close()


def test_a_tables_header_counts_once_and_short_notes_keep_their_words() -> None:
    from datetime import date

    from moot.memory.units import SourceUnit
    from moot.teams.learning.ask.recall import _distinctive

    def unit(source: str, position: int, text: str, kind: str = "sentence", block: int = 0) -> SourceUnit:
        return SourceUnit(source, date(2026, 1, 1), 0, position, text, kind, block)

    header = "| Branch | Meals served |"
    table = [unit("report", 0, "Our branches kept going."),
             *(unit("report", i, f"{header} | {name} | {n} |", "row", 1) for i, (name, n) in
               enumerate([("North", "1,204"), ("Mill Lane", "986"), ("Station", "731")], 1))]
    # the column's name is in every row's text, and still the one word that says what is asked
    assert "meal" in _distinctive(table, "How many meals were served?")
    # five short notes of one paragraph each, four with a sentence on the ferry among others: the
    # question's words are in a few sentences, so they say what is asked
    notes = []
    for i in range(5):
        lines = ["The hall is open on Mondays.", "Tea is served at four.",
                 "The ferry timetable will change in May." if i < 4 else "The library opens late on Thursdays."]
        notes += [unit(f"note {i}", 3 * i + k, line) for k, line in enumerate(lines)]
    assert {"ferri", "timet"} <= _distinctive(notes, "When did the ferry timetable change?")


def test_a_tables_total_follows_its_rows_when_the_sources_are_too_long_to_read_whole(tmp_path: Path) -> None:
    filler = " ".join(f"The garden party on day {i} drew neighbours from the hill streets for tea and cake." for i in range(120))
    base = open_kb(tmp_path / "long.sqlite3", [*BRANCH_REPORT, ("Hill Streets newsletter", "2026-05-01", filler)])
    script = ReadingPlainly({"asks_for": "fact", "about": [], "unit": "meals"}, "The branches served 2,921 meals.")
    answer = ask(base, "How many meals did the branches serve altogether?", script, model_name="local:scripted")
    prompts = script.prompts
    assert prompts[0].count("garden party") < 120  # the best-matching passages, not the sources whole
    assert "| North | Mon, Wed | 1,204 |" in prompts[0]
    assert "(Column totals worked out from the table, not written in the source: Meals served: 2,921 (1,204 + 986 + 731).)" \
        in prompts[0], prompts[0]
    assert answer.trace.chosen == "single" and answer.answer == "The branches served 2,921 meals.", answer.trace.notes
    base.close()
