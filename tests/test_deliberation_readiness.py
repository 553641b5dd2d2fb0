"""Readiness evidence and the order check: what keeps a specialist's position tied to the data.

Python computes what a readiness metric's move against its week says (lower, usual, higher) and
narrows the positions on a physical option to those it allows; a position the model chooses from
all of them is asked for twice, listed both ways, and one that follows the listing order is none.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from moot.errors import MootError
from moot.models.base import ModelResponse
from moot.runtime import RunStore
from moot.teams.deliberation import DeliberationTeam
from moot.teams.deliberation.data import load_folder
from moot.teams.deliberation.evidence import READINESS_CHANGE, evidence_for, readiness, readiness_signal
from moot.teams.deliberation.models import Evidence
from moot.teams.deliberation.plan import (
    Option,
    TimeWindow,
    candidate_positions,
    describe,
    free_slots,
    lean_positions,
    readiness_positions,
)
from moot.teams.deliberation.roster import load_roster

from deliberation_support import NOW, Deliberators, ics, model_for

T7 = datetime(2026, 11, 25, 7, 0, tzinfo=timezone.utc)
HOUR = TimeWindow(start=T7, end=T7 + timedelta(hours=1))

CALENDAR = ics(("20261125T070000Z", "20261125T080000Z", "Hill repeats with the club"),
               ("20261125T100000Z", "20261125T113000Z", "Quarterly review"))
REQUEST = "Tomorrow at 7am, should I do the hill repeats or go over the quarterly review slides?"
READ = [("hill repeats", "Hill", ""), ("go over the quarterly review slides", "", "Wed 07:00")]


def folder(tmp_path: Path, recovery: list[int], resting: list[int]) -> Path:
    """A calendar and a wearable export whose last day is the request's (24 November)."""
    root = tmp_path / "data"
    root.mkdir()
    (root / "cal.ics").write_text(CALENDAR)
    rows = [f"2026-11-{16 + k},{r},{h}" for k, (r, h) in enumerate(zip(recovery, resting))]
    (root / "watch.csv").write_text("date,Recovery score %,Resting heart rate (bpm)\n" + "\n".join(rows) + "\n")
    return root


LOW = ([62, 60, 63, 61, 59, 62, 50, 41, 38], [52, 53, 52, 51, 53, 52, 55, 58, 61])
HIGH = ([55, 57, 54, 56, 55, 57, 60, 68, 79], [58, 57, 58, 59, 57, 58, 55, 53, 51])
USUAL = ([60, 62, 61, 59, 60, 61, 62, 60, 61], [54, 53, 54, 55, 54, 53, 54, 54, 54])


def test_a_metric_moved_a_tenth_of_its_week_is_a_sign_and_the_roster_says_which_way_is_ready() -> None:
    assert READINESS_CHANGE == 0.10
    assert readiness(-0.36, 1) == "lower" and readiness(0.25, 1) == "higher"
    assert readiness(0.05, 1) == readiness(-0.09, 1) == "usual"
    # a resting heart rate 12 % above its week: less ready (the roster writes it "-resting")
    assert readiness(0.12, -1) == "lower" and readiness(-0.12, -1) == "higher"
    assert readiness(-0.5, None) is None and readiness(None, 1) is None


def test_readiness_is_computed_from_the_specialists_own_signs(tmp_path: Path) -> None:
    data = load_folder(folder(tmp_path, *LOW))
    now = datetime(2026, 11, 24, 20, 0, tzinfo=timezone.utc)
    found = {e.label: e for e in evidence_for(data, ["metrics:recovery", "metrics:resting"], now,
                                              readiness_signs=("recovery", "-resting")) if e.kind == "metric"}
    recovery, resting = found["recovery score"], found["resting heart rate"]
    assert recovery.text == "recovery score 38 % today against a weekly average of 57 %"
    assert recovery.readiness == "lower" and recovery.change == pytest.approx((38 - 396 / 7) / (396 / 7))
    assert resting.readiness == "lower" and resting.change is not None and resting.change > 0  # higher pulse, less ready
    # without readiness signs a metric is evidence, but no sign
    plain = evidence_for(data, ["metrics:recovery"], now)
    assert all(e.readiness is None for e in plain)


def sign(way: str | None, change: float, eid: str = "E1") -> Evidence:
    return Evidence(evidence_id=eid, kind="metric", text=f"metric {eid}", source="watch.csv", change=change, readiness=way)  # type: ignore[arg-type]


