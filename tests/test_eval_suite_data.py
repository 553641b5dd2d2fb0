"""The bundled progressive suite (src/moot/eval/data/progressive): every level loads and is fair."""

from __future__ import annotations

import re

import pytest

from moot.eval.levels import SUITE_DIR, load_suite
from moot.eval.rubric import grade_question, says_unknown

LEVELS = load_suite() if any(SUITE_DIR.glob("L*.json")) else []

# Words that would tell the agent what kind of question it is facing.
LEVEL_WORDS = re.compile(r"\b(L\d{1,2}|level \d+|temporal|procedural|metacognition|counterfactual|contradiction|"
                         r"far transfer|multi-source|recall|causal reasoning)\b", re.IGNORECASE)


def test_the_suite_has_twelve_levels_in_order() -> None:
    assert [lv.level for lv in LEVELS] == [f"L{n}" for n in range(1, 13)]


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.level)
def test_level_has_at_least_six_questions_and_every_expected_passes_its_rubric(level) -> None:  # type: ignore[no-untyped-def]
    assert len(level.questions) >= 6
    for question in level.questions:
        result = grade_question(question.expected, question)
        assert result.passed, f"{question.id}: the expected answer fails its own rubric: {result.reason}"
        if question.rubric.expects_unknown:
            assert says_unknown(question.expected), question.id


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.level)
def test_no_question_names_its_level_or_kind(level) -> None:  # type: ignore[no-untyped-def]
    for question in level.questions:
        assert not LEVEL_WORDS.search(question.question), f"{question.id}: {question.question}"


def test_only_l7_teaches_and_its_quiz_ids_exist() -> None:
    teaching = [lv for lv in LEVELS if lv.teaching is not None]
    assert [lv.level for lv in teaching] == ["L7"]
    assert len(teaching[0].teaching.quiz) >= 6
