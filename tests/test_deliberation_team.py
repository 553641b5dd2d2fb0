"""The deliberation team end to end with a scripted model over the bundled example folders and a
two-option morning: the options read from the request, typed positions merged when identical, real
conflicts, the four-round debate ending in a typed compromise or an open conflict, votes, the modes'
budgets, and the answer Python renders from the decision."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from moot.runtime import EventBus, RunStore
from moot.teams.deliberation import DeliberationTeam
from deliberation_support import NOW, RECOVERY_DAY, REQUEST, SLEEP_VS_DEADLINE, Deliberators, enum, model_for


def team(tmp_path: Path, script: Deliberators, folder: Path = SLEEP_VS_DEADLINE, **kw: object) -> DeliberationTeam:
    return DeliberationTeam(folder, model=model_for(script), store=RunStore(tmp_path / "runs.db"), **kw)  # type: ignore[arg-type]


def test_standard_mode_debates_the_contradiction_to_an_agreed_time_split_and_answers_with_it(tmp_path: Path) -> None:
    script = Deliberators()
    result = team(tmp_path, script, mode="standard").deliberate_sync(REQUEST, now=NOW)
    # the request names one option, which the calendar holds: its time is the event's
    [option] = result.reading.options
    assert (option.label, option.event, option.time_from) == ("keep working tonight", "Finish Q4 report (4 h left)", "calendar")
    assert [c.domain for c in result.coordinators if c.activated] == ["work", "health"]
    # identical positions are one insight with both supporters: no duplicate recommendation
    recommendations = [i.recommendation for i in result.insights if i.position is not None]
    assert len(recommendations) == len(set(recommendations)) == 2
    shorten = next(i for i in result.insights if i.action == "shorten")
    assert shorten.supporters == ["recovery", "sleep"] and shorten.recommendation == \
        "shorten 'keep working tonight' to Tue 20:30–22:30"
    [conflict] = result.conflicts
    assert conflict.type == "contradiction" and conflict.detected_by == "python" and conflict.severity == "blocking"
    [debate] = result.debates
    assert [r.round_type for r in debate.rounds] == ["position", "evidence", "compromise", "validation"]
    res = debate.resolution
    assert debate.status == "resolved" and res.accepted and res.compromise_type == "time_split"
    assert all(c.kept for c in res.checks) and [i.state for i in res.plan] == ["shortened"]
    # the evidence round is computed by Python from the data
    assert "recovery score 41 % today against a weekly average of 64 %" in debate.rounds[1].agent_b_response
    # the answer: what to do, why (computed evidence), the calendar, the confidence, what would change it
    lines = result.answer.splitlines()
    assert lines[0] == "Do 'keep working tonight', shortened to Tue 20:30–22:30."
    assert lines[1].startswith("Why: ") and "recovery score 41 % today against a weekly average of 64 % (recovery)" in lines[1]
    assert lines[2] == "Calendar: 'Finish Q4 report (4 h left)' Tue 20:30–Wed 00:30 → Tue 20:30–22:30"
    assert lines[3].startswith("Confidence: ") and "+2, +2" in lines[3]
    assert "recovery score were back at or above its weekly average of 64 %" in lines[4]
    assert result.decision is not None and result.decision.compromise_type == "time_split"
    # the reader, which option is a sport (recovery and sleep have readiness evidence; none is), 4
    # specialists, the moderator and the two sides' votes
    assert result.usage.requests == 9
    record = RunStore(tmp_path / "runs.db").get_run(result.run_id)
    assert record.status == "completed"
    assert {"read", "work.calendar", "health.sleep", "conflicts", "c1.r3", "c1.r4.a", "c1.r4.b", "decision"} <= set(record.results)


MORNING_ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:1
DTSTART:20261125T070000Z
DTEND:20261125T080000Z
SUMMARY:Track session 6x800m
END:VEVENT
BEGIN:VEVENT
UID:2
DTSTART:20261125T093000Z
DTEND:20261125T113000Z
SUMMARY:Client workshop
END:VEVENT
END:VCALENDAR
"""
MORNING = "Tomorrow at 7am, should I do the track session or rehearse the workshop demo?"


def morning(tmp_path: Path) -> Path:
    folder = tmp_path / "morning"
    folder.mkdir()
    (folder / "cal.ics").write_text(MORNING_ICS)
    days = [f"2026-11-{d},{r},{s}" for d, r, s in zip(range(16, 25), (60, 58, 61, 57, 59, 55, 48, 41, 34),
                                                     (6.8, 6.5, 6.9, 6.2, 6.4, 6.1, 5.9, 5.6, 5.2))]
    (folder / "wearable.csv").write_text("date,Recovery score %,Sleep (h)\n" + "\n".join(days) + "\n")
    return folder


