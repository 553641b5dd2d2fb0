"""`moot research "QUESTION" --repo PATH`: answer a question about a codebase, citing file:line.

The repository is indexed first when needed (with a progress bar). While the run goes, a live
table driven by the run's event bus shows each phase and each researcher: status, turns, tool
calls and tokens — so parallel researchers are visibly parallel and a slow model never looks
hung. ``--json`` prints one object instead.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape
from rich.table import Table

from moot.cli._options import (
    BudgetChoice,
    budget_option,
    mcp_option,
    mcp_servers,
    model_option,
    parse_budget,
    parse_models,
    team_model_kwargs,
)
from moot.cli._output import exit_for_status, print_json, stderr, stdout, usage_line
from moot.cli._progress import RunProgress, log_line, report_stop, task_status
from moot.errors import UsageError


def register(app: typer.Typer) -> None:
    app.command("research")(research_command)


def research_command(
    question: str = typer.Argument(..., help="A question about the code, e.g. \"How is a request sent?\""),
    repo: Path = typer.Option(Path("."), "--repo", "-r", help="The repository (or installed package) to research."),
    mode: str = typer.Option(
        "auto", "--mode", help="auto (routed by the question's shape), single, multi, or baseline (one call, to compare)."
    ),
    model: Optional[list[str]] = model_option(),
    db: Optional[Path] = typer.Option(None, "--db", help="Index file; default: one file per root in the moot home."),
    budget: str = budget_option(help="The run's limits: quick (20 calls), standard (40) or deep (80), and/or "
                                     "calls=N, tokens=N, usd=X, seconds=X, comma-separated."),
    sequential: bool = typer.Option(False, "--sequential", help="Run researchers one after another (for comparison)."),
    mcp: Optional[list[str]] = mcp_option(help="An MCP tool server for the researchers: NAME=COMMAND or NAME=URL (repeatable); "
                                               "added to [mcp.servers] of moot.toml."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: answer, evidence, verification, usage."),
    record_content: bool = typer.Option(
        False, "--record-content", help="Also record prompts and responses in the run store (shown on the run's web page)."
    ),
) -> None:
    """Research a codebase: planner → parallel researchers → synthesizer → verifier (or one agent)."""
    from moot.cli.index_cmd import _progress_bar
    from moot.runtime import EventBus, RunStore
    from moot.teams.research import ResearchTeam

    if mode not in ("auto", "single", "multi", "baseline"):
        raise UsageError(f"unknown mode {mode!r}", fix="use --mode auto, single, multi or baseline")
    if not repo.exists() or not repo.is_dir():
        raise UsageError(f"{repo} is not a folder", fix="pass --repo with the path of a source folder")
    options = research_options(parse_budget(budget), parallel=not sequential)
    models = team_model_kwargs(ResearchTeam, parse_models(model), command="research")
    tools = mcp_servers(mcp)
    progress = RunProgress("research", enabled=not as_json, view=_Board())
    if progress.plain and progress.enabled:  # the options are checked: the first line, before the index or the model
        log_line(f"research: indexing {repo}")
    team = ResearchTeam(repo, store=RunStore(), db_path=db, tools=tools, **models, **options)
    with _progress_bar(enabled=not as_json and not progress.plain) as on_progress:
        team.index(progress=on_progress)
    bus = EventBus(record_content=record_content)
    progress.attach(bus)
    try:
        result = progress.run(lambda: team.ask(question, mode=mode, bus=bus))  # type: ignore[arg-type]
    finally:
        team.close()
    if as_json:
        print_json(result.to_json())
        exit_for_status(result.status)
        return
    if result.status == "failed":
        # No model answered: say why, on stderr, and exit 1 (a budget stop still prints its answer).
        fix = "" if "(fix:" in result.stop_reason else " (fix: check the model with `moot models -m MODEL`, or pass another --model)"
        stderr.print(f"[red]error:[/] the research run {result.run_id[:12]} failed: {escape(result.stop_reason)}{escape(fix)}",
                     soft_wrap=True)
        raise typer.Exit(1)
    stdout.print(f"[dim]mode: {result.mode} ({escape(result.routing_rule)})[/]")
    stdout.print(escape(result.answer))
    if result.verification:
        counts: dict[str, int] = {}
        for v in result.verification:
            counts[v.status] = counts.get(v.status, 0) + 1
        stdout.print("[dim]verification: " + ", ".join(f"{n} {s.lower()}" for s, n in counts.items()) + "[/]")
        for v in result.verification:
            if v.status == "CORRECTED":
                stdout.print(f"[yellow]corrected:[/] {escape(v.correction)}")
    stdout.print(f"[dim]{usage_line(result.usage, result.seconds)} · run {result.run_id[:12]} "
                 f"(moot runs show {result.run_id[:12]})[/]")
    report_stop(result.status, result.run_id, result.stop_reason)
    exit_for_status(result.status)


def research_options(choice: BudgetChoice, **fields: Any) -> dict[str, Any]:
    """The research team's ``config=`` for a ``--budget``: its one size is standard (40 calls);
    quick halves and deep doubles it, and given limits override."""
    from dataclasses import replace

    from moot.teams.research import ResearchConfig

    base = ResearchConfig(**fields)
    limits = choice.scaled({"max_calls": base.max_calls, "max_tokens": base.max_tokens,
                            "max_cost_usd": base.max_cost_usd, "deadline_s": base.deadline_s})
    return {"config": replace(base, **limits)}


@dataclass
class _Row:
    status: str = "waiting"
    turns: int = 0
    tools: int = 0
    tokens: int = 0
    last: str = ""
    started: float | None = None
    finished: float | None = None


@dataclass
class _Board:
    """The live table: one row per phase or researcher, updated from events."""

    rows: dict[str, _Row] = field(default_factory=dict)

    def on_event(self, event: Any) -> None:
        kind = event.type.value
        if not event.task_id:
            return
        row = self.rows.setdefault(event.task_id, _Row())
        p = event.payload
        if kind == "task_started":
            row.status, row.started = "running", event.ts
        elif kind == "model_response":
            row.turns = p.get("turn", row.turns)
            row.tokens += int(p.get("input_tokens", 0)) + int(p.get("output_tokens", 0))
        elif kind == "tool_call":
            row.tools += 1
            row.last = f"{p.get('tool')}({p.get('arguments', '')[:40]})"
        elif kind in ("task_finished", "task_failed"):
            row.status = task_status(event)
            row.finished = event.ts

    def render(self) -> Table:
        table = Table(title="research", expand=False, show_edge=False)
        for col in ("phase", "status", "turns", "tools", "tokens", "time", "last tool call"):
            table.add_column(col)
        now = time.time()
        for name, row in self.rows.items():
            secs = ((row.finished or now) - row.started) if row.started else 0.0
            colour = {"running": "cyan", "completed": "green", "stopped": "yellow", "cancelled": "yellow", "failed": "red"}.get(row.status, "")
            table.add_row(name, f"[{colour}]{row.status}[/]" if colour else row.status, str(row.turns), str(row.tools),
                          str(row.tokens), f"{secs:.1f}s", escape(row.last))
        return table
