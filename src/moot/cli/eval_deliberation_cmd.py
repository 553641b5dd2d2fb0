"""`moot eval deliberation`: the debate against one agent, self-consistency at equal calls, and the
majority of the initial answers, on reasoning-gym questions with known answers.

The eval layer knows nothing of teams; this command wires the deliberation protocol in.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

import typer

from moot.cli._output import print_json, stdout, write_json_file
from moot.cli._progress import announce, progress_line
from moot.errors import MootError, UsageError


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
    scenarios: Optional[int] = typer.Option(None, "--scenarios", help="Instead of the questions: this many seeded decision "
                                            "scenarios (data folders with a gold decision; 30 is the full set)."),
    budget: Optional[str] = typer.Option(None, "--budget", "-b", help="With --scenarios: the team's size, as in "
                                         "`moot deliberate --budget`: quick, standard (default) or deep."),
    mode: Optional[str] = typer.Option(None, "--mode", hidden=True, help="The older spelling of --budget."),
    keep: Optional[Path] = typer.Option(None, "--keep", help="With --scenarios: write the scenario folders here and keep them."),
    suite: Optional[Path] = typer.Option(None, "--suite", help="Instead of seeded scenarios: a folder of scenarios written "
                                         "elsewhere (scenarios.json and one data folder each; see docs/eval.md)."),
    team_only: bool = typer.Option(False, "--team-only", help="With --scenarios or --suite: run the team alone, without "
                                   "the baselines (when only the team changed, an earlier run's baseline rows still stand)."),
) -> None:
    """Score the deliberation team and the baselines a user would try first, at the same model and equal calls.

    With --scenarios: decision accuracy, grounding of every number and calls, against one call with all the data
    in the prompt and self-consistency at the team's calls. Without: the reasoning-gym questions."""
    announce("eval deliberation")
    if suite is not None and scenarios is not None:
        raise UsageError("--suite and --scenarios both choose the scenarios", fix="pass one of them")
    if scenarios is not None or suite is not None:
        from moot.cli._options import parse_budget
        from moot.cli.deliberate_cmd import _size

        if budget is not None and not all(p.strip() in ("quick", "standard", "deep") for p in budget.split(",") if p.strip()):
            raise UsageError("the scenario eval takes a size only", fix="use --budget quick, standard or deep")
        _scenarios(scenarios or 0, seed, model, _size(parse_budget(budget) if budget else None, mode), keep, json_out, as_json,
                   suite, team_only)
        return
    if team_only:
        raise UsageError("--team-only is for the decision scenarios", fix="add --suite FOLDER or --scenarios N")
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
        progress_line("eval deliberation", f"{q.id}: gold {q.answer!r} · debate {d.answer!r} ({'debated' if d.debated else 'unanimous'}, "
                                           f"{d.calls} calls, {'✓' if r['correct'] else '✗'}) · single {s.answer!r} · "
                                           f"self-consistency {c.answer!r} · initial majority {init!r}")
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


def _scenarios(n: int, seed: int, model: Optional[str], mode: str, keep: Optional[Path], json_out: Optional[Path],
               as_json: bool, suite: Optional[Path] = None, team_only: bool = False) -> None:
    import tempfile

    from moot.eval.deliberation_scenarios import (
        allowed_numbers,
        grade_plan,
        load_suite,
        make_scenarios,
        one_call,
        summarise,
        ungrounded,
    )
    from moot.models.registry import infer_model
    from moot.teams.deliberation import DeliberationTeam
    from moot.teams.deliberation.consensus import mode as get_mode

    if suite is None and n < 1:
        raise MootError("--scenarios must be at least 1", fix="use --scenarios 30 (the full set) or fewer for a quick look")
    get_mode(mode)
    listed = load_suite(suite) if suite is not None else None
    resolved = infer_model(model)
    model_name = getattr(resolved, "name", str(model))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="moot-scenarios-") as tmp:
        root = keep if keep is not None else Path(tmp)
        chosen = listed if listed is not None else make_scenarios(n, root, seed)
        n = len(chosen)
        for k, sc in enumerate(chosen):
            allowed = allowed_numbers(sc)
            team = DeliberationTeam(sc.folder, model=resolved, mode=mode)
            result = team.deliberate_sync(sc.request, now=sc.now)
            got = grade_plan(sc, result.decision.plan) if result.decision else None
            calls = result.usage.requests
            rows.append({"system": f"team ({mode})", "scenario": sc.id, "gold": sc.gold, "decision": got, "correct": got == sc.gold,
                         "calls": calls, "seconds": result.seconds, "ungrounded": ungrounded(result.answer, allowed),
                         "answer": result.answer, "debates": len(result.debates), "conflicts": len(result.conflicts)})
            for system, samples in () if team_only else (("one call", 1), ("self-consistency", max(1, calls))):
                b = asyncio.run(one_call(resolved, sc, samples=samples, seed=seed * 1000 + k))
                rows.append({"system": system, "scenario": sc.id, "gold": sc.gold, "decision": b.decision,
                             "correct": b.decision == sc.gold, "calls": b.calls, "seconds": round(b.seconds, 2),
                             "ungrounded": ungrounded(b.answer, allowed), "answer": b.answer, "samples": b.samples})
            shown = " · ".join(f"{r['system']} {r['decision']}{'✓' if r['correct'] else '✗'}" for r in rows if r["scenario"] == sc.id)
            progress_line("eval deliberation", f"{sc.id}: gold {sc.gold} · {shown}")
            if json_out is not None:  # after every scenario: a long run stopped half-way keeps what it measured
                write_json_file(json_out, {"model": model_name, "seed": seed, "mode": mode, "suite": str(suite) if suite else None,
                                           "done": k + 1, "of": n,
                                           "summary": summarise(rows), "rows": rows})
    summary = summarise(rows)
    if as_json:
        print_json({"model": model_name, "seed": seed, "mode": mode, "scenarios": n, "summary": summary,
                    "results": str(json_out) if json_out else None})
        return
    from rich.table import Table

    table = Table(title=f"deliberation scenarios ({n}, {f'suite {suite}' if suite else f'seed {seed}'})", show_edge=False)
    for col in ("system", "accuracy", "grounded", "calls", "seconds", "by gold"):
        table.add_column(col)
    for name, s in summary.items():
        table.add_row(name, str(s["accuracy"]), str(s["grounded"]), str(s["calls"]), str(s["seconds"]),
                      ", ".join(f"{g} {v}" for g, v in s["by_gold"].items()))
    stdout.print(table)


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