TWO_OPTIONS = [("track session", "Track", ""), ("rehearse the workshop demo", "", "Wed 07:00")]


def test_two_options_for_one_morning_are_pieces_of_the_request(tmp_path: Path) -> None:
    positions = {"recovery": ("skip", "track", "high", 80), "sleep": ("skip", "track", "medium", 70),
                 "calendar": ("do", "track", "high", 70)}
    script = Deliberators(reading=TWO_OPTIONS, positions=positions, compromise={"compromise_type": "time_split", "option": "track"})
    result = team(tmp_path, script, morning(tmp_path), mode="standard").deliberate_sync(MORNING, now=NOW)
    reading = result.reading
    assert [(o.label, o.time_from, o.window.label()) for o in reading.options] == [
        ("do the track session", "calendar", "Wed 07:00–08:00"), ("rehearse the workshop demo", "request", "Wed 07:00–08:00")]
    # the reader chose among the request's pieces: the time alone ("Tomorrow at 7am") was not offered
    asked = next(r for r in script.requests if r.output.name == "OptionsInRequest")
    assert enum(asked.output.json_schema, "RequestOption", "label") == ["do the track session", "rehearse the workshop demo"]
    # "skip the run" (recovery and sleep together) and "do the run" (calendar) contradict each other
    [conflict] = result.conflicts
    assert conflict.type == "contradiction" and conflict.agent_a.supporters == ["recovery", "sleep"]
    assert conflict.agent_b.supporters == ["calendar"]
    # the time split shares the contested hour with the other option, which keeps what both sides stand for
    [debate] = result.debates
    assert debate.status == "resolved" and debate.resolution.compromise_type == "time_split"
    assert [(i.label, i.state, i.at.label() if i.at else "") for i in debate.resolution.plan] == [
        ("do the track session", "shortened", "Wed 07:00–07:30"), ("rehearse the workshop demo", "shortened", "Wed 07:30–08:00")]
    lines = result.answer.splitlines()
    assert lines[0] == "'do the track session', shortened to Wed 07:00–07:30; do 'rehearse the workshop demo', shortened to Wed 07:30–08:00."
    assert lines[2] == "Calendar: 'Track session 6x800m' Wed 07:00–08:00 → Wed 07:00–07:30; add 'rehearse the workshop demo' Wed 07:30–08:00"
    assert "recovery score 34 % today against a weekly average of 54 % (recovery)" in lines[1]


def test_a_compromise_that_drops_a_sides_evidence_is_refused_by_python_and_the_conflict_stays_open(tmp_path: Path) -> None:
    positions = {"recovery": ("skip", "track", "high", 80), "calendar": ("do", "track", "high", 70)}
    # priority to the run, and the only adjustment of the other option is to skip it: the run happens, so the
    # side that wanted it skipped loses what its evidence stands for
    script = Deliberators(reading=TWO_OPTIONS[:2], positions=positions,
                          compromise={"compromise_type": "priority_override", "side": "B", "option": "track"})
    result = team(tmp_path, script, morning(tmp_path), mode="standard").deliberate_sync(MORNING, now=NOW)
    [debate] = result.debates
    assert debate.status == "unresolved" and not debate.resolution.accepted
    assert debate.reason.startswith("the compromise drops recovery's strongest evidence")
    assert [r.round_type for r in debate.rounds] == ["position", "evidence", "compromise"]  # never put to a vote
    assert not any(k == "CompromiseVote" for k, _ in script.calls)
    assert "conflict c1 were settled the other way (still open: the compromise drops" in result.answer


def test_a_rejected_compromise_leaves_the_conflict_open_and_says_so(tmp_path: Path) -> None:
    result = team(tmp_path, Deliberators(validate={"recovery": -1}), mode="standard").deliberate_sync(REQUEST, now=NOW)
    [debate] = result.debates
    assert debate.status == "unresolved" and not debate.resolution.accepted
    assert debate.reason == "recovery rejected the compromise (vote -1)"
    assert debate.rounds[-1].agent_b_response.startswith("reject (-1)")
    assert not any(i.insight_id == "r-c1" for i in result.insights)
    assert {s for i in result.insights if i.unresolved for s in i.supporters} == {"calendar", "deep_content", "recovery", "sleep"}
    assert "still open: recovery rejected the compromise (vote -1)" in result.answer


