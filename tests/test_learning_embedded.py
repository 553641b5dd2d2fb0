"""Learning one bundled article on the real embedded model (kept to one model call)."""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path

import pytest

from moot.memory import KnowledgeBase
from moot.teams.learning import learn_file

ARTICLE = Path(__file__).resolve().parents[1] / "examples" / "learning" / "articles" / "04-grant-herald.md"


@pytest.mark.embedded
def test_the_embedded_model_learns_dated_facts_from_an_article(local_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        report = asyncio.run(learn_file(kb, ARTICLE, model=local_model, summarise=False, record_run=False))
        facts = kb.facts()
    assert report.model_calls == 1 and report.facts_stored >= 3
    assert all(f.source_date == date(2026, 7, 6) and f.episode_id is not None for f in facts)
    text = " ".join(f"{f.content} {f.value}" for f in facts)
    # the article's key numbers come through as written
    assert "3.1 million" in text
    assert any(n in text for n in ("95", "1,200", "700,000", "450,000"))
