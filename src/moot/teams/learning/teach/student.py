"""The student side of a teaching session: the rubric, the student model, the student agent.

The student agent starts with its own *empty* knowledge base and learns only from what the
teacher says: after each teacher turn it writes notes (short facts) into that knowledge base,
and it answers every question from those notes alone. Nothing from the teacher's knowledge
base is ever put in its prompts; the teaching session hands it the teacher's words and nothing
else, which is what makes the quiz a measure of the teaching (the teaching level of the progressive suite).

Grading is deterministic (numbers compared numerically, key terms matched on word stems), so
the same rubric scores the student and the teacher and the effectiveness ratio compares like
with like: a small model grading itself would add noise to exactly the number we report.
"""

from __future__ import annotations

from collections.abc import Sequence

import math
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelSettings

# --------------------------------------------------------------------------- the rubric

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9]+")
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100,
}  # fmt: skip
STOP_WORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the their this to "
    "was were what which who with about into than then there these those also".split()
)
_DONT_KNOW = ("don't know", "dont know", "do not know", "not sure", "no idea", "unknown", "cannot answer",
              "can't answer", "not in my notes", "no notes")  # fmt: skip

Verdict = Literal["correct", "wrong", "dont_know"]


def numbers_in(text: str) -> list[float]:
    """Every number in ``text`` ("1,200" → 1200, "twelve" → 12), for numeric comparison."""
    found = []
    for match in _NUMBER.findall(text):
        try:
            found.append(float(match.replace(",", "")))
        except ValueError:
            continue
    found.extend(float(_NUMBER_WORDS[w]) for w in _WORD.findall(text.lower()) if w in _NUMBER_WORDS)
    return found


