"""The deliberation team end to end with a scripted model over the bundled example folders:
the modes' budgets, conflict detection, the four-round debate, rejection and bad replies,
consensus voting, the unanimous case, no-data requests and the run record."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from moot.runtime import EventBus, RunStore
from moot.teams.deliberation import DeliberationTeam
from deliberation_support import NOW, RECOVERY_DAY, REQUEST, SLEEP_VS_DEADLINE, Deliberators, model_for


def team(tmp_path: Path, script: Deliberators, folder: Path = SLEEP_VS_DEADLINE, **kw: object) -> DeliberationTeam:
    return DeliberationTeam(folder, model=model_for(script), store=RunStore(tmp_path / "runs.db"), **kw)  # type: ignore[arg-type]


def test_standard_mode_debates_the_sleep_vs_deadline_conflict_to_an_agreed_compromise(tmp_path: Path) -> None:
    script = Deliberators()
    result = team(tmp_path, script, mode="standard").deliberate_sync(REQUEST, now=NOW)
    active = [c for c in result.coordinators if c.activated]
    assert [c.domain for c in active] == ["work", "health"]
    assert next(c for c in result.coordinators if c.domain == "lifestyle").reason.startswith("not needed in this mode")
    # sleep (22:00-07:00) and the calendar's report block (20:30-00:30) compete for tonight: found in Python
    [conflict] = result.conflicts
    assert conflict.type == "resource_competition" and conflict.detected_by == "python" and conflict.severity == "blocking"
    assert {conflict.agent_a.name, conflict.agent_b.name} == {"calendar", "sleep"}
    [debate] = result.debates
    assert [r.round_type for r in debate.rounds] == ["position", "evidence", "compromise", "validation"]
    assert debate.status == "resolved" and debate.resolution.accepted and debate.resolution.compromise_type == "time_split"
    # the compromise is an insight of its own, carrying evidence of both sides; the pair points to it
    merged = next(i for i in result.insights if i.insight_id == "r-c1")
    assert merged.agent == "moderator" and merged.resolution_of == "c1" and len(merged.evidence) == 2
    assert {i.agent for i in result.insights if i.resolved_by == "r-c1"} == {"calendar", "sleep"}
    # 4 specialists + 1 judge + 5 debate calls = the mode's 10; nothing left for votes, and the answer says so
    assert result.usage.requests == 10 and result.votes == []
    assert "no votes" in result.answer or "budget" in result.answer
    record = RunStore(tmp_path / "runs.db").get_run(result.run_id)
    assert record.status == "completed"
    assert {"work.calendar", "health.sleep", "conflicts", "c1.r2.a", "c1.r3", "c1.r4.b"} <= set(record.results)


def two_roster(tmp_path: Path) -> Path:
    """Two specialists with names that no prompt or fact would contain."""
    roster = tmp_path / "roster.toml"
    roster.write_text('[[coordinator]]\ndomain = "body"\n[[coordinator.specialist]]\nname = "hypnos"\nfocus = "sleep"\n'
                      'reads = ["metrics:sleep_hours"]\n[[coordinator]]\ndomain = "job"\n[[coordinator.specialist]]\n'
                      'name = "chronos"\nfocus = "the calendar"\nreads = ["calendar"]\n')
    return roster


def two_sided(**kw: object) -> Deliberators:
    return Deliberators(insights={"hypnos": [("Be in bed by 22:30.", "high", 85, "tonight (night)")],
                                  "chronos": [("Finish the report tonight.", "high", 75, "Finish Q4 report")]}, **kw)  # type: ignore[arg-type]


def test_debaters_and_the_moderator_never_see_who_holds_a_position(tmp_path: Path) -> None:
    script = two_sided()
    result = team(tmp_path, script, mode="standard", roster=two_roster(tmp_path)).deliberate_sync(REQUEST, now=NOW)
    assert result.debates and result.debates[0].status == "resolved"
    checked = 0
    for (kind, agent), request in zip(script.calls, script.requests):
        if kind in ("DebateEvidence", "Compromise"):
            text = str(request.messages[-1].content).lower()
            assert not ({"hypnos", "chronos"} - {agent}) & set(text.replace(":", " ").replace(".", " ").split()), text
            checked += 1
    assert checked == 3


def test_a_rejected_compromise_stays_unresolved_never_agreed(tmp_path: Path) -> None:
    result = team(tmp_path, Deliberators(reject=("sleep",)), mode="standard").deliberate_sync(REQUEST, now=NOW)
    [debate] = result.debates
    assert debate.status == "unresolved" and not debate.resolution.accepted
    assert debate.reason == "sleep rejected the compromise" and debate.resolution.confidence_in_resolution == 0
    assert debate.rounds[-1].round_type == "validation" and debate.rounds[-1].agent_b_response.startswith("reject") or \
        debate.rounds[-1].agent_a_response.startswith("reject")
    assert not any(i.insight_id == "r-c1" for i in result.insights)
    assert {i.agent for i in result.insights if i.unresolved} == {"calendar", "sleep"}
    assert "Conflict c1: unresolved" in result.answer


def test_a_moderator_breaking_the_schema_leaves_the_conflict_unresolved_with_the_reason(tmp_path: Path) -> None:
    result = team(tmp_path, Deliberators(bad_moderator=True), mode="deep").deliberate_sync(REQUEST, now=NOW)
    debate = result.debates[0]
    assert debate.status == "unresolved" and "round 3 (compromise)" in debate.reason and "moderator" in debate.reason
    assert [r.round_type for r in debate.rounds] == ["position", "evidence"]
    assert result.status == "completed"  # the run goes on: the votes still happened
    assert result.votes


def test_deep_mode_votes_adjust_confidence_flag_low_consensus_and_rank(tmp_path: Path) -> None:
    # every voter strongly disagrees with everything except the sleep specialist, who agrees
    script = Deliberators(votes={"recovery": -2, "calendar": -2, "deep_content": -1, "stress": -2, "activity": -2,
                                 "cardio": -2, "context": -2, "sleep": 1}, reject=("calendar",))
    result = team(tmp_path, script, mode="deep").deliberate_sync(REQUEST, now=NOW)
    assert len([c for c in result.coordinators if c.activated]) == 3
    assert result.usage.requests <= 20 and result.votes
    voters = {v.voting_agent for v in result.votes}
    assert 1 <= len(voters) <= 3
    for i in result.insights:
        mine = [v.vote for v in result.votes if v.insight_id == i.insight_id]
        if mine:
            score = sum(mine) / len(mine)
            assert i.consensus_score == pytest.approx(score, abs=1e-4)
            assert i.adjusted_confidence == pytest.approx(max(0, min(100, i.confidence + 10 * score)), abs=0.01)
            assert i.low_consensus == (score < -0.5)
            assert all(v.voting_agent != i.agent for v in result.votes if v.insight_id == i.insight_id)
    assert any(i.low_consensus for i in result.insights) and "Low consensus" in result.answer
    weights = {"low": 1, "medium": 2, "high": 3}
    keys = [weights[i.impact] * i.final_confidence() for i in result.insights]
    assert keys == sorted(keys, reverse=True)


def test_quick_mode_runs_one_coordinator_within_four_calls_and_never_debates(tmp_path: Path) -> None:
    script = Deliberators()
    result = team(tmp_path, script, mode="quick").deliberate_sync(REQUEST, now=NOW)
    assert len([c for c in result.coordinators if c.activated]) == 1
    assert result.usage.requests <= 4 and result.debates == [] and result.votes == []
    assert {k for k, _ in script.calls} == {"SpecialistInsights"}


def test_a_tight_budget_stops_with_partial_results_and_the_reason(tmp_path: Path) -> None:
    # the calendar specialist never answers within the deadline: the others' insights are kept
    script = Deliberators(slow={"calendar": 30.0})
    result = team(tmp_path, script, mode="standard", deadline_s=1.0).deliberate_sync(REQUEST, now=NOW)
    assert result.status == "stopped" and "deadline" in result.stop_reason
    assert {i.agent for i in result.insights} == {"deep_content", "recovery", "sleep"}
    assert RunStore(tmp_path / "runs.db").get_run(result.run_id).status == "stopped"
    # with calls for the specialists and the judge but not for a debate, the conflict is reported, not debated
    short = team(tmp_path, two_sided(), mode="standard", max_calls=6, roster=two_roster(tmp_path)).deliberate_sync(REQUEST, now=NOW)
    assert short.usage.requests <= 6 and short.debates == [] and short.conflicts and "needs 5 calls" in short.answer
    assert all(i.unresolved for i in short.insights)


def test_specialists_of_all_coordinators_run_at_the_same_time(tmp_path: Path) -> None:
    # four specialists over two coordinators: the barrier opens only if all four wait at once
    script = Deliberators(barrier=asyncio.Barrier(4))
    result = team(tmp_path, script, mode="standard").deliberate_sync(REQUEST, now=NOW)
    assert len({i.agent for i in result.insights if i.agent != "moderator"}) == 4


def test_a_unanimous_scenario_runs_no_debate_and_votes_raise_confidence(tmp_path: Path) -> None:
    agree = {name: [("Take a recovery day: rest, walk gently, sleep early.", "high", 75, "")]
             for name in ("recovery", "sleep", "activity", "cardio", "calendar", "deep_content", "context")}
    script = Deliberators(insights=agree, votes={n: 2 for n in agree})
    result = team(tmp_path, script, RECOVERY_DAY, mode="deep").deliberate_sync("Should I take it easy today?",
                                                                                now="2026-11-16T08:00")
    assert result.conflicts == [] and result.debates == []
    assert not any(k in ("DebateEvidence", "Compromise") for k, _ in script.calls)
    assert result.votes and all(i.adjusted_confidence == 95 for i in result.insights if i.consensus_score == 2)


def test_no_data_for_the_request_means_no_model_call(tmp_path: Path) -> None:
    script = Deliberators()
    t = team(tmp_path, script, mode="deep")
    result = t.deliberate_sync("How is my glucose doing?", now=NOW)
    assert script.calls == [] and result.usage.requests == 0
    assert result.answer.startswith("No coordinator has data for this request") and "glucose" in result.answer
    assert "No model was asked" in result.answer


def test_events_name_every_phase(tmp_path: Path) -> None:
    bus = EventBus()
    seen: list[str] = []
    bus.subscribe(lambda e: seen.append(e.type.value))
    asyncio.run(team(tmp_path, Deliberators(), mode="standard").deliberate(REQUEST, now=NOW, bus=bus))
    for kind in ("deliberation.coordinator", "deliberation.insights", "deliberation.conflict_detected",
                 "deliberation.debate_round", "deliberation.resolution"):
        assert kind in seen, kind
    assert seen.count("deliberation.debate_round") == 4


def test_a_specialist_repeating_itself_gives_one_insight(tmp_path: Path) -> None:
    twice = Deliberators(insights={"sleep": [("Be in bed by 22:30.", "high", 85, ""), ("be in bed by  22:30.", "high", 85, "")]})
    result = team(tmp_path, twice, mode="standard").deliberate_sync(REQUEST, now=NOW)
    [sleep] = [i for i in result.insights if i.agent == "sleep"]
    assert sleep.insight_id == "sleep-1" and sleep.action == "sleep early"
    # the action is the model's choice from a list; the detail its own words
    assert sleep.recommendation == "Sleep early: Be in bed by 22:30"


def test_a_deadline_inside_a_debate_says_so_instead_of_blaming_the_reply(tmp_path: Path) -> None:
    script = Deliberators(slow={"proposes a compromise that keeps both sides' evidence": 30.0})
    result = team(tmp_path, script, mode="deep", deadline_s=1.5).deliberate_sync(REQUEST, now=NOW)
    assert result.status == "stopped" and "deadline" in result.stop_reason
    [debate] = result.debates
    assert debate.status == "unresolved" and "round 3 (compromise)" in debate.reason
    assert "the budget stopped moderator's reply" in debate.reason and "unusable" not in debate.reason


def test_the_moderator_can_have_its_own_model(tmp_path: Path) -> None:
    from moot.errors import MootError

    default, moderator = model_for(Deliberators()), model_for(Deliberators())
    result = DeliberationTeam(SLEEP_VS_DEADLINE, model=default, models={"moderator": moderator},
                              store=RunStore(tmp_path / "runs.db")).deliberate_sync(REQUEST, now=NOW)
    assert result.debates and {r.agent for r in moderator.requests} == {"moderator"}
    assert "moderator" not in {r.agent for r in default.requests}
    with pytest.raises(MootError, match="the deliberation team has no role 'chair'"):
        DeliberationTeam(SLEEP_VS_DEADLINE, model=default, models={"chair": moderator})
