"""The LLM judge: a second, optional grader, reported next to the rubric with their agreement.

Any model string works. Each answer gets ``votes`` structured verdicts {score, reason}; the
judge's score is the median of the scores, and it passes the answer when that median reaches
the question's pass threshold — the rubric's own rule, decided in Python. (Votes used to carry
a ``pass`` of their own; the 0.5B judge gave score 1.0 with pass false in 53 of 150 votes,
often critiquing the *expected* answer, so the two fields contradicted each other.) Votes
differ by seed (and temperature, when more than one is asked for), so they are real votes,
not copies.
"""

from __future__ import annotations

import statistics

from pydantic import BaseModel, Field

from moot.eval.sampling import SeededModel
from moot.models.base import Model, ModelSettings, Usage
from moot.runtime import SubAgent, load_prompt


class JudgeVerdict(BaseModel):
    """One vote of the judge."""

    # The reason comes first (the grammar writes fields in this order) so the score follows from
    # it: with the score first, the 0.5B judge gave 1.0 to 18 answers the rubric failed, its
    # reason often calling the answer (or the expected answer) wrong.
    reason: str = Field(max_length=300, description="one sentence: which expected facts the answer states, and any value that differs")
    score: float = Field(ge=0.0, le=1.0, description="share of the expected facts the answer gets right")


class JudgeResult(BaseModel):
    """The judge's verdict on one answer: the median of its votes."""

    score: float
    passed: bool
    reason: str
    votes: list[dict] = Field(default_factory=list)
    """Each vote: {score, reason}, or {error} for a vote that failed."""
    usage: dict = Field(default_factory=dict)


def _prompt() -> str:
    return load_prompt("judge", __package__)


def judge_task(question: str, expected: str, answer: str, *, expects_unknown: bool) -> str:
    note = "\n(The sources do not give this answer: only a plain 'I don't know' is right.)" if expects_unknown else ""
    return f"Question: {question}\nExpected answer: {expected}{note}\nAnswer to grade: {answer or '(empty)'}"


class LLMJudge:
    """Grades answers with a model: ``votes`` verdicts per answer; the median score decides."""

    def __init__(self, model: Model, *, votes: int = 3, temperature: float | None = None) -> None:
        if votes < 1:
            from moot.errors import MootError

            raise MootError("the judge needs at least one vote", fix="pass --judge-votes 1 or more")
        self.model = model
        self.votes = votes
        # One vote: the model's default (temperature 0). Several: sample, or they are copies.
        self.temperature = temperature if temperature is not None else (None if votes == 1 else 0.7)

    async def grade(self, question: str, expected: str, answer: str, *, expects_unknown: bool = False,
                    pass_threshold: float = 1.0) -> JudgeResult:
        """The median of the votes' scores; the answer passes when it is above 0 and reaches
        ``pass_threshold`` (the question's, as for the rubric)."""
        task = judge_task(question, expected, answer, expects_unknown=expects_unknown)
        verdicts: list[JudgeVerdict] = []
        votes: list[dict] = []
        usage = Usage()
        for i in range(self.votes):
            model = SeededModel(self.model, seed=i + 1, temperature=self.temperature)
            agent = SubAgent("judge", "grades answers", _prompt(), model=model, output_type=JudgeVerdict,
                             max_turns=2, settings=ModelSettings(max_tokens=160, temperature=0))  # fmt: skip
            result = await agent.run(task)
            usage = usage + result.usage
            if result.ok and isinstance(result.output, JudgeVerdict):
                verdicts.append(result.output)
                votes.append(result.output.model_dump())
            else:
                votes.append({"error": result.detail or result.stop_reason})
        if not verdicts:
            return JudgeResult(score=0.0, passed=False, reason="every judge vote failed", votes=votes,
                               usage=usage.model_dump())  # fmt: skip
        score = float(statistics.median(v.score for v in verdicts))
        passed = score > 0 and score >= pass_threshold
        # The reason of the vote closest to the median, so the reason matches the score.
        closest = min(verdicts, key=lambda v: abs(v.score - score))
        return JudgeResult(score=round(score, 4), passed=passed, reason=closest.reason, votes=votes,
                           usage=usage.model_dump())  # fmt: skip


def agreement(pairs: list[tuple[bool, bool]]) -> float | None:
    """Share of answers where the rubric's pass and the judge's pass agree (None without pairs)."""
    if not pairs:
        return None
    return round(sum(a == b for a, b in pairs) / len(pairs), 4)


__all__ = ["JudgeResult", "JudgeVerdict", "LLMJudge", "agreement", "judge_task"]
