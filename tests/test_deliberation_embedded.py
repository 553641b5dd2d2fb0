"""One short deliberation on the real embedded model over the bundled sleep-vs-deadline folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.runtime import RunStore
from moot.teams.deliberation import DeliberationTeam, load_roster
from deliberation_support import NOW, REQUEST, SLEEP_VS_DEADLINE

ROSTER = """
[[coordinator]]
domain = "health"
[[coordinator.specialist]]
name = "sleep"
focus = "sleep duration and sleep debt"
reads = ["metrics:sleep", "metrics:recovery"]
[[coordinator.specialist]]
name = "calendar"
focus = "meetings, deadlines and free time in the calendar"
reads = ["calendar"]
"""


@pytest.mark.embedded
def test_embedded_model_reads_the_option_and_takes_typed_positions_within_quick_budget(tmp_path: Path, local_model) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "roster.toml").write_text(ROSTER)
    team = DeliberationTeam(SLEEP_VS_DEADLINE, model=local_model, mode="quick", roster=load_roster(tmp_path / "roster.toml"),
                            store=RunStore(tmp_path / "runs.db"), deadline_s=600)
    result = team.deliberate_sync(REQUEST, now=NOW)
    assert team.order_check  # on by default for the embedded model
    assert result.usage.requests <= 4 and result.debates == [] and result.votes == []
    assert result.reading.options, result.answer
    assert RunStore(tmp_path / "runs.db").get_run(result.run_id).status == "completed"
    if not result.insights:
        # the 0.5B model's choices may all change with the listing order: then the answer says there is
        # no decision, and why for each specialist, rather than taking the first position listed
        lines = result.answer.splitlines()
        assert result.decision is None and lines[0].startswith("No decision"), result.answer
        named = {line.split(":")[0] for line in lines[1:] if ": no position (" in line or ": not asked (" in line}
        assert named == {"sleep", "calendar"}, result.answer
        return
    assert result.decision is not None, result.answer
    shown = {e.evidence_id: e.text for e in result.evidence}
    for insight in result.insights:
        assert insight.position is not None and 0 <= insight.confidence <= 100
        # the evidence a position cites is evidence Python computed from the data
        assert insight.evidence_ids and all(shown[e] == t for e, t in zip(insight.evidence_ids, insight.evidence))
    first = result.answer.splitlines()[0]
    assert first.split()[0] in ("Do", "Skip") and any(o.label in first for o in result.reading.options), first
