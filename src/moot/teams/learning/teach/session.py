"""A teaching session: the TeachingAgent teaches a separate student agent, then both take a quiz.

The learning design's TeachingAgent (scaffolding in the zone of proximal development, self-explanation
prompts, a student model, adaptive difficulty) and its teaching evaluation, built for a small model:

* **material** — the teacher retrieves the topic's facts from its knowledge base and orders
  them by a deterministic difficulty (short, structured, central facts first);
* **quiz first** — the quiz is built from those facts *before* any teaching (question,
  expected value taken from the fact itself), so teaching cannot shape the test;
* **rounds** — each round the teacher model explains the next facts (as many as the student's
  level, 1–3, but never so few that the material cannot all be taught in the rounds left) and
  asks a check question; the student writes notes into its own, initially
  empty, knowledge base and answers from those notes with a self-explanation. The answer is
  graded in Python; a correct one raises the level (harder, more facts), a wrong one lowers it
  and the same fact is re-explained with scaffolding once; after each round Python checks the
  student's notes hold what was taught, and the teacher dictates a fact they missed;
* **quiz** — the student answers from its notes, the teacher from its knowledge base (or a
  ``teacher_answer`` hook); one rubric grades both; the effectiveness ratio is student score /
  teacher score.

The model writes prose and questions; every decision (which facts, which level, right or
wrong, what the student knows) is bookkeeping in Python, because a 0.5B model is unreliable
at it. Every model call runs through :class:`SubAgent` on one budget and one event bus, and
the session is recorded as a run, so ``moot runs show ID`` shows it.
"""

from __future__ import annotations

import asyncio
import math
import re
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from moot.errors import ConfigError, MootError
from moot.memory import KnowledgeBase, StoredFact
from moot.memory.facts import normalise_key
from moot.models.base import Model, ModelSettings, Usage
from moot.runtime import AgentResult, Budget, EventBus, Run, RunStore, SubAgent, load_prompt
from moot.teams.learning.teach.curriculum import PlannedFact, QuizItem, build_quiz, fact_difficulty, plan_material, question_for
from moot.teams.learning.teach.student import (
    CHECK_SETTINGS,
    NOTES_SETTINGS,
    QUIZ_SETTINGS,
    SELF_EXPLANATION_PROMPT,
    CheckAnswer,
    QuizAnswer,
    StudentMemory,
    StudentModel,
    StudentNotes,
    answer_task,
    degenerate,
    grade_answer,
    held_to_notes,
    key_terms,
    missing_numbers,
    notes_task,
    numbers_in,
)

MAX_FACTS_PER_ROUND = 3
"""New facts one round teaches at most: the student writes up to four notes a round."""
TEACHER_SETTINGS = ModelSettings(max_tokens=260, temperature=0)
"""Room for both fields at their schema's length limits (500 + 200 characters) plus the JSON."""
TeacherAnswerHook = Callable[[str], Awaitable[str]]


# --------------------------------------------------------------------------- report


class QuizResult(QuizItem):
    student_answer: str = ""
    teacher_answer: str = ""
    student_correct: bool = False
    teacher_correct: bool = False


class TeachingRound(BaseModel):
    """One teacher turn and the student's response to it."""

    number: int
    mode: Literal["teach", "reexplain", "review"]
    difficulty: int
    """The student's level when this round was taught (1–3)."""
    facts_covered: list[int]
    explanation: str
    """What the student was told: the teacher's grounded sentences, then any fact they left out."""
    dropped_sentences: list[str] = Field(default_factory=list)
    """Sentences of the teacher model that went beyond the facts (invented numbers or content), not said."""
    check_question: str
    check_fact_id: int
    expected: str
    student_notes: list[str] = Field(default_factory=list)
    dropped_notes: list[str] = Field(default_factory=list)
    """Notes the student wrote that the teacher's words do not support (not stored)."""
    dictated: list[str] = Field(default_factory=list)
    """Facts of the round the student's own notes missed, dictated by the teacher (also in ``student_notes``)."""
    student_answer: str = ""
    student_own_words: str = ""
    correct: bool = False
    verdict: str = ""
    grade_detail: str = ""


