"""The README's question end to end on the embedded model: the frame, the drafts, the checker, the selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.memory import KnowledgeBase
from moot.runtime import Budget
from moot.teams.learning import LearningTeam
from moot.teams.learning.ingest.documents import read_document

ARTICLES = Path(__file__).resolve().parents[1] / "examples" / "learning" / "articles"


@pytest.mark.embedded
def test_the_current_budget_on_the_embedded_model(local_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with KnowledgeBase.open(tmp_path / "river.sqlite3") as kb:
        for name in ("01-launch.md", "04-grant-herald.md"):  # the budget as first set, and as the grant raised it
            doc = read_document(ARTICLES / name)
            kb.store_source(doc.source, [(doc.text, [])], published=doc.published)
        # The deadline is generous because the first request also loads the engine.
        team = LearningTeam(kb, model=local_model, budget=Budget(max_calls=10, deadline_s=300), store=False)
        answer = team.ask_sync("What is the current budget of the Marrow River Cleanup?", mode="multi")
    assert answer.mode == "multi" and answer.trace.frame is not None
    assert [s.task for s in answer.trace.sub_agents][:2] == ["recall", "frame"]
    assert {"check", "select"} <= set(answer.sub_agents)
    assert answer.knows and "3.1 million" in answer.answer, answer.answer
    assert answer.usage.requests <= 10