def test_signs_that_agree_are_a_signal_and_signs_that_disagree_leave_it_to_the_model() -> None:
    low = readiness_signal([sign("lower", -0.36, "E1"), sign("usual", -0.04, "E2"), sign("lower", -0.2, "E3")])
    assert low is not None and low.direction == "lower" and low.evidence_ids == ["E1", "E3"]
    stance = low.stance()
    # confidence 50 % plus the largest move in points, impact high from a 25 % move
    assert (stance.confidence, stance.impact, stance.evidence) == (86, "high", ["E1", "E3"])
    usual = readiness_signal([sign("usual", 0.03), sign("usual", -0.05, "E2")])
    assert usual is not None and usual.direction == "usual" and usual.stance().confidence == 50
    assert readiness_signal([sign("lower", -0.3), sign("higher", 0.2, "E2")]) is None
    assert readiness_signal([Evidence(evidence_id="E1", kind="note", text="a note", source="n.md")]) is None


def options(kind_a: str = "physical activity", kind_b: str = "other") -> dict[str, Option]:
    return {"O1": Option(option_id="O1", label="hill repeats", window=HOUR, kind=kind_a),
            "O2": Option(option_id="O2", label="review slides", window=HOUR, kind=kind_b)}


def test_readiness_narrows_the_positions_on_a_physical_option() -> None:
    opts = options()
    every = candidate_positions(opts, free_slots([HOUR], T7 - timedelta(hours=10)))
    said = lambda ps: [describe(p, opts) for p in ps]  # noqa: E731
    lower = said(readiness_positions("lower", opts, every) or [])
    assert lower and all(p.startswith(("skip 'hill", "move 'hill", "do 'review")) for p in lower)
    assert "do 'review slides' as planned (Wed 07:00–08:00)" in lower and "skip 'hill repeats'" in lower
    assert said(readiness_positions("higher", opts, every) or []) == ["do 'hill repeats' as planned (Wed 07:00–08:00)"]
    # at the usual level nothing speaks against either: the time is split, the physical option first
    assert said(readiness_positions("usual", opts, every) or []) == [
        "split the time: 'hill repeats' Wed 07:00–07:30, then 'review slides' Wed 07:30–08:00"]
    # no physical option: readiness says nothing of these options, the model weighs the evidence
    assert readiness_positions("lower", options("other", "other"), every) is None


def test_favouring_an_option_that_overlaps_no_other_is_skipping_the_others() -> None:
    later = TimeWindow(start=T7 + timedelta(hours=3), end=T7 + timedelta(hours=4))
    opts = {"O1": Option(option_id="O1", label="hill repeats", window=HOUR),
            "O2": Option(option_id="O2", label="review slides", window=later)}
    every = candidate_positions(opts, free_slots([HOUR, later], T7 - timedelta(hours=12)))
    said = [describe(p, opts) for p in lean_positions(opts, every)]
    # no split (they do not overlap): the compromise is the first option shortened
    assert said == ["skip 'review slides'", "skip 'hill repeats'", "shorten 'hill repeats' to Wed 07:00–07:30"]
    # one option: do it, skip it, or shorten it
    alone = {"O1": opts["O1"]}
    every = candidate_positions(alone, free_slots([HOUR], T7 - timedelta(hours=12)))
    assert [describe(p, alone) for p in lean_positions(alone, every)] == [
        "do 'hill repeats' as planned (Wed 07:00–08:00)", "skip 'hill repeats'", "shorten 'hill repeats' to Wed 07:00–07:30"]


def run(tmp_path: Path, script: Deliberators, data: Path, mode: str = "standard", **kw: object) -> object:
    team = DeliberationTeam(data, model=model_for(script), store=RunStore(tmp_path / "runs.db"), mode=mode, **kw)  # type: ignore[arg-type]
    return team.deliberate_sync(REQUEST, now=NOW)


def test_higher_readiness_settles_the_health_positions_without_a_call(tmp_path: Path) -> None:
    script = Deliberators(reading=READ, positions={"calendar": ("do", "hill", "medium", 60)}, physical="hill")
    result = run(tmp_path, script, folder(tmp_path, *HIGH))
    asked = {agent for kind, agent in script.calls if kind == "SpecialistPosition"}
    assert "recovery" not in asked
    mine = next(i for i in result.insights if "recovery" in i.supporters)  # type: ignore[attr-defined]
    assert mine.recommendation == "'do the hill repeats' as planned (Wed 07:00–08:00)"
    assert any(e.startswith("recovery score 79 % today against a weekly average of") for e in mine.evidence)
    assert result.answer.splitlines()[0].startswith("'do the hill repeats' as planned")  # type: ignore[attr-defined]


def test_lower_readiness_lets_the_model_choose_only_among_positions_that_spare_the_body(tmp_path: Path) -> None:
    script = Deliberators(reading=READ, positions={"recovery": ("do", "", "high", 80), "calendar": ("do", "hill", "medium", 60)},
                          physical="hill")
    result = run(tmp_path, script, folder(tmp_path, *LOW))
    [request] = [r for r in script.requests if r.agent == "recovery"]
    offered = request.output.json_schema["properties"]["position"]["enum"]  # type: ignore[union-attr]
    assert "'do the hill repeats' as planned (Wed 07:00–08:00)" not in offered
    mine = next(i for i in result.insights if "recovery" in i.supporters)  # type: ignore[attr-defined]
    assert mine.recommendation == "do 'go over the quarterly review slides' as planned (Wed 07:00–08:00)"


