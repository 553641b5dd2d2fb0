"""The sources specialist: each source's value chosen by the model, compared in Python.

Real SQLite knowledge bases, test models that answer by the calling agent's name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.memory.passages import find_source_sentences
from moot.models.base import ModelRequest
from moot.teams.learning.sources import Candidate, Report, candidates, compare, value_kind
from learning_support import ask

POST = """# Kites over the Harle Downs

Harle Post, 14 May 2025. The second Harle Downs Kite Fair opened on Friday 9 May and drew 3,100 visitors over
its two days, the Harle Post can report.

Kites were launched from Beacon Hill. This year's fair cost 12,000 crowns, most of it paid by local shops.
"""

COURIER = """# A record kite fair

Downs Courier, 16 May 2025. Some 4,800 people came to the Harle Downs Kite Fair, which opened on Saturday 10 May,
according to figures given to the Downs Courier.

Kites were launched from Windy Knoll, and a band from Selby played. Organiser Ada Quern said this year's fair cost
15,000 crowns.
"""

NOTICE_APRIL = """# Harle baths reopen

Harle Parish notice, 2 April 2025. The Harle baths open for the season on 1 May. The season will end on
15 September. The baths close at 8 p.m. every evening.
"""

NOTICE_AUGUST = """# A longer season at the Harle baths