def test_a_moderator_breaking_the_schema_leaves_the_conflict_unresolved_with_the_reason(tmp_path: Path) -> None:
    result = team(tmp_path, Deliberators(bad=("Compromise",)), mode="deep").deliberate_sync(REQUEST, now=NOW)
    debate = result.debates[0]
    assert debate.status == "unresolved" and "round 3 (compromise)" in debate.reason and "moderator" in debate.reason
    assert [r.round_type for r in debate.rounds] == ["position", "evidence"]
    assert result.status == "completed" and result.votes  # the run goes on: the votes still happened


def test_deep_mode_votes_adjust_confidence_flag_low_consensus_and_rank(tmp_path: Path) -> None:
    script = Deliberators(votes={"recovery": -2, "calendar": -2, "deep_content": -1, "stress": -2, "activity": -2,
                                 "cardio": -2, "context": -2, "sleep": -2}, validate={"deep_content": -2})
    result = team(tmp_path, script, mode="deep").deliberate_sync(REQUEST, now=NOW)
    assert len([c for c in result.coordinators if c.activated]) == 3
    assert result.usage.requests <= 20 and result.votes
    for i in result.insights:
        mine = [v.vote for v in result.votes if v.insight_id == i.insight_id]
        if mine:
            score = sum(mine) / len(mine)
            assert i.consensus_score == pytest.approx(score, abs=1e-4)
            assert i.adjusted_confidence == pytest.approx(max(0, min(100, i.confidence + 10 * score)), abs=0.01)
            assert i.low_consensus == (score < -0.5)
            if i.resolution_of is None:  # a compromise's votes are its two sides' round-4 votes
                assert not {v.voting_agent for v in result.votes if v.insight_id == i.insight_id} & set(i.supporters)
    assert any(i.low_consensus for i in result.insights)
    keys = [i.support for i in result.insights]
    assert keys == sorted(keys, reverse=True)


def test_quick_mode_is_one_coordinator_no_debate_and_at_most_four_calls(tmp_path: Path) -> None:
    script = Deliberators(positions={"calendar": ("do", "", "high", 70), "deep_content": ("skip", "", "medium", 60)})
    result = team(tmp_path, script, mode="quick").deliberate_sync(REQUEST, now=NOW)
    assert len([c for c in result.coordinators if c.activated]) == 1
    assert result.usage.requests <= 4 and result.debates == [] and result.votes == []
    assert {k for k, _ in script.calls} == {"OptionsInRequest", "SpecialistPosition"}
    assert result.conflicts and "quick mode does not debate, so they stay open" in result.answer
    assert result.answer.splitlines()[0] == "Do 'keep working tonight' as planned (Tue 20:30–Wed 00:30)."


def test_a_tight_budget_stops_with_partial_results_and_the_reason(tmp_path: Path) -> None:
    script = Deliberators(slow={"calendar": 30.0})
    result = team(tmp_path, script, mode="standard", deadline_s=1.0).deliberate_sync(REQUEST, now=NOW)
    assert result.status == "stopped" and "deadline" in result.stop_reason
    assert {s for i in result.insights for s in i.supporters} == {"deep_content", "recovery", "sleep"}
    assert RunStore(tmp_path / "runs.db").get_run(result.run_id).status == "stopped"
    # with calls for the reading and the specialists but not for a debate, the conflict is reported, not debated
    short = team(tmp_path, Deliberators(), mode="standard", max_calls=5).deliberate_sync(REQUEST, now=NOW)
    assert short.usage.requests <= 5 and short.debates == [] and short.conflicts
    assert "was not debated: a debate needs 3 calls" in short.answer


def test_specialists_of_all_coordinators_run_at_the_same_time(tmp_path: Path) -> None:
    script = Deliberators(barrier=asyncio.Barrier(4))
    result = team(tmp_path, script, mode="standard").deliberate_sync(REQUEST, now=NOW)
    assert {s for i in result.insights for s in i.supporters} == {"calendar", "deep_content", "recovery", "sleep"}


def test_a_unanimous_case_never_debates_and_votes_raise_confidence(tmp_path: Path) -> None:
    everyone = ("recovery", "sleep", "activity", "cardio", "calendar", "deep_content", "context")
    script = Deliberators(reading=[("take it easy today", "", "")], positions={n: ("skip", "", "high", 75) for n in everyone},
                          votes={n: 2 for n in everyone})
    result = team(tmp_path, script, RECOVERY_DAY, mode="deep").deliberate_sync("Should I take it easy today?",
                                                                                now="2026-11-16T08:00")
    assert result.conflicts == [] and result.debates == []
    assert not any(k in ("Compromise", "CompromiseVote") for k, _ in script.calls)
    [insight] = result.insights
    assert len(insight.supporters) >= 3
    assert result.answer.splitlines()[0] == "Skip 'take it easy today'."


