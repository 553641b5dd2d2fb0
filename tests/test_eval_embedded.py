"""One small level on the embedded model: the harness grades what the real team says.

Kept short: the first two questions of the bundled L1, over a two-sentence extract of its
first article, in single mode. It asserts that the harness produces graded, costed records
from the real learning team — not the 0.5B model's score, which the full run measures.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from moot.eval.levels import load_suite
from moot.eval.rubric import grade_question
from moot.eval.runner import run_progressive
from moot.runtime import RunStore
from moot.teams.learning.eval_adapter import learning_team_factory

EXTRACT = ("The ferry Marren Star made her first crossing from Pellmouth to Skerra Island on 5 March 2024. "
           "The Marren Star is 38 metres long and carries up to 212 passengers.")


def test_l1_on_the_embedded_model_gives_graded_records(local_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bundled = load_suite(levels=["L1"])[0]
    (tmp_path / "articles" / "L01").mkdir(parents=True)
    (tmp_path / "articles" / "L01" / "extract.md").write_text(EXTRACT, encoding="utf-8")
    level = json.loads(bundled.model_dump_json())
    level["articles"] = [{"file": "L01/extract.md", "source": "Pellmouth Gazette", "published": "2024-03-05"}]
    level["questions"] = level["questions"][:2]
    (tmp_path / "L01.json").write_text(json.dumps(level), encoding="utf-8")
    suite = load_suite(tmp_path)

    with RunStore(tmp_path / "runs.sqlite3") as store:
        results = asyncio.run(run_progressive(suite, learning_team_factory(local_model, store=store),
                                              modes=["single"], runs=1, model_name="local"))
        result = results.levels[0]
        assert result.learn.error is None and result.learn.model_calls >= 1
        questions = suite[0].questions
        assert [r.question_id for r in result.records] == [q.id for q in questions]
        for record, question in zip(result.records, questions):
            assert record.mode == "single" and record.answer.strip()
            # The stored grade is the rubric's verdict on the stored answer, and a failure has a stage.
            assert record.passed == grade_question(record.answer, question).passed
            assert (record.stage is None) == record.passed
            assert record.run_id and store.get_run(record.run_id).name.startswith("ask:")