class TeachingReport(BaseModel):
    """Everything a teaching session did and how well the student learned."""

    topic: str
    status: Literal["completed", "stopped", "failed", "cancelled"]
    stop_reason: str
    rounds: list[TeachingRound]
    student_model: StudentModel
    quiz: list[QuizResult]
    student_score: float
    """Share of quiz questions the student got right, 0–1."""
    teacher_score: float
    effectiveness_ratio: float | None
    """student_score / teacher_score; ``None`` when the teacher scored 0 (see ``ratio_note``)."""
    ratio_note: str
    student_notes: list[str]
    """Everything the student wrote into its own knowledge base."""
    material_fact_ids: list[int]
    usage: Usage
    seconds: float
    run_id: str


@dataclass(frozen=True)
class TeachingProgress:
    """What a live display needs after each step."""

    phase: Literal["material", "round", "quiz", "done"]
    message: str
    round: TeachingRound | None = None
    quiz: QuizResult | None = None


class TeacherTurn(BaseModel):
    """The teacher model's structured turn (which facts it covers is decided in Python)."""

    explanation: str = Field(max_length=500, description="2-4 short sentences for the student")
    check_question: str = Field(max_length=200, description="one short question to check understanding")


# --------------------------------------------------------------------------- the session


def default_budget(rounds: int, quiz_size: int, *, teacher_quiz: bool) -> Budget:
    """Room for every planned call (3 per round, 1–2 per quiz question) plus one retry per round."""
    return Budget(max_calls=rounds * 3 + quiz_size * (2 if teacher_quiz else 1) + max(2, rounds))


def _teacher_task(
    topic: str, mode: str, level: int, facts: list[StoredFact], expected: str, last: TeachingRound | None, known: list[str]
) -> str:
    lines = [f"Topic: {topic}", f"Student level: {level} of 3."]
    if known:  # scaffolding: new facts are anchored on what the student has shown it knows
        lines.append("The student already knows: " + " ".join(known[-2:]))
    if mode == "reexplain" and last is not None:
        lines.append(
            f"The student answered your question \"{last.check_question}\" with \"{last.student_answer or 'nothing'}\", "
            f"but the right answer is \"{expected}\". Re-explain this fact in a different way: not as you said it "
            f"before (\"{last.explanation[:200]}\"), but with a simple comparison or an example, then the value itself."
        )
    elif mode == "review":
        lines.append("Review this fact the student has not mastered yet, in a new way.")
    elif last is not None and last.correct:
        lines.append("The student answered the last check correctly. Build on it.")
    lines.append("Facts to teach:")
    lines.extend(f"- {f.content}" for f in facts)
    lines.append(f'Write the explanation, then one check question whose answer is "{expected}".')
    return "\n".join(lines)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def tidy_explanation(text: str) -> str:
    """The explanation without repeated sentences and without a cut-off last sentence.

    Small models at temperature 0 can loop on one sentence until the length limit, ending
    mid-number ("…had 61"); the student would write that down as a fact, so it is dropped.
    """
    sentences = _sentences(text)
    if len(sentences) > 1 and not sentences[-1].endswith((".", "!", "?")):
        sentences.pop()
    kept: list[str] = []
    seen: set[str] = set()
    for sentence in sentences:
        key = normalise_key(sentence.rstrip(".!?"))
        if key not in seen:
            seen.add(key)
            kept.append(sentence)
    return " ".join(kept)


def _grounded(sentence: str, numbers: list[float], vocabulary: set[str]) -> bool:
    """Every number of ``sentence`` is in the material, and at least half its content words are."""
    terms = key_terms(sentence)
    return bool(terms) and not missing_numbers(numbers_in(sentence), numbers) and sum(t in vocabulary for t in terms) * 2 >= len(terms)


