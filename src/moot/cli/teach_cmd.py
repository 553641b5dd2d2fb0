"""`moot teach "TOPIC" --kb NAME_OR_FILE`: a teaching session with a quiz and an effectiveness ratio.

The teacher teaches from the knowledge base a person filled with `moot learn`; a separate
student starts empty. Rounds appear as they finish (they take seconds each on the embedded
model), then tables of the rounds and the quiz, the scores and the ratio.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from moot.cli._options import budget_option, model_option, parse_budget, parse_models
from moot.cli._output import exit_for_status, print_json, stderr, stdout, usage_dict, usage_line
from moot.errors import MootError, UsageError

ROLES = ("teacher", "student")


def register(app: typer.Typer) -> None:
    app.command("teach")(teach)


def teach(
    topic: str = typer.Argument(..., help="What to teach, in a few words (searched in the knowledge base)."),
    kb: str = typer.Option(..., "--kb", help="The knowledge base: a name (from `moot learn`) or a file path."),
    rounds: int = typer.Option(4, "--rounds", min=1, max=20, help="Teaching rounds (one teacher turn each)."),
    quiz: int = typer.Option(5, "--quiz", "-q", min=1, max=30, help="Quiz questions, built from the facts before teaching."),
    model: Optional[list[str]] = model_option(
        "Model string for both agents (default: $MOOT_MODEL, else the embedded model); "
        "teacher=MODEL or student=MODEL sets one agent's model (repeatable)."),
    budget: str = budget_option(help="The session's limits: standard (room for every planned call: 3 a round, 1-2 a quiz "
                                     "question, a retry a round), quick (half), deep (double), and/or calls=N, tokens=N, usd=X, seconds=X."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole report as one JSON object (usage included)."),
) -> None:
    """Teach a topic from a knowledge base to a student agent that starts empty, then quiz both.

    Reports what the student showed it knows, its misconceptions, and the effectiveness ratio
    (student quiz score / teacher quiz score).
    """
    from moot.memory import KnowledgeBase
    from moot.memory.store import resolve_path
    from moot.runtime import RunStore
    from moot.runtime import Budget
    from moot.teams.learning.teach.session import TeachingProgress, default_budget, run_teaching_session

    choice = parse_models(model)
    if unknown := sorted(set(choice.roles) - set(ROLES)):
        raise UsageError(f"unknown role {unknown[0]!r} for `moot teach`", fix="use --model teacher=MODEL or student=MODEL")
    teacher_model = choice.roles.get("teacher", choice.default)
    student_model = choice.roles.get("student")
    wanted = parse_budget(budget)
    session_budget = None
    if wanted.preset != "standard" or wanted.limits():
        planned = default_budget(rounds, quiz, teacher_quiz=True)
        session_budget = Budget(**wanted.scaled({"max_calls": planned.max_calls, "max_tokens": None,
                                                 "max_cost_usd": None, "deadline_s": None}))
    path = resolve_path(kb)
    if not path.is_file():
        raise MootError(
            f"no knowledge base at {path}",
            fix=f"learn some content first with `moot learn FILE --kb {kb}`, or pass --kb an existing name or file",
        )
    knowledge = KnowledgeBase.open(path)
    if knowledge.count() == 0:
        knowledge.close()
        raise MootError(f"the knowledge base {path} is empty", fix=f"learn some content first with `moot learn FILE --kb {kb}`")

    def show(update: TeachingProgress) -> None:
        if update.round is not None:
            r = update.round
            mark = Text("✓", style="green") if r.correct else Text("✗", style="red")
            line = Text(f"round {r.number} · {r.mode} · level {r.difficulty} · {len(r.facts_covered)} fact(s) ")
            line.append(mark)
            line.append(f"  Q: {r.check_question}  A: {r.student_answer or '-'}", style="dim")
            stderr.print(line)
        elif update.quiz is not None:
            q = update.quiz
            stderr.print(
                Text(f"quiz: {q.question}  student {'✓' if q.student_correct else '✗'}  teacher {'✓' if q.teacher_correct else '✗'}", style="dim")
            )
        else:
            stderr.print(Text(update.message, style="dim"))

    async def session() -> Any:
        with RunStore() as store:
            if as_json:
                return await run_teaching_session(knowledge, topic, model=teacher_model, student_model=student_model,
                                                  rounds=rounds, quiz_size=quiz, store=store, budget=session_budget)
            with stderr.status(f"teaching {topic!r}…"):
                return await run_teaching_session(
                    knowledge, topic, model=teacher_model, student_model=student_model, rounds=rounds, quiz_size=quiz,
                    store=store, progress=show, budget=session_budget,
                )

    try:
        report = asyncio.run(session())
    finally:
        knowledge.close()
    if as_json:
        payload = report.model_dump(mode="json")
        payload["usage"] = usage_dict(report.usage)
        print_json(payload)
        exit_for_status(report.status)
        return
    for renderable in render_report(report):
        stdout.print(renderable)
    exit_for_status(report.status)


def render_report(report: Any) -> list[Any]:
    """Tables for the rounds and the quiz, the student model, the scores and the ratio."""
    rounds = Table(title=f"teaching {report.topic!r}", title_justify="left")
    for column in ("#", "mode", "level", "facts", "check question", "student answer", ""):
        rounds.add_column(column, overflow="fold")
    for r in report.rounds:
        rounds.add_row(
            str(r.number), r.mode, str(r.difficulty), ", ".join(f"#{f}" for f in r.facts_covered),
            r.check_question, r.student_answer or "-",
            Text("✓", style="green") if r.correct else Text("✗" if r.verdict == "wrong" else "?", style="red"),
        )  # fmt: skip
    quiz = Table(title="quiz", title_justify="left")
    for column in ("question", "expected", "student", "", "teacher", ""):
        quiz.add_column(column, overflow="fold")
    for q in report.quiz:
        quiz.add_row(
            q.question, q.expected, q.student_answer or "-", _tick(q.student_correct), q.teacher_answer or "-", _tick(q.teacher_correct)
        )
    sm = report.student_model
    model_line = Text(
        f"student model: level {sm.level}/3 · shows it knows {len(sm.known_fact_ids)} fact(s) · "
        f"gaps {len(sm.gap_fact_ids)} · dictated {len(sm.dictated_fact_ids)} · misconceptions {len(sm.misconceptions)} "
        f"({sum(m.resolved for m in sm.misconceptions)} resolved) · checks {sm.checks_correct}/{sm.checks_total}"
    )
    ratio = "undefined" if report.effectiveness_ratio is None else f"{report.effectiveness_ratio:.2f}"
    scores = Text()
    scores.append(f"student {report.student_score:.0%} · teacher {report.teacher_score:.0%} · ", style="bold")
    scores.append(f"effectiveness ratio {ratio}", style="bold green" if report.effectiveness_ratio else "bold yellow")
    parts: list[Any] = [rounds, quiz, model_line]
    for m in sm.misconceptions:
        parts.append(Text(f"  misconception (round {m.round}): {m.question} → {m.student_answer!r}, expected {m.expected!r}"
                          f"{' (resolved)' if m.resolved else ''}", style="dim"))  # fmt: skip
    parts.append(scores)
    parts.append(Text(report.ratio_note, style="dim"))
    if report.status != "completed":
        parts.append(Text(f"{report.status}: {report.stop_reason}", style="yellow"))
    parts.append(Text(f"{usage_line(report.usage, report.seconds)} · run {report.run_id[:12]} (moot runs show {report.run_id[:8]})", style="dim"))
    return parts


def _tick(ok: bool) -> Text:
    return Text("✓", style="green") if ok else Text("✗", style="red")


__all__ = ["register", "render_report", "teach"]
