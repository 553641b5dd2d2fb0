"""`moot graph "QUESTION" --source FILE…`: grow a noisy graph over your sources and answer from it.

While it runs, a live table shows each iteration (nodes, edges, gaps, noise ratio, calls, time)
from the run's ``nlr.reasoning.iteration_complete`` events. ``--json`` prints one object;
``--out`` writes the graph as JSON, GraphML or Mermaid (by extension).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape
from rich.table import Table

from moot.cli._options import BudgetChoice, mcp_option, mcp_servers, model_option, parse_budget, parse_models, team_model_kwargs
from moot.cli._progress import RunProgress, announce, report_stop
from moot.cli._output import exit_for_status, print_json, stderr, stdout, usage_dict, usage_line
from moot.errors import MootError, UsageError


def register(app: typer.Typer) -> None:
    app.command("graph")(graph_command)


def graph_command(
    question: str = typer.Argument(..., help="What to reason about, e.g. \"How does the mill affect the lake?\""),
    source: Optional[list[Path]] = typer.Option(None, "--source", "-s", help="A text or Markdown file (repeat for several)."),
    kb: Optional[str] = typer.Option(None, "--kb", help="Also read the sources of a knowledge base made by `moot learn`."),
    iterations: Optional[int] = typer.Option(None, "--iterations", help="Iteration limit (default from --budget)."),
    noise_budget: float = typer.Option(0.25, "--noise-budget", help="Share of the graph that must stay low-confidence."),
    vocabulary: str = typer.Option("default", "--vocabulary", help="What the graph is drawn with: default (organisations, "
                                   "places, substances; causes, supplies, …) or family (people; married, parent, sibling)."),
    budget: str = typer.Option("standard", "--budget", "-b", help="The run's limits: quick (2 iterations, 20 calls), standard (3, 36) "
                               "or deep (5, 64), and/or calls=N, tokens=N, seconds=X, comma-separated."),
    max_calls: Optional[int] = typer.Option(None, "--max-calls", help="The same as --budget calls=N."),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", help="The same as --budget seconds=X (graph so far kept)."),
    model: Optional[list[str]] = model_option(),
    mcp: Optional[list[str]] = mcp_option(help="An MCP tool server (e.g. a reasoning scratchpad) for the mapper, skeptic and "
                                               "hypothesizer: NAME=COMMAND or NAME=URL (repeatable); added to [mcp.servers] of moot.toml."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write the graph: .json, .graphml (Gephi, yEd, networkx) or .mmd (Mermaid)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: nodes, edges, gaps, hypotheses, noise, answer, usage."),
    record_content: bool = typer.Option(
        False, "--record-content", help="Also record prompts and responses in the run store (shown on the run's web page)."
    ),
) -> None:
    """Grow a graph over your sources: mapper, skeptic, placeholder, quantifier and hypothesizer agents."""
    tools = mcp_servers(mcp)  # the options that need no team are checked first: a mistake is one line
    chosen_budget = parse_budget(budget)
    announce("graph", enabled=not as_json)  # before the team is imported and the sources read
    from moot.runtime import EventBus, RunStore
    from moot.teams.graph import GraphTeam, write_graph
    from moot.teams.graph.export import check_out

    if not source and not kb:
        raise MootError("no sources given", fix="pass --source FILE (text or Markdown, repeatable) or --kb NAME")
    if out is not None:
        check_out(out)  # a path the graph cannot be written to is one line now, not after the model calls
    if not 0.0 <= noise_budget <= 1.0:
        raise MootError(f"noise budget {noise_budget} is not a share", fix="use --noise-budget between 0 and 1, e.g. 0.25")
    if iterations is not None and iterations < 1:
        raise MootError("the iteration limit must be at least 1", fix="use --iterations 1 or more")
    config = graph_config(chosen_budget, iterations=iterations, noise_budget=noise_budget,
                          max_calls=max_calls, deadline_s=max_seconds, vocabulary=vocabulary)
    models = team_model_kwargs(GraphTeam, parse_models(model), command="graph")
    progress = RunProgress("graph", enabled=not as_json, view=_Board(limit=config.iterations), describe=_plain_event)
    team = GraphTeam(source or [], kb=kb, store=RunStore(), config=config, tools=tools, **models)
    try:
        with _progress(enabled=not as_json and not progress.plain) as on_progress:
            index = team.index(progress=on_progress)
        if not as_json:  # the first line once the sources are read and checked (a bad one is one error line)
            progress.say(f"{index.count()} passages from {len(index.sources)} source(s)")
            if not progress.plain:
                stderr.print(f"[dim]{index.count()} passages from {len(index.sources)} source(s)[/]")
        bus = EventBus(record_content=record_content)
        progress.attach(bus)
        result = progress.run(lambda: team.ask(question, bus=bus))
    finally:
        team.close()
    payload = result.to_json()
    payload["usage"] = usage_dict(result.usage)
    if out is not None:
        fmt = write_graph(out, result.scaffold, payload)
        payload["out"] = {"path": str(out), "format": fmt}
    status = getattr(result, "status", "completed")
    if as_json:
        print_json(payload)
        exit_for_status(status)
        return
    stdout.print(escape(result.answer))
    n = result.noise
    stdout.print(f"[dim]{len(result.scaffold.entities())} entities, {len(result.scaffold.placeholders())} placeholders, "
                 f"{len(result.scaffold.edges)} edges, {len(result.scaffold.gaps)} gaps, {len(result.scaffold.hypotheses)} hypotheses · "
                 f"noise {n.current:.2f} (target {n.target:.2f}, {'met' if n.satisfied else 'not met'})[/]")
    stdout.print(f"[dim]{escape(result.stop_reason)}[/]")
    if out is not None:
        stdout.print(f"[dim]graph written to {escape(str(out))}[/]")
    stdout.print(f"[dim]{usage_line(result.usage, result.seconds)} · run {result.run_id[:12]} "
                 f"(moot runs show {result.run_id[:12]})[/]")
    report_stop(status, result.run_id, result.stop_reason)
    exit_for_status(status)


def graph_config(choice: BudgetChoice, *, iterations: int | None = None, **changes: Any) -> Any:
    """The graph team's config for a ``--budget`` (its own presets; limits override)."""
    from moot.teams.graph import GraphConfig

    limits = choice.limits()
    if "max_cost_usd" in limits:
        raise UsageError("the graph team has no dollar limit", fix="use calls=N, tokens=N or seconds=X in --budget")
    merged = {**{k: v for k, v in changes.items() if v is not None}, **limits}
    return GraphConfig.preset(choice.preset, iterations=iterations, **merged)