def ground_explanation(explanation: str, facts: Sequence[str], *, known: Sequence[str] = (),
                       topic: str = "") -> tuple[str, list[str]]:
    """The explanation the student hears, and the teacher's sentences left out of it.

    Given three facts about a tide mill, the 0.5B teacher added "a private company that
    produces sand and gravel" and a 160,000 square-foot millpond; the student noted them as
    truth, and the quiz measured the fabrication rather than the teaching. So a sentence is
    kept only when every number in it is in the material (the round's facts, what the student
    already knows, the topic) and at least half its content words are; then any fact the kept
    sentences do not carry (its numbers and half its key terms) is said as it stands.
    """
    material = " ".join([*facts, *known, topic])
    numbers, vocabulary = numbers_in(material), set(key_terms(material))
    kept: list[str] = []
    dropped: list[str] = []
    for sentence in _sentences(explanation):
        (kept if _grounded(sentence, numbers, vocabulary) else dropped).append(sentence)
    said = " ".join(kept)
    said_numbers, said_terms = numbers_in(said), set(key_terms(said))
    for fact in facts:
        terms = key_terms(fact)
        if missing_numbers(numbers_in(fact), said_numbers) or sum(t in said_terms for t in terms) * 2 < len(terms):
            kept.append(fact if fact.rstrip().endswith((".", "!", "?")) else f"{fact.rstrip()}.")
    return " ".join(kept), dropped


_LIST_MARKER = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*\u2022])\s+")


def ground_notes(notes: Sequence[str], heard: str) -> tuple[list[str], list[str]]:
    """The student's notes that what it heard supports, and those it made up.

    Asked for up to four notes on one taught fact, the 0.5B student filled the list: "3
    hectares is the area of a square meter", "1 hectare is approximately 0.4377 square meters".
    A note is kept by the same rule as the teacher's sentences, against the teacher's words.
    A list marker the student numbered its notes with ("1. Each hour…") is not part of the
    note: its number is in nothing the teacher said, and it used to cost a correct note.
    """
    numbers, vocabulary = numbers_in(heard), set(key_terms(heard))
    cleaned = [_LIST_MARKER.sub("", n, count=1) for n in notes]
    kept = [n for n in cleaned if _grounded(n, numbers, vocabulary)]
    return kept, [n for n in cleaned if n not in kept]


def notes_hold(fact: str, notes: Sequence[str]) -> bool:
    """Whether one of ``notes`` holds ``fact``: all its numbers and at least half its key terms.

    The teacher's look at the student's notebook after a round, in Python: a fact the notes do
    not hold cannot be answered from them in the quiz, whatever the check question showed. The
    grounding rule, turned round: the fact must be grounded in one note."""
    return any(_grounded(fact, numbers_in(note), set(key_terms(note))) for note in notes)


def _usable_check(question: str, expected: str) -> bool:
    """A check question the student could not answer by copying it: non-empty, answer not inside."""
    q = " ".join(question.split()).lower()
    if len(q) < 8 or ("?" not in q and not q.startswith(("what", "how", "who", "when", "where", "which", "why", "fill"))):
        return False
    wanted = numbers_in(expected)
    if wanted:
        return not set(wanted) <= set(numbers_in(q))
    return expected.strip().lower() not in q


