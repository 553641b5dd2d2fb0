"""The bundled progressive suite (src/moot/eval/data/progressive) and the held-out one
(examples/holdout-suite, examples/holdout-rules): every level loads and is fair."""

from __future__ import annotations

import re

import pytest

from pathlib import Path

from moot.eval.levels import SUITE_DIR, load_suite
from moot.eval.rubric import grade_question, says_unknown

LEVELS = load_suite() if any(SUITE_DIR.glob("L*.json")) else []
HOLDOUT_DIR = Path(__file__).resolve().parents[1] / "examples" / "holdout-suite"
HOLDOUT = load_suite(HOLDOUT_DIR)
RULES_DIR = HOLDOUT_DIR.parent / "holdout-rules"
RULES = load_suite(RULES_DIR)
BOTH = [pytest.param(lv, id=f"bundled-{lv.level}") for lv in LEVELS] + [
    pytest.param(lv, id=f"holdout-{lv.level}") for lv in HOLDOUT] + [
    pytest.param(lv, id=f"holdout-rules-{lv.level}") for lv in RULES]

# Words that would tell the agent what kind of question it is facing.
LEVEL_WORDS = re.compile(r"\b(L\d{1,2}|level \d+|temporal|procedural|metacognition|counterfactual|contradiction|"
                         r"far transfer|multi-source|recall|causal reasoning)\b", re.IGNORECASE)


def test_the_suite_has_twelve_levels_in_order() -> None:
    assert [lv.level for lv in LEVELS] == [f"L{n}" for n in range(1, 13)]


def test_the_holdout_suites_levels() -> None:
    assert [lv.level for lv in HOLDOUT] == ["L2", "L3", "L4", "L5", "L6", "L9", "L10", "L11"]
    assert [len(lv.questions) for lv in HOLDOUT] == [6, 6, 6, 6, 6, 6, 6, 10]
    assert sum(q.rubric.expects_unknown for lv in HOLDOUT for q in lv.questions) == 3
    # the rule reader's fresh test: one level of documented rules, every answer worked out
    assert [(lv.level, len(lv.questions)) for lv in RULES] == [("L11", 10)]
    assert not any(q.rubric.expects_unknown for lv in RULES for q in lv.questions)


@pytest.mark.parametrize("level", BOTH)
def test_level_has_at_least_six_questions_and_every_expected_passes_its_rubric(level) -> None:  # type: ignore[no-untyped-def]
    assert len(level.questions) >= 6
    for question in level.questions:
        result = grade_question(question.expected, question)
        assert result.passed, f"{question.id}: the expected answer fails its own rubric: {result.reason}"
        if question.rubric.expects_unknown:
            assert says_unknown(question.expected), question.id
        else:
            assert not grade_question("I don't know.", question).passed, f"{question.id}: 'I don't know' passes"


@pytest.mark.parametrize("level", BOTH)
def test_no_question_names_its_level_or_kind(level) -> None:  # type: ignore[no-untyped-def]
    for question in level.questions:
        assert not LEVEL_WORDS.search(question.question), f"{question.id}: {question.question}"


def test_only_l7_teaches_and_its_quiz_ids_exist() -> None:
    teaching = [lv for lv in LEVELS if lv.teaching is not None]
    assert [lv.level for lv in teaching] == ["L7"]
    assert len(teaching[0].teaching.quiz) >= 6
