"""`moot ask`: answer a question from a knowledge base with the learning team.

A live status line follows the run's events (retrieve, classify, which specialists are
running, synthesize), so a slow local model never looks hung. ``--json`` prints one object
with the answer, the mode used, the sub-agents, the facts used, confidence, usage and run id.
"""

from __future__ import annotations

from typing import Any, Optional

import typer
from rich.markup import escape

from moot.cli._options import budget_option, model_option, parse_budget, parse_models, team_model_kwargs
from moot.cli._progress import RunProgress
from moot.cli._output import print_json, stderr, stdout, usage_line
from moot.errors import UsageError

_PHASE_TEXT = {
    "retrieve": "retrieving facts",
    "classify": "classifying the question",
    "specialists": "planning the specialists",
}


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)


def ask(
    question: str = typer.Argument(..., help="The question."),
    kb: str = typer.Option(..., "--kb", help="Knowledge base: a name (see `moot kb`) or a file path."),
    mode: str = typer.Option(
        "auto", "--mode", help="single (one agent), multi (specialists) or auto (chosen per question)."
    ),
    model: Optional[list[str]] = model_option(),
    budget: str = budget_option(help="The question's limits: quick (4 calls, 15 s), standard (10, 30 s) or deep (20, 60 s), "
                                     "and/or calls=N, tokens=N, usd=X, seconds=X, comma-separated."),
    as_json: bool = typer.Option(
        False, "--json",
        help='Print one JSON object: {"answer", "mode", "sub_agents", "facts_used", "confidence", "usage", "seconds", "run_id", …}.',
    ),
    record_content: bool = typer.Option(
        False, "--record-content", help="Also record prompts and responses in the run store (shown on the run's web page)."
    ),
) -> None:
    """Ask the learning team a question; the answer says which facts and agents it used.

    Exits 1 when no agent could complete an answer (the budget ran out, or the model failed):
    the most relevant facts are still printed.
    """
    from moot.memory.store import resolve_path
    from moot.teams.learning.ask.pipeline import MODES
    from moot.teams.learning.team import LearningTeam

    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}", fix="use --mode auto, single or multi")
    choice = parse_models(model)
    chosen_budget = parse_budget(budget).budget(model=choice.default)
    models = team_model_kwargs(LearningTeam, choice, command="ask")
    path = resolve_path(kb)
    if not path.exists():
        raise UsageError(f"no knowledge base at {path}", fix="learn something first: moot learn FILE --kb NAME")
    progress = RunProgress("ask", enabled=not as_json)
    team = LearningTeam(path, budget=chosen_budget, **models)
    answer = progress.run(lambda: _run(team, question, mode, progress=progress, record_content=record_content))
    if as_json:
        print_json(answer.to_json())
        if not answer.answered:
            raise typer.Exit(1)
        return
    stdout.print(answer.answer, markup=False)  # "[#1]" citations are text, not markup
    stderr.print(f"[dim]{escape(answer.trace.render())}[/]", highlight=False)
    for fact in answer.facts_used:
        where = ", ".join(p for p in (fact.source, fact.source_date or "") if p)
        stderr.print(f"[dim]  #{fact.id} {escape(fact.content)}{escape(f' ({where})') if where else ''}[/]", highlight=False)
    stderr.print(f"[dim]{answer.mode} · {usage_line(answer.usage, answer.seconds)} · "
                 f"moot runs show {answer.run_id[:8]}[/]", highlight=False)
    if not answer.answered:
        stderr.print(f"[yellow]no complete answer[/]: run {answer.run_id[:12]} (fix: pass a larger --budget, e.g. "
                     "--budget deep, or check the model with `moot models -m MODEL`)", highlight=False)
        raise typer.Exit(1)


async def _run(team: Any, question: str, mode: str, *, progress: RunProgress, record_content: bool = False) -> Any:
    from moot.runtime import EventBus

    bus = EventBus(record_content=record_content)
    progress.attach(bus)
    try:
        return await team.ask(question, mode=mode, bus=bus, on_phase=lambda p: progress.say(_PHASE_TEXT.get(p, p)))
    finally:
        await team.aclose()
