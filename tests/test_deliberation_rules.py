"""The design's arithmetic and rules as code: consensus score, confidence adjustment, the
low-consensus flag, ranking, resource-competition conflicts from times, and the modes' budgets."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from moot.errors import MootError
from moot.teams.deliberation.conflicts import by_severity, resource_conflicts
from moot.teams.deliberation.consensus import (
    DEBATE_CALLS,
    MODES,
    adjusted_confidence,
    apply_votes,
    consensus_score,
    is_low_consensus,
    mode,
    rank,
    specialist_slots,
)
from moot.teams.deliberation.models import AgentInsight, ConsensusVote, TimeWindow

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


def test_resource_competition_needs_overlapping_times_and_different_agents() -> None:
    sleep = insight("s", "sleep", impact="high", hours=(4, 12.5))          # 22:00–06:30
    work = insight("w", "calendar", impact="high", hours=(2, 6))          # 20:00–00:00
    walk = insight("k", "activity", hours=(0, 1))                        # 18:00–19:00
    same = insight("s2", "sleep", hours=(5, 6))                          # same agent as "s"
    untimed = insight("u", "stress")
    found = resource_conflicts([sleep, work, walk, same, untimed])
    # sleep competes with the calendar twice (s and s2): one conflict per pair of agents, the most severe pair
    [first] = found
    assert {first.agent_a.insight_id, first.agent_b.insight_id} == {"s", "w"}
    assert first.type == "resource_competition" and first.severity == "blocking" and first.detected_by == "python"
    other = resource_conflicts([same, work])[0]
    assert other.severity == "significant"
    # at equal severity, a conflict across domains is debated before one inside a domain
    rest = insight("r", "recovery", impact="high", hours=(3, 5))
    inside, across = resource_conflicts([rest, sleep]), resource_conflicts([sleep, work])
    domains = {"recovery": "health", "sleep": "health", "calendar": "work"}
    assert by_severity(inside + across, domains) == across + inside
    # touching windows (one ends as the other starts) do not compete
    assert resource_conflicts([insight("a", "x", hours=(0, 2)), insight("b", "y", hours=(2, 3))]) == []


def test_modes_are_the_designs_table() -> None:
    q, s, d = MODES["quick"], MODES["standard"], MODES["deep"]
    assert (q.max_coordinators, q.debate, q.consensus, q.max_calls, q.deadline_s) == (1, False, "none", 4, 15)
    assert (s.max_coordinators, s.debate, s.consensus, s.max_calls, s.deadline_s) == (2, True, "light", 10, 30)
    assert (d.max_coordinators, d.debate, d.consensus, d.max_calls, d.deadline_s) == (3, True, "full", 20, 60)
    with pytest.raises(MootError) as err:
        mode("turbo")
    assert "--mode quick, standard or deep" in err.value.one_line()


def test_specialists_leave_room_for_the_debate() -> None:
    # standard: 10 calls - 1 detection - 5 debate = 4 specialist calls over 2 coordinators
    assert specialist_slots(MODES["standard"], [3, 3]) == [2, 2]
    assert sum(specialist_slots(MODES["standard"], [3, 3])) + 1 + DEBATE_CALLS <= MODES["standard"].max_calls
    assert specialist_slots(MODES["quick"], [6]) == [4]
    assert specialist_slots(MODES["deep"], [6, 3, 3]) == [3, 3, 3]
    # a tight override trims the biggest first but keeps one per coordinator
    assert specialist_slots(MODES["standard"].with_limits(max_calls=8), [3, 3]) == [1, 1]
