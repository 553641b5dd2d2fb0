"""A real teaching session on the embedded model: small (4 facts, 2 rounds, 2 questions) and checked for consistency."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.runtime import RunStore
from moot.teams.learning.teach.student import missing_numbers, numbers_in
from moot.teams.learning.teach.session import run_teaching_session

pytestmark = pytest.mark.embedded

TOPIC = "Marrow River Cleanup"
FACTS = [
    Fact("The Marrow River Cleanup had 610 volunteers.", entity=TOPIC, attribute="number of volunteers", value="610"),
    Fact("The Marrow River Cleanup started in the town of Lindau.", entity=TOPIC, attribute="starting town", value="Lindau"),
    Fact("The Marrow River Cleanup had a budget of 2.4 million euros.", entity=TOPIC, attribute="budget", value="2.4 million euros"),
    Fact("The Marrow River Cleanup removed 38 tonnes of waste.", entity=TOPIC, attribute="waste removed", value="38 tonnes"),
]


async def test_a_real_session_gives_a_complete_consistent_report(local_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    student_file = tmp_path / "student.sqlite3"
    with KnowledgeBase.open(tmp_path / "teacher.sqlite3") as kb, RunStore(tmp_path / "runs.sqlite3") as store:
        kb.add_facts(FACTS)
        report = await run_teaching_session(
            kb, TOPIC, model=local_model, rounds=2, quiz_size=2, store=store, student_kb=student_file
        )
        record = store.get_run(report.run_id)
    assert report.status == "completed", report.stop_reason
    assert record.status == "completed"
    assert len(report.rounds) == 2 and len(report.quiz) == 2
    taught_numbers = numbers_in(" ".join(f.content for f in FACTS) + " " + TOPIC)
    for r in report.rounds:
        assert r.explanation.strip() and r.check_question.strip() and r.facts_covered
        # whatever the model made up, the student is told no number the facts do not hold
        assert not missing_numbers(numbers_in(r.explanation), taught_numbers), (r.explanation, r.dropped_sentences)
    assert 0.0 <= report.student_score <= 1.0 and 0.0 <= report.teacher_score <= 1.0
    if report.teacher_score > 0:
        assert report.effectiveness_ratio == pytest.approx(report.student_score / report.teacher_score, abs=1e-3)
    else:
        assert report.effectiveness_ratio is None
    sm = report.student_model
    assert sm.checks_total == 2 and sm.level_history[0] == 1
    with KnowledgeBase.open(student_file) as own:
        assert own.count() > 0 and own.count() == len(report.student_notes)
    assert report.usage.requests >= 2 * 3 + 2 * 2
    print(report.model_dump_json(indent=1))