def test_a_choice_that_follows_the_listing_order_is_no_position(tmp_path: Path) -> None:
    # calendar answers "the first 'do' listed", which is a different option when the list is reversed;
    # deep_content answers the same position whichever way the list runs
    script = Deliberators(reading=READ, positions={"calendar": ("do", "", "high", 90), "deep_content": ("do", "slides", "high", 70)},
                          physical="hill", odds=True)
    data = folder(tmp_path, *USUAL)
    (data / "notes.md").write_text("# Week\n\n## 2026-11-24\n\nThe slides still need the budget table.\n")
    # two more calls than standard's ten: the plain questions take four, and both work specialists are to be asked twice
    result = run(tmp_path, script, data, order_check=True, max_calls=12)
    # which option is a sport was asked plainly, one question per option, and read from the odds
    asked = [r.messages[-1].content for r in script.requests if r.agent == "physical_odds"]
    assert asked == ['Does "do the hill repeats" mean doing a sport or physical exercise? Answer yes or no.',
                     'Does "go over the quarterly review slides" mean doing a sport or physical exercise? Answer yes or no.']
    # and whether it is resting, which is taken off its lean to a sport
    assert sorted(r.messages[-1].content for r in script.requests if r.agent == "rest_odds") == [
        'Does "do the hill repeats" mean resting or sleeping? Answer yes or no.',
        'Does "go over the quarterly review slides" mean resting or sleeping? Answer yes or no.']
    assert not {"physical", "not_physical"} & {r.agent for r in script.requests}
    assert [o.label for o in result.reading.options if o.kind == "physical activity"] == ["do the hill repeats"]  # type: ignore[attr-defined]
    assert ("asked of each option whether it means doing a sport or physical exercise, and whether it means resting: "
            "the model leaned to sport for "
            "'do the hill repeats' clearly more than for the others, so it is taken for the physical activity") in result.notes  # type: ignore[attr-defined]
    # the odds themselves are the run's record, not the answer's (every number in an answer is a number of the data)
    [event] = [e for e in RunStore(tmp_path / "runs.db").events(result.run_id) if e.type == "deliberation.physical"]  # type: ignore[attr-defined]
    assert event.payload == {"leans": {"do the hill repeats": 2.5, "go over the quarterly review slides": 0.3},
                             "sport": {"do the hill repeats": 1.5, "go over the quarterly review slides": -0.7},
                             "rest": {"do the hill repeats": -1.0, "go over the quarterly review slides": -1.0},
                             "physical": "do the hill repeats"}
    shown = set(re.findall(r"\d+(?:\.\d+)?", result.answer))  # type: ignore[attr-defined]
    assert not shown & {"2.5", "1.5", "0.7", "0.3"}
    one_way, other_way = [r.output.json_schema["properties"]["position"]["enum"]  # type: ignore[union-attr]
                          for r in script.requests if r.agent == "calendar"]
    assert other_way == one_way[::-1]
    # with no evidence of its own to narrow them, a specialist chooses among one position per option and a compromise
    assert one_way == ["'do the hill repeats' as planned (Wed 07:00–08:00)",
                       "do 'go over the quarterly review slides' as planned (Wed 07:00–08:00)",
                       "split the time: 'do the hill repeats' Wed 07:00–07:30, then 'go over the quarterly review slides' Wed 07:30–08:00"]
    supporters = {s for i in result.insights for s in i.supporters}  # type: ignore[attr-defined]
    assert "calendar" not in supporters and "deep_content" in supporters
    assert any(n.startswith("calendar: no position (it took «'do the hill repeats' as planned") for n in result.notes)  # type: ignore[attr-defined]


def test_the_roster_declares_readiness_signs_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text('[[coordinator]]\ndomain = "body"\n[[coordinator.specialist]]\nname = "heart"\n'
                    'reads = ["metrics:hrv", "metrics:resting"]\nreadiness = ["HRV", "-resting"]\n')
    assert load_roster(good).specialist("heart").readiness == ("hrv", "-resting")
    bad = tmp_path / "bad.toml"
    bad.write_text('[[coordinator]]\ndomain = "body"\n[[coordinator.specialist]]\nname = "heart"\n'
                   'reads = ["metrics:hrv"]\nreadiness = "hrv"\n')
    with pytest.raises(MootError) as err:
        load_roster(bad)
    assert "readiness must be a list of metric names" in err.value.one_line() and "-resting" in err.value.one_line()