Harle Parish notice, 20 August 2025. The parish has extended the season of the Harle baths: they will now close for
the year on 30 September instead of 15 September. From 1 September the baths stay open until 9 p.m. every evening.
"""


@pytest.mark.parametrize(("question", "kind"), [
    ("How many people attended the 2025 Harle Downs Kite Fair?", "amount"),
    ("How much did the Harle Downs Kite Fair cost?", "amount"),
    ("On what date did the Harle Downs Kite Fair open?", "date"),
    ("What time do the Harle baths close from 1 September?", "time"),
    ("From which hill were the kites launched?", "name"),
    ("Who organised the kite fair?", "name"),
    ("How far apart are the two attendance figures?", "amount"),
    ("How many visitors did the two fairs have in total?", None),        # a total is computed, not compared
    ("How many days did the fair last?", None),                          # a duration
    ("If the fair had opened a day later, how many people would have come?", None),  # a hypothetical
    ("Why was the season extended?", None),
    ("With the old threshold, how many houses would the group have protected?", None),  # a what-if
    ("Which bakery of the co-op bakes more loaves a day?", None),           # a comparison between things
])
def test_the_kind_of_value_asked(question: str, kind: str | None) -> None:
    assert value_kind(question) == kind


def test_candidates_of_each_kind() -> None:
    sentence = "The fair drew 3,100 visitors over its two days and cost 12,000 crowns."
    assert [c.text for c in candidates("amount", "How much did the fair cost?", sentence, year=2025)] == ["12,000 crowns"]
    assert [c.text for c in candidates("amount", "How many visitors came?", sentence, year=2025)] == ["3,100 visitors"]
    assert [c.text for c in candidates("amount", "How many people came?", sentence, year=2025)] == ["3,100 visitors"]
    # A budget is money: a source that gives only a count of volunteers holds no value for it.
    assert candidates("amount", "What is the current budget?", "The cleanup has 950 volunteers.", year=2026) == []
    lanterns = candidates("amount", "How many lanterns were floated?", "1,150 paper lanterns were floated on 2 evenings.",
                          year=2025)
    assert [c.text for c in lanterns] == ["1,150 paper lanterns"]
    dates = candidates("date", "When did it open?", "It opened on Friday 9 May and closed on 11 May 2025.", year=2025)
    assert [c.key for c in dates] == ["2025-05-09", "2025-05-11"]
    # Nearest the question's own words first: the cost, not the lanterns' price in the same sentence.
    cost = candidates("amount", "How much did the fair cost?",
                      "The founder said the fair cost 15,000 crowns, paid for by the sale of kites at 5 crowns each.",
                      year=2025)
    assert [c.text for c in cost] == ["15,000 crowns", "5 crowns"]
    times = candidates("time", "What time?", "Open from 7 a.m. to 8 p.m., later until 21:30.", year=None)
    assert [c.key for c in times] == ["07:00", "20:00", "21:30"]
    names = candidates("name", "From which hill were the kites launched?",
                       "Kites were launched from Windy Knoll and Beacon Hill, and a band from Selby played.",
                       year=None, exclude=["Downs Courier"])
    assert names[0].text == "Beacon Hill" and {"Windy Knoll", "Selby"} <= {c.text for c in names}


def _report(source: str, published: str, sentence: str, value: str, number: float | None = None,
            kind: str = "name") -> tuple[Report, Candidate]:
    candidate = Candidate(value, value.lower() if number is None else f"{number:g}", number,
                          "amount" if number is not None else kind)
    return Report(source, published, (sentence,), (candidate,)), candidate


def test_two_publishers_that_differ_disagree_and_the_gap_is_computed() -> None:
    chosen = [_report("Harle Post", "2025-05-14", "It drew 3,100 visitors.", "3,100 visitors", 3100),
              _report("Downs Courier", "2025-05-16", "Some 4,800 people came.", "4,800 people", 4800)]
    kind, draft, _ = compare("How many people attended?", chosen)  # type: ignore[misc]
    assert kind == "disagree"
    assert "Harle Post (14 May 2025) says 3,100 visitors" in draft and "Downs Courier (16 May 2025) says 4,800 people" in draft
    kind, draft, _ = compare("How far apart are the two attendance figures?", chosen)  # type: ignore[misc]
    assert draft.startswith("1700 apart (4,800 people − 3,100 visitors)")


def test_one_publisher_that_changed_its_value_is_an_update() -> None:
    chosen = [_report("Harle Parish", "2025-04-02", "The baths' season will end on 15 September.", "15 September",
                      kind="date"),
              _report("Harle Parish", "2025-08-20", "The baths will now close for the season on 30 September.",
                      "30 September", kind="date")]
    kind, draft, _ = compare("On what date does the season of the baths end?", chosen)  # type: ignore[misc]
    assert kind == "update" and draft.startswith("30 September (the latest report, Harle Parish, 20 August 2025")
    assert "earlier: 15 September" in draft
    # A later date in a sentence about something else is no update of the asked one.
    unrelated = [chosen[0], _report("Harle Parish", "2025-08-20", "A new kiosk opens on 1 August.", "1 August", kind="date")]
    assert compare("On what date does the season of the baths end?", unrelated) is None
    # A later name from the same publisher is no update: it is most often about something else.
    names = [_report("Gazette", "2025-03-05", "Her captain is Ilse Varrow.", "Ilse Varrow"),
             _report("Gazette", "2025-04-18", "The Skerra Island Council has published the fares.", "Skerra Island Council")]
    assert compare("Who is the captain of the ferry?", names) is None


def test_values_of_different_units_are_no_disagreement() -> None:
    chosen = [_report("Gazette", "2025-01-01", "Sandbags saved 12 houses.", "12 houses", 12),
              _report("Council", "2025-01-02", "The water rose to 1.5 metres.", "1.5 metres", 1.5)]
    chosen = [(r, Candidate(v.text, v.key, v.number, "amount", v.text.split()[-1].rstrip("s"))) for r, v in chosen]
    assert compare("How many houses were saved?", chosen) is None


def test_reports_about_different_things_are_no_disagreement() -> None:
    chosen = [_report("Herald", "2025-01-01", "The Millgate bakery is managed by Dora Fenwick.", "Dora Fenwick"),
              _report("Newsletter", "2025-01-02", "Tomas Pell manages the Ridgeway bakery.", "Tomas Pell")]
    assert compare("Who manages the bakery that won the prize?", chosen) is None


def _kb(tmp_path: Path, *episodes: tuple[str, str, str]) -> KnowledgeBase:
    kb = KnowledgeBase.open(tmp_path / "kb.sqlite3")
    for text, source, published in episodes:
        kb.add_episode(text, source=source, published=published)
    return kb



@pytest.fixture
def fair(tmp_path: Path) -> Any:
    kb = _kb(tmp_path, (POST, "Harle Post", "2025-05-14"), (COURIER, "Downs Courier", "2025-05-16"))
    kb.add_facts([
        Fact("The second Harle Downs Kite Fair drew 3,100 visitors", entity="Harle Downs Kite Fair", attribute="visitors",
             value="3,100", source="Harle Post"),
        Fact("Some 4,800 people came to the Harle Downs Kite Fair", entity="Kite Fair", attribute="attendance",
             value="4,800", source="Downs Courier"),
        Fact("The Harle Downs Kite Fair cost 12,000 crowns", entity="Harle Downs Kite Fair", attribute="cost",
             value="12,000 crowns", source="Harle Post"),
    ])
    yield kb
    kb.close()


def test_each_source_holds_its_own_sentences(fair: KnowledgeBase) -> None:
    found = find_source_sentences(fair, "How much did the Harle Downs Kite Fair cost?")
    assert [r.source for r in found] == ["Harle Post", "Downs Courier"]  # oldest first
    assert any("12,000 crowns" in s for s in found[0].sentences)
    assert any("15,000 crowns" in s for s in found[1].sentences)


def test_multi_reports_a_disagreement_the_single_draft_hides(fair: KnowledgeBase) -> None:
    question = "How many people attended the Harle Downs Kite Fair?"
    seen: list[str] = []

    def choose(request: ModelRequest) -> Any:
        seen.append(request.messages[-1].content)
        return {"source_1": "3,100 visitors", "source_2": "4,800 people"}

    answer, model = ask(fair, question, {"single": "3,100 people attended the fair [#1].", "sources": choose})
    assert "The sources disagree" in answer.answer
    assert "3,100 visitors" in answer.answer and "4,800 people" in answer.answer
    assert "Harle Post" in answer.answer and "Downs Courier" in answer.answer
    assert not seen  # each source holds one number of people ("two days" counts no people): nothing to choose
    assert any("the sources disagree" in n for n in answer.trace.notes)
    single, _ = ask(fair, question, {"single": "3,100 people attended the fair [#1]."}, mode="single")
    assert single.answer == "3,100 people attended the fair [#1]."


def test_the_gap_between_two_sources(fair: KnowledgeBase) -> None:
    answer, _ = ask(fair, "How far apart are the two attendance figures for the Harle Downs Kite Fair?",
                    {"single": "The figures are 3,100 visitors.", "sources": {"source_1": "3,100 visitors",
                                                                             "source_2": "4,800 people"},
                     "compute": {"operation": "none", "operands": []}})
    assert answer.answer.startswith("1700 apart")


@pytest.fixture
def baths(tmp_path: Path) -> Any:
    kb = _kb(tmp_path, (NOTICE_APRIL, "Harle Parish", "2025-04-02"), (NOTICE_AUGUST, "Harle Parish", "2025-08-20"))
    kb.add_facts([Fact("The Harle baths season will end on 15 September", entity="Harle baths", attribute="season end",
                       value="15 September", source="Harle Parish")])
    yield kb
    kb.close()


def test_a_later_notice_updates_the_value_the_single_draft_kept(baths: KnowledgeBase) -> None:
    answer, _ = ask(baths, "On what date does the Harle baths' season end?",
                    {"single": "The season ends on 15 September [#1].",
                     "sources": {"source_1": "15 September", "source_2": "30 September"}})
    assert answer.answer.startswith("30 September (the latest report")
    assert any("does not state the latest" in n for n in answer.trace.notes)


def test_a_single_draft_that_states_the_latest_value_is_kept(baths: KnowledgeBase) -> None:
    answer, _ = ask(baths, "On what date does the Harle baths' season end?",
                    {"single": "It now ends on 30 September.",
                     "sources": {"source_1": "15 September", "source_2": "30 September"}})
    assert answer.answer == "It now ends on 30 September."


def test_a_time_of_day_needs_no_model_call_when_each_source_holds_one(baths: KnowledgeBase) -> None:
    answer, model = ask(baths, "What time do the Harle baths close in the evening from 1 September?",
                        {"single": "The baths close in the evening from 1 September."})
    assert answer.answer.startswith("9 p.m. (the latest report")
    assert not model.requests_from("sources")


def test_a_hypothetical_gets_no_sources_draft(fair: KnowledgeBase) -> None:
    answer, model = ask(fair, "If the Harle Downs Kite Fair had cost less, how many people would have come?",
                        {"single": "The sources do not say."})
    assert not model.requests_from("sources")
    assert answer.answer == "The sources do not say."


def test_the_one_value_the_sources_give_leads_when_the_single_draft_states_none(tmp_path: Path) -> None:
    kb = _kb(tmp_path, (NOTICE_APRIL.replace(" The baths close at 8 p.m. every evening.", ""), "Harle Parish", "2025-04-02"),
             (NOTICE_AUGUST, "Harle Parish", "2025-08-20"))
    kb.add_facts([Fact("The Harle baths season will end on 15 September", entity="Harle baths", attribute="season end",
                       value="15 September", source="Harle Parish")])
    answer, _ = ask(kb, "What time do the Harle baths close in the evening from 1 September?",
                    {"single": "The baths close in the evening from 1 September."})
    assert answer.answer.startswith("9 p.m. (the Harle Parish, 20 August 2025)")
    assert any("states no time" in n for n in answer.trace.notes)
    stated, _ = ask(kb, "What time do the Harle baths close in the evening from 1 September?",
                    {"single": "They close at 9 p.m."})
    assert stated.answer == "They close at 9 p.m."
    kb.close()


def test_datelines_are_no_sentences(tmp_path: Path) -> None:
    kb = _kb(tmp_path, (NOTICE_AUGUST, "Harle Parish", "2025-08-20"))
    found = find_source_sentences(kb, "On what date does the Harle baths' season end?")
    assert found and all(not s.startswith("Harle Parish notice, 20 August 2025") for s in found[0].sentences)
    kb.close()


def test_a_value_that_plainly_fits_needs_no_choice() -> None:
    from moot.teams.learning.sources import Report, fits

    def one(sentence: str, value: str, kind: str) -> tuple[Report, Candidate]:
        candidate = Candidate(value, value.lower(), None, kind)
        return Report("Courier", "2025-05-16", (sentence,), (candidate,)), candidate

    report, bridge = one("Kites flew from Windy Knoll, and a band from Selby played.", "Windy Knoll", "name")
    assert not fits(bridge, report, "From which bridge were the kites flown?", "name")
    report, bridge = one("Lanterns were released from Tamsin Bridge, and a band from Aldwick played.", "Tamsin Bridge", "name")
    assert fits(bridge, report, "From which bridge were the lanterns released?", "name")
    sentence = "Organiser Ada Quern said this year's fair cost 15,000 crowns, paid for by kites at 5 crowns each."
    report = Report("Courier", "2025-05-16", (sentence,), ())
    question = "How much did the Harle Downs Kite Fair cost?"
    assert fits(Candidate("15,000 crowns", "15000", 15000, "amount"), report, question, "amount")
    assert not fits(Candidate("5 crowns", "5", 5, "amount"), report, question, "amount")
    report = Report("Parish", "2025-04-02", ("The baths are open from 7 a.m. to 8 p.m.",), ())
    assert fits(Candidate("8 p.m.", "20:00", None, "time"), report, "What time do the baths close?", "time")
    assert not fits(Candidate("7 a.m.", "07:00", None, "time"), report, "What time do the baths close?", "time")


def test_an_older_reports_lone_value_does_not_lead(tmp_path: Path) -> None:
    # The August notice holds a time too; the model answering "none" for it must not leave April's as the answer.
    kb = _kb(tmp_path, (NOTICE_APRIL.replace("close at 8 p.m.", "open at 7 a.m. and close at 8 p.m."), "Harle Parish",
                        "2025-04-02"),
             (NOTICE_AUGUST.replace("until 9 p.m.", "until 9 p.m. or 10 p.m. on Fridays"), "Harle Parish", "2025-08-20"))
    kb.add_facts([Fact("The Harle baths season will end on 15 September", entity="Harle baths", attribute="season end",
                       value="15 September", source="Harle Parish")])
    answer, _ = ask(kb, "What time do the Harle baths open from 1 September?",
                    {"single": "The baths open from 1 September.", "sources": {"source_1": "7 a.m.", "source_2": "none"}})
    assert answer.answer == "The baths open from 1 September."
    kb.close()
