"""One small level on the embedded model: the harness grades what the real team says.

Kept short (one article, two questions, single mode). It asserts that the harness produces
graded, costed records — not the 0.5B model's score, which is what the benchmark measures.
"""

from __future__ import annotations

import asyncio

from moot.eval.levels import load_suite
from moot.eval.rubric import grade_question
from moot.eval.runner import run_progressive
from moot.runtime import RunStore
from moot.teams.learning.eval_adapter import learning_team_factory


def test_l1_on_the_embedded_model_gives_graded_records(local_model, tmp_path) -> None:  # type: ignore[no-untyped-def]
    full = load_suite(levels=["L1"])[0]
    level = full.model_copy(update={"articles": full.articles[:1], "questions": full.questions[:2]})
    with RunStore(tmp_path / "runs.sqlite3") as store:
        results = asyncio.run(run_progressive([level], learning_team_factory(local_model, store=store),
                                              modes=["single"], runs=1, model_name="local"))
        result = results.levels[0]
        assert result.learn.error is None and result.learn.model_calls >= 1
        assert [r.question_id for r in result.records] == [q.id for q in level.questions]
        for record, question in zip(result.records, level.questions):
            assert record.mode == "single" and record.answer.strip()
            # The stored grade is the rubric's verdict on the stored answer.
            assert record.passed == grade_question(record.answer, question).passed
            assert (record.stage is None) == record.passed
            assert record.run_id and store.get_run(record.run_id).name.startswith("ask:")
