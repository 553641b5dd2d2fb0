"""`moot eval deliberation`: the debate against one agent, self-consistency at equal calls, and the
majority of the initial answers, on reasoning-gym questions with known answers.

The eval layer knows nothing of teams; this command wires the deliberation protocol in.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

import typer

from moot.cli._output import print_json, stderr, stdout, write_json_file
from moot.errors import MootError


def register(eval_app: typer.Typer) -> None:
    eval_app.command("deliberation")(deliberation_eval)


def deliberation_eval(
    questions: int = typer.Option(6, "--questions", help="How many questions (round-robin over the datasets)."),
    seed: int = typer.Option(1, "--seed", help="reasoning-gym's generator seed."),
    datasets: str = typer.Option("syllogism,family_relationships,basic_arithmetic", "--datasets",
                                 help="reasoning-gym datasets, comma-separated."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Model string (default: $MOOT_MODEL, else the embedded model)."),
    json_out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write every question's rows here (JSON)."),
    as_json: bool = typer.Option(False, "--json", help='Print one JSON object on stdout: {"model", "seed", "questions", "summary", "results"}.'),
) -> None:
    """Score the debate and the baselines a user would try first, at the same model and equal calls."""
    from moot.eval.deliberation import SelfConsistency, SingleAgent, is_correct, majority, make_questions, summarise
    from moot.models.registry import infer_model
    from moot.teams.deliberation.qa import QuestionDebate

    if questions < 1:
        raise MootError("--questions must be at least 1", fix="use --questions 1 or more")
    names = tuple(d.strip() for d in datasets.split(",") if d.strip())
    if not names:
        raise MootError("no datasets given", fix="use --datasets syllogism,family_relationships")
    qs = make_questions(questions, seed, names)
    resolved = infer_model(model)
    debate, single, sc = QuestionDebate(resolved), SingleAgent(resolved), SelfConsistency(resolved)
    rows: list[dict[str, Any]] = []

    def row(system: str, q: Any, answer: str | None, calls: int, tokens: int, seconds: float, **extra: Any) -> dict[str, Any]:
        r = {"system": system, "question": q.id, "dataset": q.dataset, "gold": q.answer, "answer": answer,
             "correct": is_correct(q, answer), "calls": calls, "tokens": tokens, "seconds": round(seconds, 2), **extra}
        rows.append(r)
        return r

    for k, q in enumerate(qs):
        d = asyncio.run(debate.answer(q.question, q.choices, seed=seed * 1000 + k))
        init = majority(d.initial_answers)
        init_ok = is_correct(q, init)
        r = row("debate", q, d.answer or None, d.calls, d.usage.input_tokens + d.usage.output_tokens, d.seconds,
                debated=d.debated, accepted=d.accepted, initial_answers=d.initial_answers, revised_answers=d.revised_answers,
                votes=d.votes, confidence=d.confidence, adjusted_confidence=d.adjusted_confidence,
                consensus_score=d.consensus_score, low_consensus=d.low_consensus, initial_correct=init_ok)
        row("majority-initial", q, init, 0, 0, 0.0, note="the debate's round-1 answers; no calls of its own")
        s = asyncio.run(single.answer(q))
        row("single", q, s.answer, s.calls, s.usage.input_tokens + s.usage.output_tokens, s.seconds)
        c = asyncio.run(sc.answer(q, calls=max(1, d.calls), seed=k))
        row("self-consistency", q, c.answer, c.calls, c.usage.input_tokens + c.usage.output_tokens, c.seconds,
            samples=c.initial_answers)
        stderr.print(f"[dim]{q.id}: gold {q.answer!r} · debate {d.answer!r} ({'debated' if d.debated else 'unanimous'}, "
                     f"{d.calls} calls, {'✓' if r['correct'] else '✗'}) · single {s.answer!r} · "
                     f"self-consistency {c.answer!r} · initial majority {init!r}[/]")
    summary = summarise(rows)
    # the initial majority costs the debate's round-1 calls; say so beside its zero
    summary.setdefault("majority-initial", {})["note"] = "uses the debate's round-1 answers (3 calls a question, counted under debate)"
    model_name = getattr(resolved, "name", str(model))
    if json_out is not None:
        write_json_file(json_out, {"model": model_name, "seed": seed, "datasets": names, "summary": summary, "rows": rows})
    if as_json:
        print_json({"model": model_name, "seed": seed, "questions": len(qs), "summary": summary,
                    "results": str(json_out) if json_out else None})
        return
    _table(summary)
    if json_out is not None:
        stdout.print(f"results: {json_out}")


def _table(summary: dict[str, dict[str, Any]]) -> None:
    from rich.table import Table

    table = Table(title="deliberation eval", show_edge=False)
    table.add_column("system")
    for col in ("accuracy", "calls", "tokens", "seconds"):
        table.add_column(col)
    for name, s in summary.items():
        table.add_row(name, *(str(s.get(c, "")) for c in ("accuracy", "calls", "tokens", "seconds")))
    stdout.print(table)
    d = summary.get("debate")
    if d:
        stdout.print(f"debate: {d['debated']} debated · right→wrong {d['right_to_wrong']} · wrong→right {d['wrong_to_right']} · "
                     f"adjusted confidence right {d['mean_adjusted_confidence_right']} vs wrong {d['mean_adjusted_confidence_wrong']} · "
                     f"error rate flagged {d['error_rate_flagged']} vs unflagged {d['error_rate_unflagged']}")
