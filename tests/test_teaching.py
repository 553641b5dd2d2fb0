"""Teaching sessions with test models: isolation, adaptive difficulty, the student model, the quiz."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from moot.errors import MootError
from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.runtime import Budget, RunStore
from moot.teams.learning.teach.student import grade_answer
from moot.teams.learning.teach.session import TeachingProgress, build_quiz, plan_material, run_teaching_session

TOPIC = "Marrow River Cleanup"
FACTS = [
    Fact("The Marrow River Cleanup had 610 volunteers.", entity=TOPIC, attribute="number of volunteers", value="610", concept="river cleanup"),
    Fact("The Marrow River Cleanup had a budget of 2.4 million euros.", entity=TOPIC, attribute="budget", value="2.4 million euros", concept="river cleanup"),
    Fact("The Marrow River Cleanup removed 38 tonnes of waste from the river in nine days.", entity=TOPIC, attribute="waste removed", value="38 tonnes", concept="river cleanup"),
    Fact("The Marrow River Cleanup started in the town of Lindau.", entity=TOPIC, attribute="starting town", value="Lindau", concept="river cleanup"),
    Fact("Volunteers of the Marrow River Cleanup pulled 112 shopping carts out of the water near the old mill bridge.", entity=TOPIC, attribute="shopping carts found", value="112", concept="river cleanup"),
]  # fmt: skip


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    base = KnowledgeBase.open(tmp_path / "teacher.sqlite3")
    base.add_facts(FACTS)
    yield base
    base.close()


def _last_user(request: ModelRequest) -> str:
    return str(request.messages[-1].content)


def _system(request: ModelRequest) -> str:
    return str(request.messages[0].content)


def _block(text: str, header: str) -> list[str]:
    """The ``- item`` lines under ``header`` in a prompt."""
    after = text.split(header, 1)[1] if header in text else ""
    return [line[2:] for line in after.splitlines()[1:] if line.startswith("- ")]


def _best_line(question: str, lines: list[str]) -> str:
    """The line sharing most words with the question (entity words aside): a diligent answerer."""
    ignore = set(TOPIC.lower().split()) | {"what", "is", "was", "the", "of", "in", "a", "had", "as", "i", "explained"}

    def words(text: str) -> set[str]:
        return {w.rstrip("s") for w in re.findall(r"[a-z]+", text.lower())} - ignore

    wanted = words(question)
    scored = sorted(lines, key=lambda line: (-len(words(line) & wanted), len(line)))
    return scored[0] if scored and words(scored[0]) & wanted else "I don't know"


class Classroom:
    """A FunctionModel pair: a teacher that repeats the facts it is given, and a student whose
    check answers follow a script (``None``: answer from its notes)."""

    def __init__(self, check_answers: list[str | None] | None = None, teacher_quiz: Callable[[str], str] | None = None) -> None:
        self.check_answers = list(check_answers or [])
        self.teacher_quiz = teacher_quiz
        self.teacher = FunctionModel(self._teacher, name="teacher-fn")
        self.student = FunctionModel(self._student, name="student-fn")
        self.both = FunctionModel(
            lambda r: self._student(r) if _system(r).startswith("You are a student") else self._teacher(r), name="both-fn"
        )
        """One model for both agents, as the CLI runs them."""
        self.teacher_said: list[str] = []

    def _teacher(self, request: ModelRequest) -> Any:
        task = _last_user(request)
        assert request.output is not None
        if request.output.name == "TeacherTurn":
            facts = _block(task, "Facts to teach:")
            explanation = " ".join(facts)
            self.teacher_said.append(explanation)
            expected = task.rsplit('whose answer is "', 1)[1].split('"', 1)[0]
            attribute = next(f.attribute for f in FACTS if f.value == expected)
            return {"explanation": explanation, "check_question": f"As I explained, what was the {attribute} of the cleanup?"}
        facts = _block(task, "Your facts:")
        question = task.split("Quiz question: ", 1)[1].split("\n", 1)[0]
        return {"answer": self.teacher_quiz(question) if self.teacher_quiz else _best_line(question, facts)}

    def _student(self, request: ModelRequest) -> Any:
        task = _last_user(request)
        name = request.output.name if request.output else ""
        if name == "StudentNotes":
            said = task.split("Your teacher said:\n", 1)[1].split("\n\nWrite your notes", 1)[0]
            return {"notes": [s for s in re.split(r"(?<=\.)\s+", said) if s.strip()]}
        notes = _block(task, "Your notes:")
        question = task.split("Question: ", 1)[1].split("\n", 1)[0]
        if name == "CheckAnswer":
            scripted = self.check_answers.pop(0) if self.check_answers else None
            answer = _best_line(question, notes) if scripted is None else scripted
            return {"answer": answer, "own_words": "because the teacher said so"}
        return {"answer": _best_line(question, notes)}


async def test_the_student_starts_empty_and_learns_only_what_the_teacher_said(kb: KnowledgeBase, tmp_path: Path) -> None:
    room = Classroom()
    student_file = tmp_path / "student.sqlite3"
    report = await run_teaching_session(  # one round of at most three facts leaves two of the five untaught
        kb, TOPIC, model=room.teacher, student_model=room.student, rounds=1, quiz_size=5, student_kb=student_file
    )
    said = " ".join(room.teacher_said)
    taught = [f for f in FACTS if f.content in said]
    untaught = [f for f in FACTS if f.content not in said]
    assert taught and untaught, "the session must leave some facts untaught for this test to mean something"
    student_prompts = "\n".join(str(m.content) for r in room.student.requests for m in r.messages)
    for fact in untaught:
        assert fact.content not in student_prompts
        assert fact.value not in student_prompts
    # Its knowledge base holds only its notes, and every note came from the teacher's words.
    with KnowledgeBase.open(student_file) as own:
        notes = [f.content for f in own.facts()]
    assert notes and sorted(notes) == sorted(report.student_notes)
    assert all(note in said for note in notes)
    # The quiz shows it: right on what was taught, wrong on the rest; the teacher knows it all.
    by_fact = {q.expected: q.student_correct for q in report.quiz}
    assert all(by_fact[f.value] for f in taught if f.value in by_fact)
    assert not any(by_fact[f.value] for f in untaught if f.value in by_fact)
    assert report.teacher_score == 1.0
    assert report.student_score == pytest.approx(len(taught) / 5)
    assert report.effectiveness_ratio == pytest.approx(report.student_score)


async def test_a_student_kb_that_is_not_empty_is_refused(kb: KnowledgeBase, tmp_path: Path) -> None:
    used = tmp_path / "used.sqlite3"
    with KnowledgeBase.open(used) as other:
        other.add_fact(Fact("The cleanup had 610 volunteers."))
    room = Classroom()
    with pytest.raises(MootError, match="not empty"):
        await run_teaching_session(kb, TOPIC, model=room.teacher, student_model=room.student, student_kb=used)


async def test_difficulty_rises_after_a_correct_answer_and_a_wrong_one_is_re_explained(kb: KnowledgeBase) -> None:
    # round 1 right → level 2 (two new facts); round 2 wrong → level 1, the same fact re-explained;
    # round 3 right → level 2 again.
    # Eight rounds for five facts: the pace never forces more facts than the level gives.
    room = Classroom(check_answers=[None, "It had 999 of them", None, None])
    report = await run_teaching_session(kb, TOPIC, model=room.teacher, student_model=room.student, rounds=8, quiz_size=2)
    modes = [(r.mode, r.difficulty, len(r.facts_covered)) for r in report.rounds]
    assert modes == [("teach", 1, 1), ("teach", 2, 2), ("reexplain", 1, 1), ("teach", 2, 2)]
    assert [r.correct for r in report.rounds] == [True, False, True, True]
    second, third = report.rounds[1], report.rounds[2]
    assert third.facts_covered == [second.check_fact_id]
    reexplain_prompt = _last_user(room.teacher.requests[2])
    assert "It had 999 of them" in reexplain_prompt and "in a different way" in reexplain_prompt
    assert second.explanation[:40] in reexplain_prompt  # told what it said before, so it says it otherwise
    assert report.student_model.level_history == [1, 2, 1, 2]
    assert report.student_model.level == 3


async def test_a_fact_re_taught_is_dictated_into_the_notes_the_student_failed_to_write(kb: KnowledgeBase) -> None:
    class Forgetful(Classroom):
        def _student(self, request: ModelRequest) -> Any:
            if request.output is not None and request.output.name == "StudentNotes":
                return {"notes": []}  # the student writes nothing down
            return super()._student(request)

    room = Forgetful(check_answers=["It had 999 of them"])
    report = await run_teaching_session(kb, TOPIC, model=room.teacher, student_model=room.student, rounds=4, quiz_size=1)
    first, second = report.rounds[:2]
    fact = next(f.content for f in kb.facts() if f.id == first.check_fact_id)
    # Nothing of its own: the notebook check dictates the round's facts, the fact among them.
    assert first.student_notes == first.dictated and fact in first.dictated
    assert second.mode == "reexplain" and second.facts_covered == [first.check_fact_id]
    assert report.student_notes.count(fact) == 1  # the re-explanation dictates it too, not twice


async def test_the_quiz_counts_only_what_the_student_notes_hold(kb: KnowledgeBase) -> None:
    from moot.teams.learning.teach.student import NOT_IN_NOTES, held_to_notes

    notes = ["The Marrow River Cleanup had 610 volunteers."]
    assert held_to_notes("610 volunteers", notes, "How many volunteers?") == ("610 volunteers", [])
    assert held_to_notes("880 volunteers", notes, "How many volunteers?") == (NOT_IN_NOTES, ["880"])
    assert held_to_notes("Mayor Ostby led it", notes, "Who led it?")[0] == NOT_IN_NOTES


async def test_misconceptions_are_recorded_and_gaps_are_not(kb: KnowledgeBase) -> None:
    room = Classroom(check_answers=["It had 999 of them", None, "I don't know"])
    report = await run_teaching_session(kb, TOPIC, model=room.teacher, student_model=room.student, rounds=3, quiz_size=1)
    r1, r2, r3 = report.rounds
    assert [(r.mode, r.verdict) for r in report.rounds] == [("teach", "wrong"), ("reexplain", "correct"), ("teach", "dont_know")]
    model = report.student_model
    # The contradicting answer is a misconception, resolved once the re-explained fact is
    # answered correctly; "I don't know" is a gap, not a misconception.
    assert [(m.student_answer, m.expected, m.resolved) for m in model.misconceptions] == [("It had 999 of them", r1.expected, True)]
    assert r1.check_fact_id in model.known_fact_ids
    assert model.gap_fact_ids == [r3.check_fact_id]
    assert (model.checks_correct, model.checks_total) == (1, 3)


def test_the_rubric_compares_numbers_numerically_and_key_terms_by_stem() -> None:
    assert grade_answer("twelve", "12").correct
    assert grade_answer("about 1,200 people", "1200").correct
    assert grade_answer("2.4 million", "2.4 million euros").correct
    assert not grade_answer("2.5 million euros", "2.4 million euros").correct
    assert grade_answer("the town of lindau", "Lindau").correct
    assert grade_answer("plastic bottles", "plastic bottle and cans").correct
    assert grade_answer("", "12").verdict == "dont_know"
    assert grade_answer("I do not know", "Lindau").verdict == "dont_know"
    assert grade_answer("Berlin", "Lindau").verdict == "wrong"


def test_the_quiz_is_built_from_the_facts_before_teaching(kb: KnowledgeBase) -> None:
    plan = plan_material(kb, TOPIC, limit=12)
    quiz = build_quiz(plan, 3)
    values = {f.value for f in FACTS}
    assert len(quiz) == 3
    for item in quiz:
        assert item.expected in values
        assert item.expected not in item.question
    # Short, structured facts come first; the long, number-heavy ones last.
    assert plan[0].fact.value == "610"
    assert {p.fact.value for p in plan[-2:]} == {"112", "38 tonnes"}


async def test_the_ratio_is_undefined_when_the_teacher_scores_zero(kb: KnowledgeBase) -> None:
    room = Classroom()

    async def clueless(question: str) -> str:
        return "I don't know"

    report = await run_teaching_session(
        kb, TOPIC, model=room.teacher, student_model=room.student, rounds=1, quiz_size=2, teacher_answer=clueless
    )
    assert report.teacher_score == 0.0
    assert report.effectiveness_ratio is None
    assert "undefined" in report.ratio_note
    # The hook replaced the teacher's own quiz calls.
    assert not any(r.output and r.output.name == "QuizAnswer" for r in room.teacher.requests)


async def test_the_session_is_recorded_as_a_run(kb: KnowledgeBase, tmp_path: Path) -> None:
    from moot.cli.runs_cmd import render_timeline

    room = Classroom()
    updates: list[TeachingProgress] = []
    with RunStore(tmp_path / "runs.sqlite3") as store:
        report = await run_teaching_session(
            kb, TOPIC, model=room.teacher, student_model=room.student, rounds=2, quiz_size=2, store=store,
            progress=updates.append,
        )  # fmt: skip
        record = store.get_run(report.run_id)
        events = store.events(report.run_id)
    assert record.status == "completed" and record.name == f"teach: {TOPIC}"
    tasks = {e.task_id for e in events if e.task_id}
    assert {"teach-1", "notes-1", "check-1", "teach-2", "quiz-1-student", "quiz-1-teacher"} <= tasks
    assert set(record.usage_by_agent) == {"teacher", "student"}
    assert record.usage.requests == report.usage.requests == 2 * 3 + 2 * 2
    assert render_timeline(record, events)
    assert [u.phase for u in updates][0] == "material" and updates[-1].phase == "done"
    assert [u.round.number for u in updates if u.round] == [1, 2]


async def test_a_small_budget_stops_the_session_with_partial_results(kb: KnowledgeBase) -> None:
    room = Classroom()
    report = await run_teaching_session(
        kb, TOPIC, model=room.teacher, student_model=room.student, rounds=4, quiz_size=2, budget=Budget(max_calls=4)
    )
    assert report.status == "stopped"
    assert "4 model calls" in report.stop_reason
    assert len(report.rounds) == 2 and report.usage.requests == 4
    assert report.student_notes  # what was learned before the stop is kept


async def test_a_topic_the_kb_knows_nothing_about_is_a_plain_error(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "empty.sqlite3") as empty, pytest.raises(MootError) as info:
        await run_teaching_session(empty, "volcanoes", model=Classroom().teacher)
    assert "moot learn" in info.value.one_line()


# --------------------------------------------------------------------------- the CLI


def _cli() -> typer.Typer:
    from moot.cli import teach_cmd

    app = typer.Typer()
    teach_cmd.register(app)

    @app.callback()
    def _root() -> None:  # keep `teach` a subcommand, as in the real app
        pass

    return app


def test_cli_names_moot_learn_when_the_kb_is_missing(tmp_path: Path) -> None:
    result = CliRunner().invoke(_cli(), ["teach", TOPIC, "--kb", str(tmp_path / "nowhere.sqlite3")])
    assert result.exit_code != 0
    assert isinstance(result.exception, MootError)
    assert "moot learn" in result.exception.one_line()
    assert not (tmp_path / "nowhere.sqlite3").exists()


def test_cli_json_prints_the_report(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    room = Classroom()
    monkeypatch.setattr("moot.models.registry.infer_model", lambda spec=None, **_: room.both)
    result = CliRunner().invoke(_cli(), ["teach", TOPIC, "--kb", str(kb.path), "--rounds", "1", "--quiz", "2", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert payload["topic"] == TOPIC
    assert len(payload["rounds"]) == 1 and len(payload["quiz"]) == 2
    assert payload["teacher_score"] == 1.0 and 0.0 <= payload["student_score"] <= 1.0
    assert payload["usage"]["requests"] == 3 + 2 * 2
    assert re.fullmatch(r"[0-9a-f]{32}", payload["run_id"])


def test_cli_shows_rounds_quiz_and_ratio(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    room = Classroom()
    monkeypatch.setattr("moot.models.registry.infer_model", lambda spec=None, **_: room.both)
    result = CliRunner().invoke(_cli(), ["teach", TOPIC, "--kb", str(kb.path), "--rounds", "2", "--quiz", "2"])
    assert result.exit_code == 0, result.output
    assert "quiz" in result.stdout and "effectiveness ratio" in result.stdout
    assert "student model: level" in result.stdout and "volunteers" in result.stdout
    assert "round 1 · teach · level 1" in result.stderr  # the live display


def test_a_looping_explanation_is_tidied_before_the_student_hears_it() -> None:
    from moot.teams.learning.teach.session import tidy_explanation

    looped = "It had 610 volunteers. It had 610 volunteers. That is a lot! It had 610 volunteers. It had 61"
    assert tidy_explanation(looped) == "It had 610 volunteers. That is a lot!"


def test_invented_sentences_are_dropped_and_the_facts_said_instead() -> None:
    from moot.teams.learning.teach.session import ground_explanation

    # What the 0.5B teacher said in the L7 eval when given the mill's pond and owner facts.
    facts = ["The millpond of the Sorrel Bay tide mill covers 3 hectares.",
             "The Sorrel Bay Heritage Trust owns the Sorrel Bay tide mill."]
    invented = ("The Sorrel Bay Heritage Trust, located in the Sorrel Bay Heritage District, is a private company that "
                "produces a variety of natural resources. It is primarily known for its production of sand, gravel, and "
                "other organic materials. The millpond covers a total of 3 hectares, which means it is about 160,000 square feet.")
    said, dropped = ground_explanation(invented, facts, topic="The Sorrel Bay tide mill")
    assert len(dropped) == 3
    assert "sand" not in said and "160,000" not in said and "private company" not in said
    assert all(fact in said for fact in facts)
    # A faithful explanation is kept as it is, with nothing added.
    faithful = "The millpond of the tide mill covers 3 hectares. The Sorrel Bay Heritage Trust owns the mill."
    assert ground_explanation(faithful, facts, topic="The Sorrel Bay tide mill") == (faithful, [])
    # An echo of the instructions teaches nothing: the facts are said instead.
    said, dropped = ground_explanation("one check question", facts[:1])
    assert dropped == ["one check question"] and said == facts[0]


async def test_a_teacher_that_invents_does_not_teach_the_invention(kb: KnowledgeBase) -> None:
    room = Classroom()
    inventing = FunctionModel(
        lambda r: ({**(out := room._teacher(r)), "explanation": out["explanation"] + " It also had 75 boats from Hamburg."}
                   if r.output is not None and r.output.name == "TeacherTurn" else room._teacher(r)),
        name="inventing-teacher",
    )
    report = await run_teaching_session(kb, TOPIC, model=inventing, student_model=room.student, rounds=2, quiz_size=2)
    assert all(r.dropped_sentences == ["It also had 75 boats from Hamburg."] for r in report.rounds)
    assert not any("Hamburg" in r.explanation or "75" in r.explanation for r in report.rounds)
    assert report.student_notes and not any("Hamburg" in n for n in report.student_notes)
    student_prompts = "\n".join(str(m.content) for r in room.student.requests for m in r.messages)
    assert "Hamburg" not in student_prompts


def test_notes_the_teacher_did_not_support_are_not_stored() -> None:
    from moot.teams.learning.teach.session import ground_notes

    heard = "The millpond of the Sorrel Bay tide mill covers 3 hectares."
    # What the 0.5B student wrote after hearing just that (full L7 run, 2026-11-24).
    notes = ["The millpond covers 3 hectares", "3 hectares is the area of a square meter",
             "1 hectare is approximately 0.4377 square meters", "It is located in a country called France."]
    kept, dropped = ground_notes(notes, heard)
    assert kept == ["The millpond covers 3 hectares"] and dropped == notes[1:]


async def test_an_inventing_student_keeps_only_what_it_was_told(kb: KnowledgeBase, tmp_path: Path) -> None:
    room = Classroom()
    inventing = FunctionModel(
        lambda r: ({"notes": [*room._student(r)["notes"], "Lindau is the capital of Bavaria with 75,000 people."]}
                   if r.output is not None and r.output.name == "StudentNotes" else room._student(r)),
        name="inventing-student",
    )
    student_file = tmp_path / "student.sqlite3"
    report = await run_teaching_session(kb, TOPIC, model=room.teacher, student_model=inventing, rounds=2, quiz_size=2,
                                        student_kb=student_file)
    assert all(r.dropped_notes == ["Lindau is the capital of Bavaria with 75,000 people."] for r in report.rounds)
    assert report.student_notes and not any("Bavaria" in n for n in report.student_notes)
    with KnowledgeBase.open(student_file) as own:
        assert not any("Bavaria" in f.content for f in own.facts())


async def test_the_pace_teaches_all_the_material_in_the_rounds_given(kb: KnowledgeBase) -> None:
    # Level 1 would teach one fact a round and leave three of five untaught in two rounds; the pace
    # (the facts left over the rounds left, at most three a round) teaches them all.
    room = Classroom()
    report = await run_teaching_session(kb, TOPIC, model=room.teacher, student_model=room.student, rounds=2, quiz_size=5)
    assert [len(r.facts_covered) for r in report.rounds] == [3, 2]
    assert sorted(f for r in report.rounds for f in r.facts_covered) == sorted(f.id for f in kb.facts())
    assert report.student_score == 1.0


async def test_a_wrong_answer_is_not_re_explained_when_that_would_leave_facts_untaught(kb: KnowledgeBase) -> None:
    room = Classroom(check_answers=["It had 999 of them"])
    report = await run_teaching_session(kb, TOPIC, model=room.teacher, student_model=room.student, rounds=2, quiz_size=1)
    first, second = report.rounds
    assert (first.mode, first.correct, second.mode) == ("teach", False, "teach")  # the last two facts, not the re-explanation
    assert first.check_fact_id in report.student_model.gap_fact_ids


async def test_a_fact_the_notes_do_not_hold_is_dictated_after_the_notebook_check(kb: KnowledgeBase) -> None:
    class Skipping(Classroom):
        def _student(self, request: ModelRequest) -> Any:
            reply = super()._student(request)
            if request.output is not None and request.output.name == "StudentNotes":
                reply["notes"] = [n for n in reply["notes"] if "budget" not in n]  # never writes the budget down
            return reply

    room = Skipping()
    report = await run_teaching_session(kb, TOPIC, model=room.teacher, student_model=room.student, rounds=2, quiz_size=5)
    budget = next(f for f in kb.facts() if "budget" in f.content)
    (taught_in,) = [r for r in report.rounds if budget.id in r.facts_covered]
    assert taught_in.dictated == [budget.content] and budget.content in taught_in.student_notes
    assert report.student_model.dictated_fact_ids == [budget.id]
    others = [r for r in report.rounds if r is not taught_in]
    assert all(r.dictated == [] for r in others)  # what the student noted itself is not dictated again
    assert report.student_notes.count(budget.content) == 1
    assert report.student_score == 1.0  # the quiz's budget question is answered from the dictated note


def test_numbered_notes_keep_their_content() -> None:
    from moot.teams.learning.teach.session import ground_notes, notes_hold

    heard = "Each hour of grinding makes 150 kilograms of flour. It stands on a stone dam across a small creek."
    kept, dropped = ground_notes(["1. Each hour of grinding makes 150 kilograms of flour.", "2) It stands on a stone dam."], heard)
    assert kept == ["Each hour of grinding makes 150 kilograms of flour.", "It stands on a stone dam."] and dropped == []
    assert notes_hold("Each hour of grinding makes 150 kilograms of flour.", kept)
    assert not notes_hold("The restoration costing 420,000 crowns was completed in 2021.", kept)