def test_an_option_named_both_as_the_sport_and_as_not_a_sport_is_none(tmp_path: Path) -> None:
    from moot.models.testing import FunctionModel

    inner = Deliberators(reading=READ, positions={"calendar": ("do", "hill", "medium", 60)})

    def same_answer(request):  # type: ignore[no-untyped-def]
        if request.agent in ("physical", "not_physical"):  # names the slides whichever question is asked
            return {"answer": next(a for a in request.output.json_schema["properties"]["answer"]["enum"] if "slides" in a)}
        return inner(request)

    team = DeliberationTeam(folder(tmp_path, *LOW), model=FunctionModel(same_answer), mode="standard", order_check=True)
    result = team.deliberate_sync(REQUEST, now=NOW)
    # a model that gives no odds is asked plainly once, then the listed way
    assert [a for _, a in inner.calls].count("physical_odds") == 1
    assert ("no option is taken for a physical activity (asked which one is, the model answered 'go over the quarterly "
            "review slides'; asked which one is not, 'go over the quarterly review slides')") in result.notes
    assert not any(o.kind == "physical activity" for o in result.reading.options)
    assert result.decision is not None or result.answer.startswith("No decision")
    # without a physical option the readiness specialists are not narrowed: recovery chose among every position
    offered = [r.output.json_schema["properties"]["position"]["enum"] for r in inner.requests if r.agent == "recovery"]
    assert offered and "'do the hill repeats' as planned (Wed 07:00–08:00)" in offered[0]


def test_when_no_specialist_takes_a_position_the_answer_says_there_is_no_decision_and_why(tmp_path: Path) -> None:
    # every specialist answers "the first 'do' listed": with the order check none of them keeps a position
    first_do = {n: ("do", "", "high", 80) for n in ("recovery", "sleep", "calendar", "deep_content", "cardio", "activity")}
    script = Deliberators(reading=READ, positions=first_do)
    result = run(tmp_path, script, folder(tmp_path, *USUAL), order_check=True)
    assert result.insights == [] and result.decision is None  # type: ignore[attr-defined]
    lines = result.answer.splitlines()  # type: ignore[attr-defined]
    assert lines[0].startswith("No decision: no specialist took a position the data supports")
    assert any("no position (it took «'do the hill repeats' as planned" in line for line in lines[1:])


def test_the_sport_is_the_option_the_model_leans_to_most_clearly_and_a_close_call_is_none() -> None:
    from moot.models import yes_margin
    from moot.teams.deliberation.plain import CLEAR_LEAN, physical_by_odds

    run_, slides = yes_margin({"yes": -0.6, "no": -0.8}), yes_margin({"yes": -0.9, "no": -0.5})
    assert physical_by_odds({"long run": run_, "slides": slides}) == "long run"  # +0.2 against -0.4
    assert physical_by_odds({"long run": -0.17, "go to bed early": -0.23}) is None  # 0.06 apart: too close to call
    assert physical_by_odds({"a": 0.1, "b": 0.1 - CLEAR_LEAN}) == "a"
    assert physical_by_odds({"keep working": 0.05}) is None and physical_by_odds({"swim": 0.4}) == "swim"  # alone: against even odds
    assert physical_by_odds({}) is None


def test_options_too_close_to_call_leave_no_physical_option_and_the_note_says_so(tmp_path: Path) -> None:
    class Even(Deliberators):
        async def __call__(self, request):  # type: ignore[no-untyped-def,override]
            if request.agent == "physical_odds":  # both options lean to yes alike
                self.calls.append(("plain", "physical_odds"))
                return ModelResponse(text="yes", top_logprobs={"yes": -0.5, "no": -0.9})
            return await super().__call__(request)

    script = Even(reading=READ, positions={"calendar": ("do", "hill", "medium", 60)}, odds=True)
    result = run(tmp_path, script, folder(tmp_path, *HIGH), order_check=True)
    assert not any(o.kind == "physical activity" for o in result.reading.options)  # type: ignore[attr-defined]
    assert any(n.endswith("too close to call, so no option is taken for one") for n in result.notes)  # type: ignore[attr-defined]
    # no physical option: readiness narrows nothing, so the recovery specialist was asked (listed both ways)
    assert [a for _, a in script.calls].count("recovery") == 2


def test_an_option_the_model_takes_for_rest_is_not_the_sport_though_it_leaned_to_sport() -> None:
    from moot.teams.deliberation.plain import physical_by_odds, physical_lean

    # asked alone whether each is a sport, the model leans a little more to yes for sleeping in
    sport = {"sleep in": 0.3, "go to the squash match": 0.1}
    assert physical_by_odds(sport) == "sleep in"
    # asked whether each is resting, it leans to yes for sleeping in and to no for the match
    rest = {"sleep in": 0.9, "go to the squash match": -1.2}
    assert physical_by_odds({k: physical_lean(sport[k], rest[k]) for k in sport}) == "go to the squash match"
