"""The design's arithmetic and rules as code: consensus score, confidence adjustment, the
low-consensus flag, ranking, conflicts from the positions' calendar claims, the compromise's
evidence check, the decision, and the modes' budgets."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from moot.errors import MootError
from moot.teams.deliberation.conflicts import find_conflicts
from moot.teams.deliberation.consensus import (
    DEBATE_CALLS,
    MODES,
    adjusted_confidence,
    apply_votes,
    consensus_score,
    is_low_consensus,
    mode,
    rank,
    reading_calls,
    specialist_slots,
)
from moot.teams.deliberation.debate import Side, build, check, stakes
from moot.teams.deliberation.decision import decide, polish_ok
from moot.teams.deliberation.models import AgentInsight, ConsensusVote
from moot.teams.deliberation.plan import Option, Position, TimeWindow, candidate_positions, clash, describe, free_slots

T0 = datetime(2026, 11, 24, 18, 0, tzinfo=timezone.utc)


def insight(iid: str, agent: str, conf: float = 70, impact: str = "medium", hours: tuple[float, float] | None = None) -> AgentInsight:
    window = None if hours is None else TimeWindow(start=T0 + timedelta(hours=hours[0]), end=T0 + timedelta(hours=hours[1]))
    return AgentInsight(insight_id=iid, agent=agent, domain="d", recommendation=f"do {iid}", confidence=conf,
                        impact=impact, time_window=window)  # type: ignore[arg-type]


def vote(iid: str, v: int, who: str = "x") -> ConsensusVote:
    return ConsensusVote(insight_id=iid, voting_agent=who, vote=v, timestamp="t")  # type: ignore[arg-type]


def test_the_designs_worked_example_85_with_votes_2_1_0_minus1_gives_90() -> None:
    score = consensus_score([2, 1, 0, -1])
    assert score == 0.5
    assert adjusted_confidence(85, score) == 90
    assert not is_low_consensus(score)


def test_adjustment_is_clamped_and_unchanged_without_votes() -> None:
    assert adjusted_confidence(95, 2.0) == 100
    assert adjusted_confidence(5, -2.0) == 0
    assert adjusted_confidence(70, None) == 70
    assert consensus_score([]) is None
    with pytest.raises(ValueError):
        consensus_score([3])


def test_low_consensus_flag_is_strictly_below_minus_half() -> None:
    assert is_low_consensus(consensus_score([-1, -1, 0]))  # -0.67
    assert not is_low_consensus(consensus_score([-1, 0]))  # exactly -0.5 is not below
    assert not is_low_consensus(None)


def test_votes_adjust_and_flag_each_insight_and_ranking_is_impact_times_adjusted_confidence() -> None:
    a, b, c = insight("a", "s1", 80, "medium"), insight("b", "s2", 60, "high"), insight("c", "s3", 90, "low")
    apply_votes([a, b, c], [vote("a", -2), vote("a", -1), vote("b", 2), vote("b", 1)])
    assert a.consensus_score == -1.5 and a.adjusted_confidence == 65 and a.low_consensus
    assert b.adjusted_confidence == 75 and not b.low_consensus
    assert c.adjusted_confidence == 90 and c.consensus_score is None
    # high 75 → 225; medium 65 → 130; low 90 → 90
    assert [i.insight_id for i in rank([a, b, c])] == ["b", "a", "c"]


def at(h0: float, h1: float) -> TimeWindow:
    return TimeWindow(start=T0 + timedelta(hours=h0), end=T0 + timedelta(hours=h1))


# tomorrow 06:30–07:30 both a run and a rehearsal (the two options for one morning)
OPTIONS = {"O1": Option(option_id="O1", label="interval run", window=at(12.5, 13.5), time_from="request"),
           "O2": Option(option_id="O2", label="rehearse the talk", window=at(12.5, 13.5), time_from="request")}


def taken(iid: str, position: Position, conf: float = 70, impact: str = "high", who: str = "") -> AgentInsight:
    return AgentInsight(insight_id=iid, agent=who or iid, supporters=[who or iid], domain="d", position=position,
                        recommendation=describe(position, OPTIONS), confidence=conf, impact=impact)  # type: ignore[arg-type]


def test_positions_are_proposed_from_the_options_and_the_free_time() -> None:
    free = free_slots([o.window for o in OPTIONS.values()], T0)
    offered = [describe(p, OPTIONS) for p in candidate_positions(OPTIONS, free)]
    assert "do 'interval run' as planned (Wed 06:30–07:30)" in offered and "skip 'rehearse the talk'" in offered
    assert "shorten 'interval run' to Wed 06:30–07:00" in offered
    assert "split the time: 'interval run' Wed 06:30–07:00, then 'rehearse the talk' Wed 07:00–07:30" in offered
    # a move lands in free waking time at the option's full length, nearest its planned time
    assert "move 'interval run' to Wed 07:30–08:30" in offered


def test_conflicts_are_claims_that_cannot_both_hold_and_agreement_is_no_conflict() -> None:
    run, rehearse = Position(kind="do", option="O1"), Position(kind="do", option="O2")
    skip_run, short_run = Position(kind="skip", option="O1"), Position(kind="shorten", option="O1", at=at(12.5, 13))
    claims = lambda p: p.claims(OPTIONS)  # noqa: E731
    assert clash(claims(run), claims(rehearse)) == ("resource_competition", ["O1", "O2"])
    assert clash(claims(run), claims(skip_run)) == ("contradiction", ["O1"])
    assert clash(claims(skip_run), claims(rehearse)) is None  # skipping the run leaves the time to the talk
    assert clash(claims(short_run), claims(Position(kind="move", option="O2", at=at(0, 1)))) is None
    insights = [taken("p1", run), taken("p2", rehearse, impact="medium"), taken("p3", skip_run, impact="low")]
    found = find_conflicts(insights, {i.insight_id: claims(i.position) for i in insights}, OPTIONS)
    assert [(c.id, c.type, c.severity, c.agent_a.insight_id, c.agent_b.insight_id) for c in found] == [
        ("c1", "resource_competition", "significant", "p1", "p2"), ("c2", "contradiction", "significant", "p1", "p3")]
    assert found[0].note == "'interval run' and 'rehearse the talk' want the same time (Wed 06:30–07:30)"


def test_python_refuses_a_compromise_that_drops_a_sides_strongest_evidence() -> None:
    a, b = taken("p1", Position(kind="do", option="O1")), taken("p2", Position(kind="do", option="O2"))
    sa, sb = (Side(i, i.position.claims(OPTIONS), stakes(i.position)) for i in (a, b))  # type: ignore[union-attr]
    free = {w.label(): w for w in free_slots([o.window for o in OPTIONS.values()], T0)}
    # priority to A with nothing done about B: the talk is skipped, which drops B's evidence
    override = build({"compromise_type": "priority_override", "side": "A", "option": "interval run", "adjustment": "skip"},
                     sa, sb, OPTIONS, free, {})
    checks = check(override, sa, sb, OPTIONS, {})
    assert [c.kept for c in checks] == [True, False] and "'rehearse the talk' is skipped" in checks[1].how
    # moving the talk to free time keeps both
    moved = build({"compromise_type": "priority_override", "side": "A", "option": "interval run", "adjustment": "move"},
                  sa, sb, OPTIONS, free, {})
    assert all(c.kept for c in check(moved, sa, sb, OPTIONS, {}))
    # (to the free time nearest its planned hour)
    assert moved.text == "priority to 'do 'interval run' as planned (Wed 06:30–07:30)': do 'interval run' as planned " \
        "(Wed 06:30–07:30); do 'rehearse the talk', moved to Wed 07:30–08:30"
    # a time split shares the contested hour; a conditional without a metric to condition on is refused
    split = build({"compromise_type": "time_split", "side": "A", "option": "interval run"}, sa, sb, OPTIONS, free, {})
    assert split.claims == {"O1": at(12.5, 13), "O2": at(13, 13.5)} and all(c.kept for c in check(split, sa, sb, OPTIONS, {}))
    assert "neither side cites one" in build({"compromise_type": "conditional", "side": "B", "option": "interval run"},
                                             sa, sb, OPTIONS, free, {}).error


def test_the_decision_weighs_coalitions_of_compatible_positions() -> None:
    run = taken("p1", Position(kind="do", option="O1"), conf=80, who="recovery")
    rehearse = taken("p2", Position(kind="do", option="O2"), conf=60, who="calendar")
    skip_run = taken("p3", Position(kind="skip", option="O1"), conf=60, who="stress")
    insights = rank([run, rehearse, skip_run])
    claims = {i.insight_id: i.position.claims(OPTIONS) for i in insights}  # type: ignore[union-attr]
    conflicts = find_conflicts(insights, claims, OPTIONS)
    d = decide(insights, claims, OPTIONS, conflicts, [], {})
    # 240 for the run alone against 180 + 180 for rehearsing and skipping the run, which can both hold
    assert d.insight_id == "p2" and d.also == ["p3"] and d.supporters == ["calendar", "stress"]
    assert [(i.label, i.state) for i in d.plan] == [("interval run", "skipped"), ("rehearse the talk", "as planned")]
    assert set(d.open_conflicts) == {"c1", "c2"}
    assert any("recovery's position higher" in w for w in d.would_change)


def test_a_polished_first_line_must_keep_every_number_time_and_name() -> None:
    line = "Do 'rehearse the talk' as planned (Wed 06:30–07:30); skip 'interval run'."
    labels = ["rehearse the talk", "interval run"]
    assert polish_ok(line, "Skip 'interval run' and rehearse the talk as planned, Wed 06:30–07:30.", labels) == ""
    assert polish_ok(line, "Rehearse the talk at 07:00 and skip the interval run.", labels) == "its times differ from the sentence's"
    assert polish_ok(line, "Do 'rehearse the talk' as planned (Wed 06:30–07:30).", labels) == "it leaves out 'interval run'"


def test_modes_are_the_designs_table() -> None:
    q, s, d = MODES["quick"], MODES["standard"], MODES["deep"]
    assert (q.max_coordinators, q.debate, q.consensus, q.max_calls, q.deadline_s) == (1, False, "none", 4, 15)
    assert (s.max_coordinators, s.debate, s.consensus, s.max_calls, s.deadline_s) == (2, True, "light", 10, 30)
    assert (d.max_coordinators, d.debate, d.consensus, d.max_calls, d.deadline_s) == (3, True, "full", 20, 60)
    with pytest.raises(MootError) as err:
        mode("turbo")
    assert "--budget quick, standard or deep" in err.value.one_line()


def test_specialists_leave_room_for_the_debate() -> None:
    # standard: 10 calls - 1 reading - 3 for one debate leaves 6; at most 2 specialists per coordinator
    assert specialist_slots(MODES["standard"], [3, 3], reader_calls=1) == [2, 2]
    assert sum(specialist_slots(MODES["standard"], [3, 3], reader_calls=1)) + 1 + DEBATE_CALLS <= MODES["standard"].max_calls
    # quick: 4 calls = the reading and 3 specialists of its one coordinator
    assert specialist_slots(MODES["quick"], [6], reader_calls=1) == [3]
    assert specialist_slots(MODES["deep"], [6, 3, 3], reader_calls=1) == [3, 3, 3]
    # with readiness evidence the physical option is asked for twice: quick keeps one specialist
    assert specialist_slots(MODES["quick"], [6]) == [1] and specialist_slots(MODES["standard"], [3, 3]) == [2, 2]
    # asked plainly, two questions per option where the mode leaves a call after them, else the sport question only
    assert reading_calls(MODES["standard"], readiness=True, order_check=True) == 5
    assert reading_calls(MODES["quick"], readiness=True, order_check=True) == 3
    assert reading_calls(MODES["standard"], readiness=True, order_check=False) == 2
    assert reading_calls(MODES["deep"], readiness=False, order_check=True) == 1
    assert specialist_slots(MODES["standard"], [3, 3], reading_calls(MODES["standard"], True, True)) == [1, 1]
    # a tight override trims the biggest first but keeps one per coordinator
    assert specialist_slots(MODES["standard"].with_limits(max_calls=6), [3, 3]) == [1, 1]
