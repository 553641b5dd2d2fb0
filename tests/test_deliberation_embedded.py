"""One short deliberation on the real embedded model over the bundled sleep-vs-deadline folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.runtime import RunStore
from moot.teams.deliberation import DeliberationTeam, load_roster
from moot.teams.deliberation.data import facts_for, load_folder
from moot.teams.deliberation.team import parse_now
from deliberation_support import NOW, REQUEST, SLEEP_VS_DEADLINE

ROSTER = """
[[coordinator]]
domain = "health"
[[coordinator.specialist]]
name = "sleep"
focus = "sleep duration and sleep debt"
reads = ["metrics:sleep_hours", "metrics:recovery_pct"]
[[coordinator.specialist]]
name = "calendar"
focus = "meetings, deadlines and free time in the calendar"
reads = ["calendar"]
"""


@pytest.mark.embedded
def test_embedded_model_gives_grounded_insights_within_the_budget(tmp_path: Path, local_model) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "roster.toml").write_text(ROSTER)
    roster = load_roster(tmp_path / "roster.toml")
    team = DeliberationTeam(SLEEP_VS_DEADLINE, model=local_model, mode="quick", roster=roster,
                            store=RunStore(tmp_path / "runs.db"), deadline_s=600)
    result = team.deliberate_sync(REQUEST, now=NOW)
    assert result.usage.requests <= 4 and result.debates == [] and result.votes == []
    assert result.insights, result.answer
    data = load_folder(SLEEP_VS_DEADLINE)
    now = parse_now(NOW)
    for insight in result.insights:
        assert insight.recommendation and 0 <= insight.confidence <= 100
        # every piece of evidence is one of the facts Python computed for that specialist
        facts = set(facts_for(data, list(roster.specialist(insight.agent).reads), now))
        assert insight.evidence and set(insight.evidence) <= facts, insight
    assert RunStore(tmp_path / "runs.db").get_run(result.run_id).status == "completed"