async def run_teaching_session(
    kb: KnowledgeBase,
    topic: str,
    *,
    model: Model | str | None = None,
    student_model: Model | str | None = None,
    rounds: int = 4,
    quiz_size: int = 5,
    budget: Budget | None = None,
    bus: EventBus | None = None,
    store: RunStore | None = None,
    progress: Callable[[TeachingProgress], None] | None = None,
    teacher_answer: TeacherAnswerHook | None = None,
    student_kb: str | Path | None = None,
    max_material: int = 24,
) -> TeachingReport:
    """Teach ``topic`` from ``kb`` to a student that starts empty, then quiz both and compare.

    ``model`` is the teacher's model, ``student_model`` the student's (default: the same).
    ``teacher_answer`` lets a caller answer the quiz for the teacher (e.g. ``LearningTeam.ask``);
    otherwise the teacher answers from ``kb.retrieve`` with one short model call. ``student_kb``
    keeps the student's knowledge base at that (new or empty) path; by default it is a
    temporary file removed afterwards (its notes stay in the report). Raises
    :class:`MootError` when the knowledge base has nothing on the topic; model failures and
    budget stops end the session early with partial results and a readable ``stop_reason``.
    """
    if rounds < 1 or quiz_size < 1:
        raise ConfigError("a teaching session needs at least 1 round and 1 quiz question", fix="pass rounds>=1 and quiz_size>=1")
    started = time.perf_counter()
    notify = progress or (lambda _update: None)
    plan = plan_material(kb, topic, limit=max(max_material, quiz_size))
    quiz_items = build_quiz(plan, quiz_size)
    if not plan or not quiz_items:
        raise MootError(
            f"the knowledge base {kb.path} has no facts about {topic!r} to teach",
            fix="learn content about it first with `moot learn FILE --kb NAME`, or try other words for the topic",
        )
    notify(TeachingProgress("material", f"{len(plan)} facts on {topic!r}; quiz of {len(quiz_items)} questions built"))

    owned: list[Model] = []

    def resolve(spec: Model | str | None) -> Model:
        if isinstance(spec, Model):
            return spec
        from moot.models.registry import infer_model

        built = infer_model(spec)
        owned.append(built)
        return built

    teacher_llm = resolve(model)  # a bad model string fails here, before anything is created
    student_llm = teacher_llm if student_model is None else resolve(student_model)
    tmp = tempfile.TemporaryDirectory(prefix="moot-student-") if student_kb is None else None
    try:
        memory = StudentMemory.open(Path(tmp.name) / "student.sqlite3" if tmp else Path(student_kb), topic)  # type: ignore[arg-type]
    except BaseException:
        if tmp is not None:
            tmp.cleanup()
        for built in owned:
            await built.aclose()
        raise
    teacher_prompt, student_prompt = load_prompt("teacher", "moot.teams.learning"), load_prompt("student", "moot.teams.learning")

    def teacher(output_type: Any, settings: ModelSettings) -> SubAgent:
        return SubAgent("teacher", "TeachingAgent", teacher_prompt, model=teacher_llm, output_type=output_type,
                        max_turns=2, settings=settings)  # fmt: skip

    def student(output_type: Any, settings: ModelSettings) -> SubAgent:
        return SubAgent("student", "student", student_prompt, model=student_llm, output_type=output_type,
                        max_turns=2, settings=settings)  # fmt: skip

    session = Run(
        f"teach: {topic}", budget or default_budget(rounds, len(quiz_items), teacher_quiz=teacher_answer is None), bus, store
    )
    student_state = StudentModel()
    taught: list[TeachingRound] = []
    quiz: list[QuizResult] = []
    session.start()
    status, reason = "completed", ""
    try:
        reason = await _teach(session, plan, topic, rounds, teacher, student, memory, student_state, taught, notify)
        notify(TeachingProgress("quiz", f"quiz: {len(quiz_items)} questions for the student and the teacher"))
        for n, item in enumerate(quiz_items, 1):
            result = await _quiz_one(session, n, item, kb, memory, teacher, student, teacher_answer)
            quiz.append(result)
            notify(TeachingProgress("quiz", f"question {n}: {item.question}", quiz=result))
        if session.stopped:
            status, reason = "stopped", f"stopped: {session.tracker.run_stop.message}"  # type: ignore[union-attr]
        elif session.failures:
            status, reason = "failed", f"{len(session.failures)} step(s) failed; first: {session.failures[0]}"
    except asyncio.CancelledError:
        await session.finish("cancelled", "the session was cancelled; partial results kept")
        raise
    except BaseException:
        await session.finish("failed", "the session crashed inside moot")
        raise
    finally:
        memory.close()
        if tmp is not None:
            tmp.cleanup()
        for built in owned:
            await built.aclose()
    await session.finish(status, reason)

    student_score = _score(q.student_correct for q in quiz)
    teacher_score = _score(q.teacher_correct for q in quiz)
    if teacher_score > 0:
        ratio: float | None = round(student_score / teacher_score, 4)
        note = f"the student scored {student_score:.0%} and the teacher {teacher_score:.0%}: ratio {ratio:.2f}"
    else:
        ratio = None
        note = "the teacher scored 0 on its own quiz, so the ratio is undefined (the quiz or the teacher's answers failed, not the teaching)"
    report = TeachingReport(
        topic=topic, status=status, stop_reason=reason, rounds=taught, student_model=student_state, quiz=quiz,  # type: ignore[arg-type]
        student_score=student_score, teacher_score=teacher_score, effectiveness_ratio=ratio, ratio_note=note,
        student_notes=list(memory.notes), material_fact_ids=[p.fact.id for p in plan if p.fact.id is not None],
        usage=session.usage, seconds=round(time.perf_counter() - started, 3), run_id=session.run_id,
    )  # fmt: skip
    notify(TeachingProgress("done", note))
    return report


def _score(flags: Any) -> float:
    values = list(flags)
    return round(sum(values) / len(values), 4) if values else 0.0


