"""The deliberation protocol on a question with one right answer (what ``moot eval deliberation`` measures).

Three solvers with different personas answer (round 1, positions). If they agree, that is the
answer: no debate, no more calls. Otherwise their disagreement is a contradiction and goes through
the four rounds: each solver sees the others' answers and reasons without names and revises
(round 2, evidence); the moderator picks one of the answers now on the table (round 3, an enum —
it cannot invent one); each solver votes −2..+2 on the pick (round 4, validation). The votes are
the consensus votes: score = mean vote, adjusted confidence = confidence + score × 10, low-consensus
flag below −0.5 (:mod:`moot.teams.deliberation.consensus`). A pick that most solvers vote against
is unresolved: the answer is then the majority of the revised answers, and it is flagged.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.models.base import ModelSettings, Usage
from moot.runtime import SubAgent, load_prompt
from moot.teams.deliberation.consensus import adjusted_confidence, clamp_pct, consensus_score, is_low_consensus

PERSONAS = ("a careful solver who checks every step", "a solver who works step by step from the facts given",
            "a skeptical solver who looks for the trap in the question")


def normalise(answer: str) -> str:
    return " ".join(str(answer).strip().strip(".").lower().split())


def answer_output(choices: list[str] | None) -> type[BaseModel]:
    kind: Any = Literal[tuple(choices)] if choices else str  # type: ignore[valid-type]
    return create_model("SolverAnswer", reasoning=(str, Field(default="", max_length=200)), answer=(kind, ...),
                        confidence=(int, 50))


def pick_output(candidates: list[str]) -> type[BaseModel]:
    return create_model("ModeratorPick", reasoning=(str, Field(default="", max_length=200)),
                        answer=(Literal[tuple(candidates)], ...))  # type: ignore[valid-type]


class AnswerVote(BaseModel):
    vote: Literal[-2, -1, 0, 1, 2]
    reason: str = Field(default="", max_length=120)


@dataclass
class QuestionDeliberation:
    """What the protocol produced for one question."""

    answer: str
    initial_answers: list[str]
    revised_answers: list[str] = field(default_factory=list)
    debated: bool = False
    accepted: bool = True
    votes: list[int] = field(default_factory=list)
    confidence: float = 0.0
    adjusted_confidence: float = 0.0
    consensus_score: float | None = None
    low_consensus: bool = False
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


class QuestionDebate:
    """Three solvers, a moderator and consensus votes on one question (see the module docstring)."""

    def __init__(self, model: Any, *, solvers: int = 3, temperature: float = 0.7, max_tokens: int = 160) -> None:
        self.model, self.solvers, self.temperature, self.max_tokens = model, solvers, temperature, max_tokens

    def _settings(self, k: int, max_tokens: int | None = None) -> ModelSettings:
        return ModelSettings(max_tokens=max_tokens or self.max_tokens, temperature=self.temperature, seed=1000 + k)

    async def answer(self, question: str, choices: list[str] | None = None, seed: int = 0) -> QuestionDeliberation:
        started = time.perf_counter()
        usage = Usage()
        failures: list[str] = []
        personas = [PERSONAS[k % len(PERSONAS)] for k in range(self.solvers)]

        async def call(agent: SubAgent, task: str) -> Any:
            nonlocal usage
            result = await agent.run(task)
            usage = usage + result.usage
            if not result.ok:
                failures.append(f"{agent.name}: {result.detail or result.stop_reason}")
                return None
            return result.output

        # round 1: positions
        first = await asyncio.gather(*(call(SubAgent(f"solver{k + 1}", "answers the question",
                                                     load_prompt("answerer", __package__).replace("{persona}", p), model=self.model,
                                                     output_type=answer_output(choices), max_turns=2,
                                                     settings=self._settings(seed * 10 + k)), f"Question: {question}")
                                       for k, p in enumerate(personas)))
        answered = [(k, o) for k, o in enumerate(first) if o is not None]
        initial = [str(o.answer).strip() for _, o in answered]
        out = QuestionDeliberation(answer="", initial_answers=initial, failures=failures)
        if not answered:
            out.seconds, out.usage, out.calls = time.perf_counter() - started, usage, usage.requests
            return out
        confidences = {k: clamp_pct(o.confidence) for k, o in answered}
        if len({normalise(a) for a in initial}) == 1:  # unanimous: no debate
            out.answer = initial[0]
            out.confidence = out.adjusted_confidence = clamp_pct(sum(confidences.values()) / len(confidences))
            out.revised_answers = initial
            out.seconds, out.usage, out.calls = time.perf_counter() - started, usage, usage.requests
            return out

        # round 2: each solver sees the others' answers and reasons, unnamed, and revises
        out.debated = True

        def others(k: int) -> str:
            return "\n".join(f"- answer {o.answer!s}: {o.reasoning}" for j, o in answered if j != k)

        revised = await asyncio.gather(*(call(SubAgent(f"solver{k + 1}", "revises its answer",
                                                       load_prompt("reviser", __package__).replace("{persona}", personas[k]), model=self.model,
                                                       output_type=answer_output(choices), max_turns=2,
                                                       settings=self._settings(seed * 10 + k + 5)),
                                              f"Question: {question}\n\nYour answer: {o.answer} ({o.reasoning})\n\n"
                                              f"Other answers:\n{others(k)}")
                                         for k, o in answered))
        final = [(k, r if r is not None else o) for (k, o), r in zip(answered, revised)]
        out.revised_answers = [str(o.answer).strip() for _, o in final]
        for k, o in final:
            confidences[k] = clamp_pct(o.confidence)
        groups: dict[str, str] = {}
        for a in out.revised_answers:
            groups.setdefault(normalise(a), a)
        candidates = list(groups.values())
        majority = Counter(normalise(a) for a in out.revised_answers).most_common(1)[0][0]

        # round 3: the moderator picks one of the answers on the table
        if len(candidates) > 1:
            arguments = "\n".join(f"- answer {o.answer!s}: {o.reasoning}" for _, o in final)
            pick = await call(SubAgent("moderator", "picks the best-argued answer", load_prompt("picker", __package__), model=self.model,
                                       output_type=pick_output(candidates), max_turns=2,
                                       settings=ModelSettings(max_tokens=self.max_tokens, temperature=0.0)),
                              f"Question: {question}\n\nAnswers and arguments:\n{arguments}")
            chosen = str(pick.answer) if pick is not None else groups[majority]
        else:
            chosen = candidates[0]

        # round 4: validation, the solvers' votes on the pick
        votes = await asyncio.gather(*(call(SubAgent(f"solver{k + 1}", "votes on the final answer",
                                                     load_prompt("answer_voter", __package__).replace("{persona}", personas[k]),
                                                     model=self.model, output_type=AnswerVote, max_turns=2,
                                                     settings=ModelSettings(max_tokens=80, temperature=0.0)),
                                            f"Question: {question}\n\nYour answer: {o.answer}\nThe moderator's final answer: {chosen}")
                                       for k, o in final))
        out.votes = [v.vote for v in votes if v is not None]
        score = consensus_score(out.votes)
        backers = [confidences[k] for k, o in final if normalise(str(o.answer)) == normalise(chosen)]
        base = sum(backers) / len(backers) if backers else sum(confidences.values()) / len(confidences) / 2
        out.accepted = sum(1 for v in out.votes if v < 0) * 2 <= len(out.votes)
        out.answer = chosen if out.accepted else groups[majority]
        out.confidence = clamp_pct(base)
        out.consensus_score = score
        out.adjusted_confidence = adjusted_confidence(base, score)
        out.low_consensus = is_low_consensus(score) or not out.accepted
        out.seconds, out.usage, out.calls = time.perf_counter() - started, usage, usage.requests
        return out


__all__ = ["AnswerVote", "PERSONAS", "QuestionDebate", "QuestionDeliberation", "answer_output", "normalise"]
