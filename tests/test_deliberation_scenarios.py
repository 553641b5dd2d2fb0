"""The seeded decision scenarios: their data shows what their gold decision says, a team's plan is
graded by what it does with the training session, numbers are checked against the data, and the
one-call baseline and self-consistency answer under a schema."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import pytest

from moot.eval.deliberation_scenarios import allowed_numbers, grade_plan, make_scenarios, one_call, summarise, ungrounded
from moot.models.testing import FunctionModel
from moot.teams.deliberation import DeliberationTeam
from deliberation_support import Deliberators, ics, model_for


def test_thirty_scenarios_whose_data_shows_their_gold_decision(tmp_path: Path) -> None:
    scenarios = make_scenarios(30, tmp_path, seed=1)
    assert [s.gold for s in scenarios].count("both") == 6 and len({s.id for s in scenarios}) == 30
    for s in scenarios:
        rows = list(csv.DictReader((s.folder / "wearable.csv").open()))
        rec = [float(r["Recovery score %"]) for r in rows]
        week = sum(rec[:-1][-7:]) / 7
        if s.gold == "A":
            assert rec[-1] > week + 5, s.id
        elif s.gold == "B":
            assert rec[-1] < week - 10 and rec[-1] < rec[-2], s.id
        else:
            assert abs(rec[-1] - week) < 6, s.id
        assert s.train in s.request and s.work in s.request
    assert make_scenarios(3, tmp_path / "again", seed=1)[2].request == scenarios[2].request  # seeded


def test_the_team_on_a_scenario_is_graded_by_its_plan_and_its_numbers_are_grounded(tmp_path: Path) -> None:
    [scenario] = [s for s in make_scenarios(2, tmp_path, seed=1) if s.gold == "B"]
    reading = [(scenario.train, scenario.train_event.split()[0], ""), (scenario.work, "", "")]
    positions = {"recovery": ("skip", scenario.train.split()[0], "high", 80), "sleep": ("skip", scenario.train.split()[0], "high", 75),
                 "calendar": ("do", scenario.train.split()[0], "medium", 60)}
    script = Deliberators(reading=reading, positions=positions,
                          compromise={"compromise_type": "time_split", "option": scenario.train.split()[0]})
    result = DeliberationTeam(scenario.folder, model=model_for(script),
                              mode="standard").deliberate_sync(scenario.request, now=scenario.now)
    assert result.decision is not None and grade_plan(scenario, result.decision.plan) in ("B", "both")
    allowed = allowed_numbers(scenario)
    assert ungrounded(result.answer, allowed) == []
    assert ungrounded("recovery 12 % today, down from 97 %", allowed) == ["97 %"]


def test_one_call_and_self_consistency_choose_under_a_schema_and_take_the_majority(tmp_path: Path) -> None:
    [scenario] = make_scenarios(1, tmp_path, seed=2)
    picks = iter(["split the time between both", f"do the {scenario.train}", "split the time between both"])

    def answer(request) -> dict[str, str]:  # type: ignore[no-untyped-def]
        assert scenario.request in str(request.messages[-1].content)  # every file and the request are in the prompt
        return {"decision": next(picks), "answer": "Recovery is 99 % so split it."}

    sc = asyncio.run(one_call(FunctionModel(answer), scenario, samples=3))
    assert sc.decision == "both" and sc.calls == 3 and sc.samples == ["both", "A", "both"]
    assert ungrounded(sc.answer, allowed_numbers(scenario)) == ["99 %"]
    rows = [{"system": "x", "gold": "A", "correct": True, "ungrounded": [], "calls": 8, "seconds": 1.0},
            {"system": "x", "gold": "both", "correct": False, "ungrounded": ["99 %"], "calls": 6, "seconds": 3.0}]
    assert summarise(rows)["x"] == {"scenarios": 2, "accuracy": 0.5, "grounded": 0.5, "calls": 7, "seconds": 2.0,
                                    "by_gold": {"A": "1/1", "both": "0/1"}}


SUITE_ICS = ics(("20270112T183000", "20270112T193000", "Hockey practice"))


def write_suite(root: Path, gold: str = "B", **change: str) -> Path:
    import json

    (root / "s01").mkdir(parents=True)
    (root / "s01" / "games.ics").write_text(SUITE_ICS)
    (root / "s01" / "band.csv").write_text("day,HRV (ms),Resting heart rate (bpm),note\n"
                                           + "".join(f"2027-01-{d:02d},{h},{r},ok\n" for d, h, r in
                                                     zip(range(4, 12), (64, 66, 63, 65, 64, 66, 52, 44), (50, 51, 50, 49, 50, 51, 56, 59))))
    item = {"id": "s01", "folder": "s01", "request": "Tomorrow at 6:30pm, hockey practice or the quarterly invoices?",
            "now": "2027-01-11T21:00", "option_a": "hockey practice", "option_b": "quarterly invoices", "gold": gold, **change}
    (root / "scenarios.json").write_text(json.dumps([item]))
    return root


def test_a_suite_written_elsewhere_is_loaded_graded_and_checked_for_numbers(tmp_path: Path) -> None:
    from moot.eval.deliberation_scenarios import load_suite

    [sc] = load_suite(write_suite(tmp_path / "suite"))
    assert (sc.id, sc.gold, sc.train, sc.work) == ("s01", "B", "hockey practice", "quarterly invoices")
    allowed = allowed_numbers(sc)
    # every numeric column of every CSV, and its 7-day means (the text column is left out)
    assert {44.0, 59.0, 52.0} <= allowed and round((66 + 63 + 65 + 64 + 66 + 52 + 44) / 7, 1) in allowed
    assert ungrounded("HRV 44 ms against 71 ms", allowed) == ["71 ms"]
    script = Deliberators(reading=[("hockey practice", "Hockey", ""), ("quarterly invoices", "", "")], physical="hockey",
                          positions={"calendar": ("do", "hockey", "medium", 60), "recovery": ("do", "invoices", "high", 80)},
                          compromise={"compromise_type": "priority_override", "side": "A", "option": "hockey"})
    result = DeliberationTeam(sc.folder, model=model_for(script), mode="standard").deliberate_sync(sc.request, now=sc.now)
    # HRV 44 against its week and a resting pulse above its week: readiness is lower, the practice is not kept as planned
    assert result.decision is not None and grade_plan(sc, result.decision.plan) == "B"


@pytest.mark.parametrize(("change", "says"), [({"gold": "maybe"}, "gold 'maybe' is not A, B or both"),
                                              ({"option_b": ""}, "lacks option_b"),
                                              ({"folder": "s09"}, "its folder does not exist")])
def test_a_bad_suite_is_one_line_naming_the_fix(tmp_path: Path, change: dict[str, str], says: str) -> None:
    from moot.errors import MootError
    from moot.eval.deliberation_scenarios import load_suite

    with pytest.raises(MootError) as err:
        load_suite(write_suite(tmp_path / "suite", **change))
    assert says in err.value.one_line() and "option_a" in err.value.one_line()


def test_a_csv_whose_first_column_is_a_metric_is_read_for_grounding(tmp_path: Path) -> None:
    from moot.eval.deliberation_scenarios import load_suite

    root = write_suite(tmp_path / "suite")
    # steps first, the date second: the steps and their 7-day means are numbers of the data
    (root / "s01" / "activity.csv").write_text("steps,date\n" + "".join(f"{v},2027-01-{d:02d}\n" for d, v in
                                                                       zip(range(4, 12), (7988, 7971, 8120, 8300, 8410, 8260, 8764, 9000))))
    [sc] = load_suite(root)
    allowed = allowed_numbers(sc)
    assert ungrounded("steps 9000 today against a weekly average of 8259", allowed) == []
    assert ungrounded("steps 9100 today", allowed) == ["9100 today"]
