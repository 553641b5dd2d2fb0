"""Feedback memory: every deliberation is stored, the user's accept/reject is recorded, and a
later debate of a similar conflict sees it — a rejected kind of compromise is not proposed again."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.errors import MootError
from moot.runtime import RunStore
from moot.teams.deliberation import DeliberationTeam, FeedbackMemory
from moot.teams.deliberation.memory import Precedent, allowed_compromise_types
from deliberation_support import NOW, REQUEST, SLEEP_VS_DEADLINE, Deliberators, enum, model_for


def run(tmp_path: Path, script: Deliberators, memory: FeedbackMemory):  # type: ignore[no-untyped-def]
    team = DeliberationTeam(SLEEP_VS_DEADLINE, model=model_for(script), store=RunStore(tmp_path / "runs.db"),
                            memory=memory, mode="standard")
    return team.deliberate_sync(REQUEST, now=NOW)


def moderator_types(script: Deliberators) -> list[str]:
    [request] = [r for (k, _), r in zip(script.calls, script.requests) if k == "Compromise"]
    assert request.output is not None
    return enum(request.output.json_schema, None, "compromise_type")


def test_a_rejected_time_split_is_not_proposed_again_for_the_same_conflict(tmp_path: Path) -> None:
    memory = FeedbackMemory(tmp_path / "memory.db")
    first_script = Deliberators()
    first = run(tmp_path, first_script, memory)
    assert first.debates[0].resolution.compromise_type == "time_split" and first.debates[0].memory_used == []
    assert "time_split" in moderator_types(first_script)
    run_id, targets = memory.record(first.run_id[:8], "rejected")
    assert run_id == first.run_id and targets == ["r-c1"]

    second_script = Deliberators()
    second = run(tmp_path, second_script, memory)
    debate = second.debates[0]
    # the moderator saw the user's decision and could not choose time_split again
    assert "time_split" not in moderator_types(second_script)
    assert debate.resolution.compromise_type != "time_split"
    assert debate.memory_used and debate.memory_used[0].startswith("rejected: time split: do 'keep working tonight', shortened to")
    moderator_prompt = str([r for (k, _), r in zip(second_script.calls, second_script.requests) if k == "Compromise"][0].messages[-1].content)
    assert "What this person decided about similar conflicts before" in moderator_prompt
    assert memory.stats() == {"deliberations": 2, "accepted": 0, "rejected": 1}


def test_an_accepted_type_stays_allowed_and_at_least_one_type_always_remains() -> None:
    p = lambda t, d: Precedent("x", t, d)  # noqa: E731
    assert allowed_compromise_types([p("time_split", "rejected"), p("time_split", "accepted")]) == \
        ["full_merge", "time_split", "priority_override", "conditional"]
    everything = [p(t, "rejected") for t in ("full_merge", "time_split", "priority_override", "conditional")]
    assert allowed_compromise_types(everything) == ["full_merge", "time_split", "priority_override", "conditional"]
    assert allowed_compromise_types([p("conditional", "rejected")]) == ["full_merge", "time_split", "priority_override"]


def test_feedback_on_unknown_runs_and_insights_is_a_one_line_error(tmp_path: Path) -> None:
    memory = FeedbackMemory(tmp_path / "memory.db")
    with pytest.raises(MootError) as none:
        memory.record("nope", "accepted")
    assert "no deliberation with run id 'nope'" in none.value.one_line()
    result = run(tmp_path, Deliberators(), memory)
    with pytest.raises(MootError) as bad:
        memory.record(result.run_id, "accepted", "sleep-9")
    assert "no insight 'sleep-9'" in bad.value.one_line() and "p1, p2, r-c1" in bad.value.one_line()
    assert memory.record(result.run_id, "accepted", "p2")[1] == ["p2"]
    # a broken memory file is a one-line error naming the fix
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database" * 100)
    with pytest.raises(MootError) as damaged:
        FeedbackMemory(broken)
    assert "move the file away" in damaged.value.one_line()