async def _teach(
    session: Run,
    plan: list[PlannedFact],
    topic: str,
    rounds: int,
    teacher: Callable[[Any, ModelSettings], SubAgent],
    student: Callable[[Any, ModelSettings], SubAgent],
    memory: StudentMemory,
    state: StudentModel,
    taught: list[TeachingRound],
    notify: Callable[[TeachingProgress], None],
) -> str:
    """The rounds; returns why teaching ended. Difficulty and re-explanation are decided here."""
    queue = [p for p in plan if p.question is not None] + [p for p in plan if p.question is None]
    by_id = {p.fact.id: p for p in plan}
    reexplained: set[int] = set()
    reviewed: set[int] = set()
    pending: int | None = None  # a fact to re-explain after a wrong answer
    for number in range(1, rounds + 1):
        last = taught[-1] if taught else None
        left = rounds - number + 1
        if pending is not None and len(queue) > MAX_FACTS_PER_ROUND * (left - 1):
            pending = None  # the syllabus first: re-explaining now would leave facts never taught (a gap, reviewed later)
        if pending is not None:
            mode, chosen = "reexplain", [by_id[pending]]
            reexplained.add(pending)
            pending = None
        elif queue:
            # Pacing: the student's level sets how many new facts a round teaches, but never so few
            # that the material cannot all be taught in the rounds left (the restoration's cost, last
            # in the queue, was never taught in nine runs of eight rounds).
            size = min(MAX_FACTS_PER_ROUND, max(state.level, math.ceil(len(queue) / left)))
            mode, chosen = "teach", queue[:size]
            del queue[:size]
        elif gaps := [by_id[f] for f in state.gap_fact_ids if f in by_id and f not in reviewed]:
            mode, chosen = "review", gaps[:1]
            reviewed.add(gaps[0].fact.id)  # type: ignore[arg-type]
        else:
            return f"all {len(plan)} facts taught, noted and shown known after {number - 1} rounds"
        # Check the hardest askable fact of the round: a correct answer there earns the next level.
        askable = [p for p in chosen if p.question is not None]
        target = askable[-1] if askable else chosen[-1]
        check_item = target.question or QuizItem(
            fact_id=target.fact.id or -1, question=f"What did you learn about {topic}?", expected=target.fact.content,
            key_terms=key_terms(target.fact.content),
        )  # fmt: skip
        facts = [p.fact for p in chosen]
        level = state.level
        state.level_history.append(level)
        outcome = await session.step(
            f"teach-{number}", teacher(TeacherTurn, TEACHER_SETTINGS),
            _teacher_task(topic, mode, level, facts, check_item.expected, last,
                          [by_id[f].fact.content for f in state.known_fact_ids if f in by_id]),
        )  # fmt: skip
        if outcome is None or not outcome.ok:
            return _ended("the teacher", number, outcome)
        turn: TeacherTurn = outcome.output
        explanation, dropped = ground_explanation(
            tidy_explanation(turn.explanation) or turn.explanation, [f.content for f in facts], topic=topic,
            known=[by_id[f].fact.content for f in state.known_fact_ids if f in by_id],
        )  # fmt: skip
        question = turn.check_question if _usable_check(turn.check_question, check_item.expected) else check_item.question
        record = TeachingRound(
            number=number, mode=mode, difficulty=level, facts_covered=[f.id for f in facts if f.id is not None],  # type: ignore[arg-type]
            explanation=explanation, dropped_sentences=dropped, check_question=question, check_fact_id=check_item.fact_id,
            expected=check_item.expected,
        )  # fmt: skip
        taught.append(record)
        notes = await session.step(f"notes-{number}", student(StudentNotes, NOTES_SETTINGS), notes_task(explanation))
        if notes is None or not notes.ok:
            return _ended("the student's notes", number, notes)
        grounded, record.dropped_notes = ground_notes(notes.output.notes, explanation)
        if mode in ("reexplain", "review"):
            # The second way: besides the new explanation, the teacher dictates the fact itself, so
            # the student's notes hold it word for word (the first time, its own note missed it).
            grounded = [*(f.content for f in facts), *grounded]
        record.student_notes = memory.add_notes(grounded, round=number)
        # The notebook check: the quiz is answered from the notes alone, so a fact just taught that
        # no note holds (its numbers and half its key terms) is dictated now, without a model call.
        # The student's one merged note per round once dropped two of the facts it was taught.
        missed = [f for f in facts if not notes_hold(f.content, memory.notes)]
        if missed:
            record.dictated = memory.add_notes([f.content for f in missed], round=number)
            record.student_notes += record.dictated
            state.dictated_fact_ids += [f.id for f in missed if f.id is not None and f.id not in state.dictated_fact_ids]
        answer = await session.step(
            f"check-{number}", student(CheckAnswer, CHECK_SETTINGS),
            answer_task(question, memory.recall(question), self_explain=True),
        )  # fmt: skip
        if answer is None or not answer.ok:
            return _ended("the student's check answer", number, answer)
        reply: CheckAnswer = answer.output
        grade = grade_answer(reply.answer, check_item.expected)
        record.student_answer, record.student_own_words = reply.answer, reply.own_words
        record.correct, record.verdict, record.grade_detail = grade.correct, grade.verdict, grade.detail
        state.record_check(
            fact_id=check_item.fact_id, round=number, question=question, expected=check_item.expected,
            answer=reply.answer, grade=grade,
        )  # fmt: skip
        if not grade.correct and check_item.fact_id not in reexplained and check_item.fact_id in by_id:
            pending = check_item.fact_id
        notify(TeachingProgress("round", f"round {number} ({mode}, level {level}): {grade.verdict}", round=record))
    return f"{rounds} rounds taught"