def missing_numbers(wanted: list[float], given: list[float]) -> list[float]:
    """The numbers of ``wanted`` that ``given`` lacks, compared numerically (12 = 12.0)."""
    return [n for n in wanted if not any(math.isclose(n, g, rel_tol=1e-9, abs_tol=1e-9) for g in given)]


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith(("xes", "zes", "ches", "shes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def key_terms(expected: str) -> list[str]:
    """The content words of an expected answer (stop words and numbers dropped), stemmed."""
    terms: list[str] = []
    for word in _WORD.findall(expected.lower()):
        if word in STOP_WORDS or word.isdigit() or word in _NUMBER_WORDS:
            continue
        stem = _stem(word)
        if stem not in terms:
            terms.append(stem)
    return terms


class Grade(BaseModel):
    """One answer graded against an expected value."""

    correct: bool
    verdict: Verdict
    """``correct``; ``wrong`` (the answer says something else: a misconception); ``dont_know``."""
    detail: str
    """Why, in a few words (shown in the report)."""


def grade_answer(answer: str, expected: str) -> Grade:
    """Grade ``answer`` against ``expected`` with the same rubric for every answerer.

    Numbers decide when the expected value has any: all of them must appear in the answer,
    compared numerically (``12`` = ``12.0`` = ``twelve``). Otherwise at least half of the
    expected value's key terms (word stems) must appear. Empty or "I don't know" answers are
    ``dont_know`` rather than ``wrong``: a gap is not a misconception.
    """
    text = " ".join((answer or "").split())
    low = text.lower()
    if not text or any(phrase in low for phrase in _DONT_KNOW):
        return Grade(correct=False, verdict="dont_know", detail="no answer")
    wanted = numbers_in(expected)
    if wanted:
        missing = missing_numbers(wanted, numbers_in(text))
        if not missing:
            return Grade(correct=True, verdict="correct", detail="the numbers match")
        shown = ", ".join(f"{n:g}" for n in missing)
        return Grade(correct=False, verdict="wrong", detail=f"expected {shown}")
    terms = key_terms(expected)
    if not terms:  # nothing but stop words: compare whole texts
        ok = expected.strip().lower() in low
        return Grade(correct=ok, verdict="correct" if ok else "wrong", detail="exact match" if ok else "no match")
    stems = {_stem(w) for w in _WORD.findall(low)}
    hits = [t for t in terms if t in stems]
    needed = max(1, math.ceil(len(terms) / 2))
    ok = len(hits) >= needed
    return Grade(
        correct=ok,
        verdict="correct" if ok else "wrong",
        detail=f"{len(hits)} of {len(terms)} key terms",
    )


# --------------------------------------------------------------------------- the student model

MIN_LEVEL = 1
MAX_LEVEL = 3


class Misconception(BaseModel):
    """An answer that contradicted the fact it was about."""

    fact_id: int
    round: int
    question: str
    expected: str
    student_answer: str
    resolved: bool = False
    """Set when a later check on the same fact was answered correctly."""


class StudentModel(BaseModel):
    """What the teacher believes about the student, kept in Python from graded answers.

    A small model is poor at bookkeeping, so the teacher never tracks this itself: every
    check answer is graded deterministically and this record is updated from the grade.
    """

    level: int = MIN_LEVEL
    """Current difficulty, 1–3: how many new facts the next round teaches."""
    known_fact_ids: list[int] = Field(default_factory=list)
    """Facts the student has shown it knows (its last check on them was correct)."""
    gap_fact_ids: list[int] = Field(default_factory=list)
    """Facts checked and not (yet) shown known."""
    dictated_fact_ids: list[int] = Field(default_factory=list)
    """Facts taught that none of the student's own notes held (the notebook check), so the teacher dictated them."""
    misconceptions: list[Misconception] = Field(default_factory=list)
    level_history: list[int] = Field(default_factory=list)
    """The level each round was taught at."""
    checks_correct: int = 0
    checks_total: int = 0

    def record_check(self, *, fact_id: int, round: int, question: str, expected: str, answer: str, grade: Grade) -> None:
        """Update from one graded check answer, and adapt the level (up on success, down on failure)."""
        self.checks_total += 1
        if grade.correct:
            self.checks_correct += 1
            if fact_id in self.gap_fact_ids:
                self.gap_fact_ids.remove(fact_id)
            if fact_id not in self.known_fact_ids:
                self.known_fact_ids.append(fact_id)
            for m in self.misconceptions:
                if m.fact_id == fact_id:
                    m.resolved = True
            self.level = min(MAX_LEVEL, self.level + 1)
            return
        if fact_id in self.known_fact_ids:
            self.known_fact_ids.remove(fact_id)
        if fact_id not in self.gap_fact_ids:
            self.gap_fact_ids.append(fact_id)
        if grade.verdict == "wrong":
            self.misconceptions.append(
                Misconception(fact_id=fact_id, round=round, question=question, expected=expected, student_answer=answer)
            )
        self.level = max(MIN_LEVEL, self.level - 1)


# --------------------------------------------------------------------------- the student agent's I/O

Note = Annotated[str, Field(max_length=200)]


class StudentNotes(BaseModel):
    """The student's notes on one teacher turn."""

    notes: list[Note] = Field(max_length=4, description="short facts, with the exact names and numbers")


class CheckAnswer(BaseModel):
    """The student's answer to a check question, with a self-explanation (Chi 1994)."""

    answer: str = Field(max_length=200, description="the answer in a few words")
    own_words: str = Field(max_length=200, description="why, in your own words, in one sentence")


class QuizAnswer(BaseModel):
    """A short answer to one quiz question."""

    answer: str = Field(max_length=200, description="the answer in a few words")


# Each budget fits its schema at the length limits plus the JSON around them (about 4
# characters a token): a limit below that let the grammar's string run past max_tokens, the
# JSON came back cut ("Unterminated string"), and a full teaching run lost a session to it.
NOTES_SETTINGS = ModelSettings(max_tokens=280, temperature=0)
CHECK_SETTINGS = ModelSettings(max_tokens=160, temperature=0)
QUIZ_SETTINGS = ModelSettings(max_tokens=80, temperature=0)
SELF_EXPLANATION_PROMPT = "Then explain in your own words, in one sentence, why that is the answer."


class StudentMemory:
    """The student's own knowledge base: empty at the start, filled only with its notes."""

    def __init__(self, kb: KnowledgeBase, topic: str) -> None:
        if kb.count() != 0:
            from moot.errors import MootError

            raise MootError(
                f"the student's knowledge base {kb.path} is not empty ({kb.count()} facts)",
                fix="give the student a new file, or leave student_kb unset for a temporary one",
            )
        self.kb = kb
        self.topic = topic
        self.notes: list[str] = []

    @classmethod
    def open(cls, path: str | Path, topic: str) -> StudentMemory:
        return cls(KnowledgeBase.open(Path(path)), topic)

    def add_notes(self, notes: list[str], *, round: int) -> list[str]:
        """Store the non-empty, new notes of one round; returns those stored."""
        fresh = []
        for note in notes[:4]:
            text = " ".join(str(note).split())
            if text and text not in self.notes and text not in fresh:
                fresh.append(text)
        if fresh:
            self.kb.add_facts(
                Fact(text, concept=self.topic, source=f"teacher, round {round}", confidence=0.7) for text in fresh
            )
            self.notes.extend(fresh)
        return fresh

    def recall(self, question: str, limit: int = 8) -> list[str]:
        """The student's notes that bear on ``question`` (its own retrieval, over its own notes)."""
        if self.kb.count() == 0:
            return []
        return [f.content for f in self.kb.retrieve(question, limit=limit).facts]

    def close(self) -> None:
        self.kb.close()


def notes_task(explanation: str) -> str:
    """The student's task after a teacher turn: only the teacher's words go in."""
    return f"Your teacher said:\n{explanation}\n\nWrite your notes: up to 4 short facts from what the teacher said."


def answer_task(question: str, notes: list[str], *, self_explain: bool, insist: bool = False) -> str:
    """The student's task for a question: its own notes and the question, nothing else.

    ``insist`` is the second try after a degenerate answer (:func:`degenerate`)."""
    shown = "\n".join(f"- {n}" for n in notes) if notes else "(no notes yet)"
    task = f"Your notes:\n{shown}\n\nQuestion: {question}\nAnswer from your notes only, in a few words."
    if insist:
        task += " Write the answer itself, in words taken from your notes, or say you don't know."
    return f"{task} {SELF_EXPLANATION_PROMPT}" if self_explain else task


def degenerate(answer: str, notes: Sequence[str], question: str) -> bool:
    """True for an answer that says nothing: no word of three letters or more that its notes or the
    question use, and no "I don't know" (the 0.5B student once answered a quiz question "json")."""
    if UNKNOWN_TEXT.search(answer or ""):
        return False
    known = {w for w in re.findall(r"[a-z]{3,}", " ".join([question, *notes]).lower())}
    said = set(re.findall(r"[a-z]{3,}", (answer or "").lower()))
    return not (said & known) and not re.search(r"\d", answer or "")


__all__ = [
    "CHECK_SETTINGS",
    "MAX_LEVEL",
    "MIN_LEVEL",
    "NOTES_SETTINGS",
    "QUIZ_SETTINGS",
    "SELF_EXPLANATION_PROMPT",
    "CheckAnswer",
    "Grade",
    "Misconception",
    "QuizAnswer",
    "StudentMemory",
    "StudentModel",
    "StudentNotes",
    "Verdict",
    "answer_task",
    "degenerate",
    "grade_answer",
    "key_terms",
    "missing_numbers",
    "notes_task",
    "numbers_in",
]


NOT_IN_NOTES = "I don't know: my notes do not say."
UNKNOWN_TEXT = re.compile(r"\b(?:i (?:do not|don't) know|(?:do|does) not say|not in (?:my|the) notes)\b", re.I)
"""How the student says it does not know (the words :data:`NOT_IN_NOTES` and the quiz prompt use)."""


def held_to_notes(answer: str, notes: Sequence[str], question: str) -> tuple[str, list[str]]:
    """The quiz counts only what the student's own notes hold: an answer that states a number,
    date or name found in none of its notes (nor the question) becomes "I don't know", and the
    offending spans are returned for the record."""
    from moot.teams.learning.ask.checker import Evidence, check
    from moot.teams.learning.ask.drafts import Draft

    if not (answer or "").strip():
        return answer, []
    from moot.text.names import names_in

    verdict = check(Draft(specialist="student", text=answer), Evidence([(text, None) for text in (question, *notes)]))
    held = " ".join((question, *notes)).casefold()
    invented = [name for name, _ in names_in(answer) if name.casefold() not in held]
    if verdict.passed and not invented:
        return answer, []
    return NOT_IN_NOTES, [*(q.split()[0] for q in verdict.ungrounded), *invented]
