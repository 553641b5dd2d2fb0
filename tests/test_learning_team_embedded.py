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


@pytest.mark.embedded
def test_a_step_position_and_a_disagreement_on_the_embedded_model(local_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The procedure and sources specialists resolve in Python what the small model gets wrong alone."""
    guide = ("# Restarting the Brenn Hill pump\n\nBrenn Hill Water Trust handbook, 15 January 2025. Volunteers restart the "
             "pump by following these five steps in order.\n\nStep 1: wait until the river gauge has stayed below 2 "
             "metres for one hour.\n\nStep 2: check both inlet grilles for debris.\n\nStep 3: switch the control panel "
             "to \"manual\".\n\nStep 4: open the inlet valve with the long handle.\n\nStep 5: switch the control panel "
             "back to \"automatic\".\n")
    post = "Harle Post, 14 May 2025. The Harle Kite Fair drew 3,100 visitors over its two days, the Harle Post can report."
    courier = "Downs Courier, 16 May 2025. Some 4,800 people came to the Harle Kite Fair, according to the Downs Courier."
    with KnowledgeBase.open(tmp_path / "mixed.sqlite3") as kb:
        kb.add_episode(guide, source="Brenn Hill Water Trust", published="2025-01-15")
        kb.add_episode(post, source="Harle Post", published="2025-05-14")
        kb.add_episode(courier, source="Downs Courier", published="2025-05-16")
        kb.add_facts([
            Fact("Volunteers restart the Brenn Hill pump by following five steps", entity="Brenn Hill pump",
                 attribute="restart", value="five steps", source="Brenn Hill Water Trust"),
            Fact("The Harle Kite Fair drew 3,100 visitors", entity="Harle Kite Fair", attribute="visitors",
                 value="3,100", source="Harle Post"),
        ])
        team = LearningTeam(kb, model=local_model, budget=Budget(max_calls=10, deadline_s=240), store=False)
        step = team.ask_sync("When restarting the Brenn Hill pump, what is done right after the inlet valve is opened?",
                             mode="multi")
        fair = team.ask_sync("How many people came to the Harle Kite Fair?", mode="multi")
    assert "procedure" in step.sub_agents and step.answer.startswith("Step 5 of 5"), step.answer
    assert "back to" in step.answer
    assert "3,100" in fair.answer and "4,800" in fair.answer and "disagree" in fair.answer, fair.answer