def _ended(who: str, number: int, outcome: AgentResult | None) -> str:
    if outcome is None:
        return f"teaching ended in round {number}: the budget was used up"
    return f"teaching ended in round {number}: {who} failed ({outcome.detail or outcome.stop_reason})"


async def _quiz_one(
    session: Run,
    n: int,
    item: QuizItem,
    kb: KnowledgeBase,
    memory: StudentMemory,
    teacher: Callable[[Any, ModelSettings], SubAgent],
    student: Callable[[Any, ModelSettings], SubAgent],
    teacher_answer: TeacherAnswerHook | None,
) -> QuizResult:
    """One question for both: the student from its notes, the teacher from its knowledge base."""
    result = QuizResult(**item.model_dump())
    notes = memory.recall(item.question)
    said = await session.step(
        f"quiz-{n}-student", student(QuizAnswer, QUIZ_SETTINGS), answer_task(item.question, notes, self_explain=False)
    )
    if said is not None and said.ok and degenerate(said.output.answer, notes, item.question):
        said = await session.step(  # once: "json" is no answer
            f"quiz-{n}-student-again", student(QuizAnswer, QUIZ_SETTINGS),
            answer_task(item.question, notes, self_explain=False, insist=True),
        ) or said
    if said is not None and said.ok:
        result.student_answer, _ = held_to_notes(said.output.answer, notes, item.question)
    if teacher_answer is not None:
        try:
            result.teacher_answer = await teacher_answer(item.question)
        except MootError as exc:  # the caller's answerer failed: a wrong answer, not a crash
            session.failures.append(f"quiz-{n}-teacher: {exc.one_line()}")
    else:
        facts = [f.content for f in kb.retrieve(item.question, limit=5).facts]
        shown = "\n".join(f"- {c}" for c in facts) or "(no facts)"
        own = await session.step(
            f"quiz-{n}-teacher", teacher(QuizAnswer, QUIZ_SETTINGS),
            f"Your facts:\n{shown}\n\nQuiz question: {item.question}\nAnswer from your facts only, in a few words.",
        )  # fmt: skip
        if own is not None and own.ok:
            result.teacher_answer = own.output.answer
    result.student_correct = grade_answer(result.student_answer, item.expected).correct
    result.teacher_correct = grade_answer(result.teacher_answer, item.expected).correct
    return result


__all__ = [
    "SELF_EXPLANATION_PROMPT",
    "PlannedFact",
    "QuizItem",
    "QuizResult",
    "TeacherAnswerHook",
    "TeacherTurn",
    "TeachingProgress",
    "TeachingReport",
    "TeachingRound",
    "build_quiz",
    "default_budget",
    "fact_difficulty",
    "ground_explanation",
    "ground_notes",
    "plan_material",
    "question_for",
    "run_teaching_session",
    "tidy_explanation",
]
