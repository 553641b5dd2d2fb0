"""One end-to-end question on the embedded model: multi mode, the key number in the answer."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.runtime import Budget
from moot.teams.learning import LearningTeam


@pytest.mark.embedded
def test_multi_mode_answer_on_the_embedded_model(local_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with KnowledgeBase.open(tmp_path / "olympics.sqlite3") as kb:
        kb.add_facts([
            Fact("Norway had 9 gold medals after day 7", entity="Norway", attribute="gold medals", value="9",
                 source="Day 7 report", source_date=date(2026, 2, 13)),
            Fact("Norway had 14 gold medals after day 10", entity="Norway", attribute="gold medals", value="14",
                 source="Day 10 report", source_date=date(2026, 2, 16)),
            Fact("Italy had 5 gold medals after day 10", entity="Italy", attribute="gold medals", value="5",
                 source="Day 10 report", source_date=date(2026, 2, 16)),
            Fact("Heavy snow delayed the downhill race by one day", entity="downhill race", attribute="status",
                 value="delayed", source="Day 8 report"),
            Fact("Norway won the cross-country relay", entity="cross-country relay", attribute="winner",
                 value="Norway", source="Day 9 report"),
            Fact("The closing ceremony is on day 16", entity="closing ceremony", attribute="day", value="16",
                 source="Guide"),
        ])
        # The deadline is generous because the first request also loads the engine.
        team = LearningTeam(kb, model=local_model, budget=Budget(max_calls=10, deadline_s=240), store=False)
        answer = team.ask_sync("How did Norway's gold medals change between day 7 and day 10?", mode="multi")
    assert answer.mode == "multi"
    assert answer.intent == "temporal"
    # The single agent's draft beside the temporal specialist (a value reported at two dates), then the selector.
    assert {"memory", "single", "reasoning", "select"} <= set(answer.sub_agents)
    assert any(n.startswith("selector: ") for n in answer.trace.notes)
    assert answer.knows and answer.facts_used
    assert "14" in answer.answer or "5" in answer.answer, answer.answer
    assert answer.usage.requests <= 10