def test_no_data_for_the_roster_means_no_model_call(tmp_path: Path) -> None:
    roster = tmp_path / "g.toml"
    roster.write_text('[[coordinator]]\ndomain = "metabolic"\n[[coordinator.specialist]]\nname = "glucose"\nreads = ["metrics:glucose"]\n')
    script = Deliberators()
    result = team(tmp_path, script, mode="deep", roster=roster).deliberate_sync("How is my glucose doing?", now=NOW)
    assert script.calls == [] and result.usage.requests == 0
    assert result.answer.startswith("No coordinator has data for this request") and "glucose" in result.answer
    assert "No model was asked" in result.answer


def test_events_name_every_phase(tmp_path: Path) -> None:
    bus = EventBus()
    seen: list[str] = []
    bus.subscribe(lambda e: seen.append(e.type.value))
    asyncio.run(team(tmp_path, Deliberators(), mode="standard").deliberate(REQUEST, now=NOW, bus=bus))
    for kind in ("deliberation.coordinator", "deliberation.options", "deliberation.insights", "deliberation.conflict_detected",
                 "deliberation.debate_round", "deliberation.resolution", "deliberation.decision"):
        assert kind in seen, kind
    assert seen.count("deliberation.debate_round") == 4


def test_a_deadline_inside_a_debate_says_so_instead_of_blaming_the_reply(tmp_path: Path) -> None:
    script = Deliberators(slow={"moderator": 30.0})
    result = team(tmp_path, script, mode="deep", deadline_s=1.5).deliberate_sync(REQUEST, now=NOW)
    assert result.status == "stopped" and "deadline" in result.stop_reason
    [debate] = result.debates
    assert debate.status == "unresolved" and "round 3 (compromise)" in debate.reason
    assert "the budget stopped moderator's reply" in debate.reason and "unusable" not in debate.reason


def test_the_first_line_may_be_reworded_only_when_it_keeps_its_facts(tmp_path: Path) -> None:
    good = "Work on 'keep working tonight' only from Tue 20:30–22:30, then stop."
    kept = team(tmp_path, Deliberators(polish=good), mode="standard", polish=True).deliberate_sync(REQUEST, now=NOW)
    assert kept.answer.splitlines()[0] == good and kept.decision is not None and kept.decision.polished
    bad = "Keep working tonight until 23:00."
    refused = team(tmp_path, Deliberators(polish=bad), mode="standard", polish=True).deliberate_sync(REQUEST, now=NOW)
    assert refused.answer.splitlines()[0] == "Do 'keep working tonight', shortened to Tue 20:30–22:30."
    assert "the reworded first line was not used: its times differ" in refused.answer


def test_the_moderator_can_have_its_own_model(tmp_path: Path) -> None:
    from moot.errors import MootError

    default, moderator = model_for(Deliberators()), model_for(Deliberators())
    result = DeliberationTeam(SLEEP_VS_DEADLINE, model=default, models={"moderator": moderator},
                              store=RunStore(tmp_path / "runs.db")).deliberate_sync(REQUEST, now=NOW)
    assert result.debates and {r.agent for r in moderator.requests} == {"moderator"}
    assert "moderator" not in {r.agent for r in default.requests}
    with pytest.raises(MootError, match="the deliberation team has no role 'chair'"):
        DeliberationTeam(SLEEP_VS_DEADLINE, model=default, models={"chair": moderator})


def test_an_option_the_reader_left_unlinked_is_the_calendars_event_at_its_time_when_they_share_a_word(tmp_path: Path) -> None:
    script = Deliberators(reading=[("interval session", "", "Wed 07:00"), ("prepare the client workshop", "", "Wed 07:00")],
                          positions={})
    result = team(tmp_path, script, morning(tmp_path), mode="quick").deliberate_sync(
        "Tomorrow at 7am, should I do my interval session or prepare the client workshop?", now=NOW)
    # "interval session" at 7:00 and "Track session 6x800m" 07:00–08:00; the workshop shares "client" but is at 09:30
    assert [(o.label, o.event) for o in result.reading.options] == [
        ("do my interval session", "Track session 6x800m"), ("prepare the client workshop", None)]
    assert "linked the option 'do my interval session' to the calendar's 'Track session 6x800m'" in result.reading.note
