"""The teaching material: the topic's facts, ordered by difficulty, and the quiz built from them.

Both are deterministic and built before any teaching, from the teacher's knowledge base alone:
the quiz's expected answers come from the facts themselves (a value, or a blanked-out term),
never from a model, so the teaching cannot shape the test and the grading needs no judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel

from moot.memory import KnowledgeBase, StoredFact
from moot.memory.facts import normalise_key
from moot.teams.learning.teach.student import key_terms, numbers_in


class QuizItem(BaseModel):
    """One quiz question, made from one fact before teaching starts."""

    fact_id: int
    question: str
    expected: str
    """Taken from the fact itself (its value, or the blanked-out term), never from a model."""
    key_terms: list[str]


@dataclass(frozen=True)
class PlannedFact:
    fact: StoredFact
    difficulty: float
    question: QuizItem | None


def fact_difficulty(fact: StoredFact, material: list[StoredFact]) -> float:
    """A deterministic difficulty: longer, number-heavy, unstructured, peripheral facts are harder.

    Centrality (other facts about the same entity or concept) lowers it, so the session starts
    with the facts the rest of the topic hangs on — the scaffold the later facts build on.
    """
    words = len(fact.content.split())
    numbers = len(numbers_in(fact.content))
    structured = bool(fact.entity and fact.attribute and fact.value)
    keys = {normalise_key(fact.entity), normalise_key(fact.concept)} - {""}
    central = sum(
        1 for other in material if other.id != fact.id and keys & {normalise_key(other.entity), normalise_key(other.concept)}
    )
    return words / 10 + 0.5 * max(0, numbers - 1) + (0.0 if structured else 1.0) - 0.25 * min(central, 4)


_CLOZE_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?%?")


def question_for(fact: StoredFact) -> QuizItem | None:
    """A question whose expected answer comes from the fact itself.

    Entity/attribute/value facts become "What is the <attribute> of <entity>?" → value;
    others a fill-in-the-blank over their first number, their entity, or their longest word.
    """
    fid = fact.id if fact.id is not None else -1
    value = fact.value.strip()
    if fact.entity and fact.attribute and value and normalise_key(value) not in normalise_key(f"{fact.entity} {fact.attribute}"):
        question = f"What is the {fact.attribute} of {fact.entity}?"
        return QuizItem(fact_id=fid, question=question, expected=value, key_terms=key_terms(value))
    content = fact.content
    term = ""
    number = _CLOZE_NUMBER.search(content)
    if number:
        term = number.group(0)
    elif fact.entity and fact.entity in content and fact.entity != content:
        term = fact.entity
    else:
        words = [w.strip(".,;:!?()\"'") for w in content.split()]
        candidates = [w for w in words if len(w) >= 4 and w.lower() not in {"that", "with", "from", "this", "were", "have"}]
        term = max(candidates, key=len) if candidates else ""
    if not term:
        return None
    blanked = content.replace(term, "____", 1)
    return QuizItem(
        fact_id=fid, question=f"Fill in the blank: {blanked}", expected=term, key_terms=key_terms(term)
    )


def plan_material(kb: KnowledgeBase, topic: str, *, limit: int) -> list[PlannedFact]:
    """The topic's current facts from the teacher's knowledge base, easiest first.

    The facts retrieved for the topic come first, then the other current facts of the same
    sources (in the order those sources were first retrieved): a document found for the topic is
    about it, though many of its sentences never repeat the topic's words (they say "it", or name
    only a part or an event), so retrieval alone left them out of the lesson.
    """
    seen: set[int] = set()
    material: list[StoredFact] = []

    def take(facts: list[StoredFact]) -> None:
        for fact in facts:
            if fact.is_current and fact.id is not None and fact.id not in seen:
                seen.add(fact.id)
                material.append(fact)

    retrieved = kb.retrieve(topic, limit=limit).facts
    take(retrieved)
    for source in dict.fromkeys(f.source for f in retrieved if f.source):
        if len(material) >= limit:
            break
        take(kb.facts(source=source))
    material = material[:limit]
    planned = [PlannedFact(f, fact_difficulty(f, material), question_for(f)) for f in material]
    # Stable: equally hard facts keep the retrieval's relevance order.
    return sorted(planned, key=lambda p: p.difficulty)


def build_quiz(plan: list[PlannedFact], size: int) -> list[QuizItem]:
    """The first ``size`` askable facts in teaching order, one question each, no duplicates."""
    quiz: list[QuizItem] = []
    asked: set[str] = set()
    for p in plan:
        if p.question is not None and p.question.question.lower() not in asked:
            asked.add(p.question.question.lower())
            quiz.append(p.question)
        if len(quiz) >= size:
            break
    return quiz


__all__ = ["PlannedFact", "QuizItem", "build_quiz", "fact_difficulty", "plan_material", "question_for"]
