"""The debate on questions with known answers (what `moot eval deliberation` measures): unanimous
answers skip the debate, the moderator can only pick an answer on the table, votes adjust
confidence by the design's rule, a pick most solvers reject is unresolved and flagged; the
summary's flips and error predictors; reasoning-gym's own scorer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moot.eval.deliberation import majority, summarise
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.teams.deliberation.qa import QuestionDebate


class Solvers:
    """Round 1 answers per solver, round 2 answers per solver, the moderator's pick, votes per solver."""

    def __init__(self, first: list[str], revised: list[str] | None = None, pick: str | None = None, votes: list[int] | None = None) -> None:
        self.first, self.revised, self.pick, self.votes = first, revised or first, pick, votes or [1, 1, 1]
        self.calls: list[str] = []
        self.pick_choices: list[str] = []

    def __call__(self, request: ModelRequest) -> Any:
        assert request.output is not None
        kind, role = request.output.name, request.output.description
        self.calls.append(kind)
        k = self.calls.count(kind) - 1
        if kind == "SolverAnswer":
            revising = role == "revises its answer"
            n = sum(1 for c in self.calls[:-1] if c == "SolverAnswer")
            i = n - 3 if revising else n
            return {"reasoning": "because", "answer": (self.revised if revising else self.first)[i], "confidence": 70}
        if kind == "ModeratorPick":
            self.pick_choices = request.output.json_schema["properties"]["answer"]["enum"]
            return {"reasoning": "best argued", "answer": self.pick or self.pick_choices[0]}
        if kind == "AnswerVote":
            return {"vote": self.votes[k % len(self.votes)], "reason": "ok"}
        raise AssertionError(kind)


def debate(script: Solvers) -> Any:
    return asyncio.run(QuestionDebate(FunctionModel(script)).answer("What is 2 + 2?"))


def test_unanimous_solvers_need_no_debate() -> None:
    script = Solvers(["4", "4", "4."])
    d = debate(script)
    assert d.answer == "4" and not d.debated and d.calls == 3 and script.calls == ["SolverAnswer"] * 3
    assert d.adjusted_confidence == d.confidence == 70


def test_a_disagreement_goes_through_four_rounds_and_votes_adjust_confidence() -> None:
    script = Solvers(["4", "5", "4"], revised=["4", "5", "4"], pick="4", votes=[2, 1, 0])
    d = debate(script)
    assert d.debated and d.calls == 10
    assert sorted(script.pick_choices) == ["4", "5"]  # the moderator may only pick an answer on the table
    assert d.answer == "4" and d.accepted and d.votes == [2, 1, 0]
    assert d.consensus_score == 1.0 and d.adjusted_confidence == 80 and not d.low_consensus


def test_a_pick_most_solvers_reject_is_unresolved_and_flagged() -> None:
    script = Solvers(["4", "5", "5"], revised=["4", "5", "5"], pick="4", votes=[-2, -2, 1])
    d = debate(script)
    assert not d.accepted and d.low_consensus
    assert d.answer == "5"  # the majority of the revised answers, never the rejected pick
    assert d.consensus_score == pytest.approx(-1.0) and d.adjusted_confidence == 60


def test_summary_counts_flips_and_whether_the_flag_predicts_errors() -> None:
    rows = [
        {"system": "debate", "correct": True, "initial_correct": False, "calls": 10, "tokens": 100, "seconds": 1.0,
         "debated": True, "adjusted_confidence": 80, "low_consensus": False},
        {"system": "debate", "correct": False, "initial_correct": True, "calls": 10, "tokens": 100, "seconds": 1.0,
         "debated": True, "adjusted_confidence": 40, "low_consensus": True},
        {"system": "debate", "correct": True, "initial_correct": True, "calls": 3, "tokens": 30, "seconds": 0.5,
         "debated": False, "adjusted_confidence": 90, "low_consensus": False},
        {"system": "single", "correct": False, "calls": 1, "tokens": 10, "seconds": 0.1},
    ]
    s = summarise(rows)
    d = s["debate"]
    assert d["accuracy"] == 0.667 and d["calls"] == 23 and d["debated"] == 2
    assert d["right_to_wrong"] == 1 and d["wrong_to_right"] == 1
    assert d["mean_adjusted_confidence_right"] == 85 and d["mean_adjusted_confidence_wrong"] == 40
    assert d["error_rate_flagged"] == 1.0 and d["error_rate_unflagged"] == 0.0
    assert s["single"]["accuracy"] == 0.0
    assert majority(["Yes", "no", "No"]) == "no" and majority([]) is None


def test_questions_come_from_reasoning_gym_and_its_scorer_decides() -> None:
    pytest.importorskip("reasoning_gym")
    from moot.eval.deliberation import is_correct, make_questions

    qs = make_questions(4, seed=3)
    assert [q.dataset for q in qs] == ["syllogism", "family_relationships", "basic_arithmetic", "syllogism"]
    assert [q.question for q in qs] == [q.question for q in make_questions(4, seed=3)]  # seeded: the same questions again
    for q in qs:
        assert is_correct(q, q.answer) and not is_correct(q, "definitely not the answer") and not is_correct(q, None)
    assert qs[0].choices == ["Yes", "No"]