class _progress:
    """A spinner with the number of passages read, for big sources."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.status: Any = None

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        self.status = stderr.status("reading sources…")
        self.status.__enter__()
        return lambda source, count: self.status.update(f"reading {source}: {count} passages")

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(*exc)


def _plain_event(event: Any) -> str | None:
    """One line per finished iteration (no terminal)."""
    if str(event.type) != "nlr.reasoning.iteration_complete":
        return None
    p = event.payload
    return (f"iteration {p['iteration']}: {p['nodes']} nodes, {p['edges']} edges, {p['gaps']} gaps, "
            f"noise {p['noise']:.2f}, {p.get('calls', '?')} calls")


@dataclass
class _Board:
    """The live table: one row per finished iteration, plus what is running now."""

    limit: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    running: dict[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.time)

    def on_event(self, event: Any) -> None:
        kind = event.type.value
        if kind == "nlr.reasoning.iteration_complete":
            self.rows.append(event.payload)
        elif kind == "task_started" and event.task_id:
            self.running[event.task_id] = event.ts
        elif kind in ("task_finished", "task_failed") and event.task_id:
            self.running.pop(event.task_id, None)

    def render(self) -> Table:
        table = Table(title=f"graph · {time.time() - self.started:.0f}s", expand=False, show_edge=False)
        for col in ("iteration", "nodes", "edges", "gaps", "noise", "calls", "time", "failed"):
            table.add_column(col)
        for p in self.rows:
            colour = "green" if p.get("noise_satisfied") else "yellow"
            table.add_row(f"{p['iteration']}/{self.limit}", str(p["nodes"]), str(p["edges"]), str(p["gaps"]),
                          f"[{colour}]{p['noise']:.2f}[/]", str(p.get("calls", "")), f"{p.get('seconds', 0):.1f}s",
                          escape(", ".join(f.split(":")[0] for f in p.get("failed_steps", []))))
        if self.running:
            table.add_row(f"{len(self.rows) + 1}/{self.limit}", "", "", "", "", "", "",
                          "[cyan]" + escape(", ".join(sorted(self.running))) + "[/]")
        return table
