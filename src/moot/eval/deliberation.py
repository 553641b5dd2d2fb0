"""The deliberation benchmark: questions with known answers from ``reasoning-gym``'s seeded
generators (each dataset scores its own answers), and the baselines a user would try first.

Systems compared at the same model, per question:

- ``single`` — one agent, one call;
- ``self-consistency`` — as many independent samples as the debate used calls on that question,
  majority answer (equal compute);
- ``majority-initial`` — the majority of the debate's round-1 answers alone (no extra calls: it
  shows how much of the result is the vote rather than the talk);
- ``debate`` — the deliberation protocol, wired in by the CLI (this module imports no team).

Reported: accuracy, calls, tokens, seconds, right→wrong and wrong→right flips between the
initial majority and the debate's answer, and whether the adjusted confidence and the
low-consensus flag predict errors. Questions never appear in any prompt file.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, create_model

from moot.errors import MootError
from moot.models.base import ModelSettings, Usage

DEFAULT_DATASETS = ("syllogism", "family_relationships", "basic_arithmetic")
CHOICES: dict[str, list[str]] = {"syllogism": ["Yes", "No"]}
"""Datasets whose answer is one of a few words: the answer is constrained to them."""


@dataclass
class Question:
    id: str
    dataset: str
    question: str
    answer: str
    entry: dict[str, Any]
    choices: list[str] | None = None


def _gym() -> Any:
    try:
        import reasoning_gym
    except ImportError:
        raise MootError("the deliberation eval needs the reasoning-gym package",
                        fix="pip install 'moot[eval-deliberation]' (or pip install 'reasoning-gym>=0.1.25,<0.2')") from None
    return reasoning_gym


def make_questions(n: int, seed: int = 1, datasets: tuple[str, ...] = DEFAULT_DATASETS) -> list[Question]:
    """``n`` questions, round-robin over ``datasets``, from reasoning-gym's generators at ``seed``."""
    rg = _gym()
    per = -(-n // len(datasets))
    pools: dict[str, Any] = {}
    for name in datasets:
        try:
            pools[name] = rg.create_dataset(name, size=per, seed=seed)
        except Exception as exc:
            raise MootError(f"reasoning-gym has no usable dataset {name!r} ({exc})", fix="use --datasets " + ",".join(DEFAULT_DATASETS)) from None
    out: list[Question] = []
    for k in range(per):
        for name in datasets:
            if len(out) >= n:
                break
            entry = pools[name][k]
            out.append(Question(id=f"{name}-{seed}-{k}", dataset=name, question=entry["question"], answer=str(entry["answer"]),
                                entry=entry, choices=CHOICES.get(name)))
    return out


def is_correct(q: Question, answer: str | None) -> bool:
    """The dataset's own scorer (full marks only)."""
    if answer is None or not str(answer).strip():
        return False
    rg = _gym()
    scorer = rg.get_score_answer_fn(q.dataset) if hasattr(rg, "get_score_answer_fn") else None
    if scorer is not None:
        return float(scorer(str(answer).strip(), q.entry)) >= 0.999
    return str(answer).strip().lower() == q.answer.strip().lower()


# --------------------------------------------------------------------------- baselines


@dataclass
class Prediction:
    answer: str | None
    calls: int
    usage: Usage
    seconds: float
    initial_answers: list[str] = field(default_factory=list)
    debated: bool = False
    confidence: float | None = None
    adjusted_confidence: float | None = None
    low_consensus: bool = False


class QuestionSystem(Protocol):
    name: str

    async def answer(self, q: Question, *, calls: int | None = None, seed: int = 0) -> Prediction: ...


SINGLE_PROMPT = ("Answer the question. Think briefly, then give the final answer exactly in the form the question asks for. "
                 "confidence: 0 to 100, how sure you are.")


def _output(choices: list[str] | None) -> type[BaseModel]:
    kind: Any = Literal[tuple(choices)] if choices else str  # type: ignore[valid-type]
    return create_model("SolverAnswer", reasoning=(str, Field(default="", max_length=200)), answer=(kind, ...),
                        confidence=(int, 50))


class SingleAgent:
    """One agent, one call (temperature 0)."""

    name = "single"

    def __init__(self, model: Any, max_tokens: int = 160) -> None:
        self.model, self.max_tokens = model, max_tokens

    async def answer(self, q: Question, *, calls: int | None = None, seed: int = 0) -> Prediction:
        from moot.runtime import SubAgent

        started = time.perf_counter()
        agent = SubAgent("single", "answers the question", SINGLE_PROMPT, model=self.model, output_type=_output(q.choices),
                         max_turns=2, settings=ModelSettings(max_tokens=self.max_tokens, temperature=0.0))
        r = await agent.run(f"Question: {q.question}")
        answer = str(r.output.answer) if r.ok else None
        return Prediction(answer=answer, calls=r.usage.requests, usage=r.usage, seconds=time.perf_counter() - started,
                          confidence=float(r.output.confidence) if r.ok else None)


class SelfConsistency:
    """``calls`` independent samples (temperature 0.7, different seeds), majority answer."""

    name = "self-consistency"

    def __init__(self, model: Any, max_tokens: int = 160) -> None:
        self.model, self.max_tokens = model, max_tokens

    async def answer(self, q: Question, *, calls: int | None = None, seed: int = 0) -> Prediction:
        from moot.runtime import SubAgent

        n = max(1, calls or 3)
        started = time.perf_counter()

        async def one(k: int) -> Any:
            agent = SubAgent(f"sample{k + 1}", "answers the question", SINGLE_PROMPT, model=self.model,
                             output_type=_output(q.choices), max_turns=1,
                             settings=ModelSettings(max_tokens=self.max_tokens, temperature=0.7, seed=5000 + seed * 100 + k))
            return await agent.run(f"Question: {q.question}")

        results = await asyncio.gather(*(one(k) for k in range(n)))
        usage = sum((r.usage for r in results), Usage())
        answers = [str(r.output.answer).strip() for r in results if r.ok]
        winner = majority(answers)
        share = (sum(1 for a in answers if _norm(a) == _norm(winner)) / len(answers) * 100) if answers and winner else None
        return Prediction(answer=winner, calls=usage.requests, usage=usage, seconds=time.perf_counter() - started,
                          initial_answers=answers, confidence=share)


def _norm(a: str | None) -> str:
    return " ".join(str(a or "").strip().strip(".").lower().split())


def majority(answers: list[str]) -> str | None:
    """The most common answer (ties: the first given)."""
    if not answers:
        return None
    counts = Counter(_norm(a) for a in answers)
    best = max(counts.values())
    return next(a for a in answers if counts[_norm(a)] == best)


# --------------------------------------------------------------------------- summary


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per system: accuracy, calls, tokens, seconds; for the debate, flips and whether confidence predicts errors."""
    systems: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        systems.setdefault(r["system"], []).append(r)
    out: dict[str, Any] = {}
    for name, rs in systems.items():
        n = len(rs)
        s: dict[str, Any] = {
            "questions": n, "accuracy": round(sum(r["correct"] for r in rs) / n, 3) if n else 0.0,
            "calls": sum(r["calls"] for r in rs), "tokens": sum(r["tokens"] for r in rs),
            "seconds": round(sum(r["seconds"] for r in rs), 1)}
        if name == "debate":
            paired = [r for r in rs if "initial_correct" in r]
            s["debated"] = sum(1 for r in rs if r.get("debated"))
            s["right_to_wrong"] = sum(1 for r in paired if r["initial_correct"] and not r["correct"])
            s["wrong_to_right"] = sum(1 for r in paired if not r["initial_correct"] and r["correct"])
            right = [r["adjusted_confidence"] for r in rs if r["correct"] and r.get("adjusted_confidence") is not None]
            wrong = [r["adjusted_confidence"] for r in rs if not r["correct"] and r.get("adjusted_confidence") is not None]
            s["mean_adjusted_confidence_right"] = round(sum(right) / len(right), 1) if right else None
            s["mean_adjusted_confidence_wrong"] = round(sum(wrong) / len(wrong), 1) if wrong else None
            flagged = [r for r in rs if r.get("low_consensus")]
            unflagged = [r for r in rs if not r.get("low_consensus")]
            s["low_consensus_flagged"] = len(flagged)
            s["error_rate_flagged"] = round(sum(not r["correct"] for r in flagged) / len(flagged), 3) if flagged else None
            s["error_rate_unflagged"] = round(sum(not r["correct"] for r in unflagged) / len(unflagged), 3) if unflagged else None
        out[name] = s
    return out


__all__ = ["DEFAULT_DATASETS", "Prediction", "Question", "QuestionSystem", "SelfConsistency", "SingleAgent", "is_correct",
           "majority", "make_questions", "summarise"]
