"""`moot eval graph`: the graph team against a one-call baseline on seeded documents with a gold graph.

The eval layer knows nothing of teams; this command wires the graph team in as a
:class:`moot.eval.graph.GraphSystem`.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any, Optional

import typer

from moot.cli._options import model_option, parse_budget, parse_models, team_model_kwargs
from moot.cli._output import print_json, stdout, write_json_file
from moot.cli._progress import announce, progress_line
from moot.errors import MootError

SYSTEMS = ("team", "one-call")


def register(eval_app: typer.Typer) -> None:
    eval_app.command("graph")(graph_eval)


class TeamSystem:
    """The graph team as a :class:`moot.eval.graph.GraphSystem`."""

    name = "team"

    def __init__(self, model: Any, store: Any, budget: str, iterations: int | None,
                 models: dict[str, Any] | None = None) -> None:
        self.model, self.store, self.budget, self.iterations = model, store, budget, iterations
        self.models = models or {}
        self.parent_run_id: str | None = None
        """The eval's own run, which holds every case's run."""

    async def build(self, case: Any, paths: list[str]) -> Any:
        from moot.eval.graph import GraphPrediction, PredictedEdge, PredictedNode
        from moot.teams.graph import EntityNode, GraphTeam

        from moot.cli.graph_cmd import graph_config

        team = GraphTeam(paths, model=self.model, store=self.store, **self.models,
                         config=graph_config(parse_budget(self.budget), iterations=self.iterations))
        try:
            result = await team.ask(case.question, parent_run_id=self.parent_run_id)
        finally:
            team.close()
        s = result.scaffold
        nodes = [PredictedNode(id=n.id, label=n.label, aliases=list(n.aliases) if isinstance(n, EntityNode) else [],
                               confidence=n.confidence, placeholder=n.kind == "placeholder",
                               quotes=[e.quote for e in n.evidence] if isinstance(n, EntityNode) else [])
                 for n in s.nodes.values()]
        edges = [PredictedEdge(source=e.source, target=e.target, type=e.type, strength=e.strength, provisional=e.provisional,
                               quotes=[x.quote for x in e.evidence]) for e in s.edges.values()]
        path: list[str] = []
        if s.path and s.subject:
            path = [s.subject]
            for hop in s.path:  # walk the hops from the subject, whichever way each edge points
                path.append(hop.target if hop.source == path[-1] else hop.source)
        return GraphPrediction(nodes=nodes, edges=edges, gaps=[list(g.between) for g in s.gaps.values()],
                               gap_texts=[f"{g.description} {g.suggested_placeholder}".strip() for g in s.gaps.values()],
                               path=path, usage=result.usage, seconds=result.seconds, run_id=result.run_id,
                               note=result.stop_reason)


def graph_eval(
    cases: int = typer.Option(3, "--cases", help="How many seeded worlds (each: 3 documents, 7 entities, 8 edges)."),
    seed: int = typer.Option(1, "--seed", help="The first seed; cases use seed, seed+1, …"),
    model: Optional[list[str]] = model_option(),
    budget: str = typer.Option("quick", "--budget", "-b", help="The team's limits: quick, standard or deep, and/or "
                               "calls=N, tokens=N, seconds=X, comma-separated."),
    iterations: Optional[int] = typer.Option(None, "--iterations", help="Override the team's iteration limit."),
    systems: str = typer.Option("team,one-call", "--systems", help="Which to run: team, one-call, or both (comma-separated)."),
    json_out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write every case's scores here (JSON)."),
    as_json: bool = typer.Option(False, "--json", help='Print one JSON object on stdout: {"summary", "results": the --out file, or null}.'),
    family: int = typer.Option(0, "--family", help="Instead of graph worlds: this many of reasoning-gym's "
                               "family_relationships questions (the relation named by a path over the drawn family)."),
    suite: Optional[Path] = typer.Option(None, "--suite", help="A folder of hand-written worlds (documents and gold.json "
                                         "each) instead of the generated ones, e.g. examples/graph-blind-2026-11-27."),
) -> None:
    """Score the graph team and a one-call baseline on seeded documents with a gold graph."""
    announce("eval graph")
    from moot.eval.graph import OneCallBaseline, make_case, score, summarise
    from moot.models.registry import infer_model
    from moot.runtime import RunStore
    from moot.teams.graph import GraphTeam

    chosen = [s.strip() for s in systems.split(",") if s.strip()]
    if not chosen or set(chosen) - set(SYSTEMS):
        raise MootError(f"unknown system(s) in {systems!r}", fix="use --systems team,one-call")
    from moot.cli.graph_cmd import graph_config

    graph_config(parse_budget(budget))  # a wrong --budget fails here, before any model loads
    choice = parse_models(model)
    team_models = {k: v for k, v in team_model_kwargs(GraphTeam, choice, command="eval graph").items() if k != "model"}
    model = choice.default
    if family < 0 or (family and suite is not None):
        raise MootError("--family takes a count of questions and no --suite", fix="use --family 50, or --suite FOLDER")
    if cases < 1:
        raise MootError("--cases must be at least 1", fix="use --cases 1 or more")
    worlds = None
    if suite is not None:
        from moot.eval.graph_suite import load_suite

        worlds = load_suite(suite)  # a bad suite fails here, before any model loads
    resolved = infer_model(model)
    runners: dict[str, Any] = {"team": TeamSystem(resolved, RunStore(), budget, iterations, team_models), "one-call": OneCallBaseline(resolved)}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in chosen}
    from moot.cli._runs import parent_run

    if family:
        from moot.cli.eval_graph_family import run_family

        run_family(family, seed, chosen, resolved, RunStore(), iterations, team_models, json_out, as_json)
        return
    if worlds is not None:
        _run_suite(worlds, chosen, runners, resolved, budget, json_out, as_json)
        return
    with tempfile.TemporaryDirectory(prefix="moot-eval-graph-") as tmp, \
            parent_run(f"eval graph ({cases} case{'s' if cases != 1 else ''})") as runners["team"].parent_run_id:
        for k in range(cases):
            case = make_case(seed + k)
            folder = Path(tmp) / f"case-{case.seed}"
            folder.mkdir()
            paths = []
            for name, text in case.documents.items():
                (folder / name).write_text(text, encoding="utf-8")
                paths.append(str(folder / name))
            for name in chosen:
                pred = asyncio.run(runners[name].build(case, paths))
                row = score(case, pred) | {"system": name, "run_id": pred.run_id, "note": pred.note}
                rows[name].append(row)
                progress_line("eval graph", f"{name:>8} seed {case.seed}: entities P {row['entity_precision']} R {row['entity_recall']} · "
                              f"edges R {row['edge_recall_undirected']} · missing link {'yes' if row['missing_link_covered'] else 'no'} · "
                              f"{row['calls']} calls, {row['seconds']}s")
    summary = {name: summarise(r) for name, r in rows.items()}
    report = {"model": getattr(resolved, "name", str(model)), "budget": budget, "seed": seed, "summary": summary, "cases": rows}
    if json_out is not None:
        write_json_file(json_out, report)
    if as_json:
        print_json({"summary": summary, "results": str(json_out) if json_out else None})
        return
    _table(summary)
    if json_out is not None:
        stdout.print(f"results: {json_out}")


def _table(summary: dict[str, dict[str, Any]]) -> None:
    from rich.table import Table

    keys = ["entity_precision", "entity_recall", "duplicates", "edge_precision_directed", "edge_recall_directed",
            "edge_precision_undirected", "edge_recall_undirected", "quote_grounding", "claims_with_quote",
            "missing_link_covered", "low_confidence", "high_confidence", "calls", "tokens", "seconds"]
    table = Table(title="graph eval", show_edge=False)
    table.add_column("measure")
    for name in summary:
        table.add_column(name)
    for k in keys:
        table.add_row(k, *(str(summary[n].get(k)) for n in summary))
    stdout.print(table)


def _run_suite(worlds: list[Any], chosen: list[str], runners: dict[str, Any], resolved: Any, budget: str,
               json_out: Optional[Path], as_json: bool) -> None:
    """Each hand-written world through each system, scored against its gold graph."""
    from moot.cli._runs import parent_run
    from moot.eval.graph_suite import score_world, summarise_worlds

    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in chosen}
    with parent_run(f"eval graph suite ({len(worlds)} worlds)") as runners["team"].parent_run_id:
        for world in worlds:
            for name in chosen:
                pred = asyncio.run(runners[name].build(world, world.paths))
                row = score_world(world, pred, pred.path) | {"system": name, "run_id": pred.run_id, "note": pred.note}
                rows[name].append(row)
                if json_out is not None:  # kept after every world, so a stopped eval keeps what it measured
                    write_json_file(json_out, {"model": getattr(resolved, "name", str(resolved)), "budget": budget,
                                               "partial": True, "worlds": rows})
                progress_line("eval graph", f"{name:>8} {world.name}: entities R {row['entity_recall']} P {row['entity_precision']} · "
                              f"edges R {row['edge_recall_undirected']} · linked {'yes' if row['subject_object_linked'] else 'no'} · "
                              f"unmeasured {'yes' if row['unmeasured_named'] else 'no'} · publishers {row['publisher_nodes']} · "
                              f"{row['calls']} calls, {row['seconds']}s")
    summary = {name: summarise_worlds(r) for name, r in rows.items()}
    report = {"model": getattr(resolved, "name", str(resolved)), "budget": budget, "summary": summary, "worlds": rows}
    if save_report(report, json_out, as_json):
        return
    from rich.table import Table

    keys = ["entity_recall", "entity_precision", "publisher_nodes", "edge_recall_undirected", "edge_recall_directed",
            "subject_object_linked",
            "subject_object_directed", "answer_path_reaches", "unmeasured_named", "quote_grounding", "calls", "tokens", "seconds"]
    table = Table(title="graph eval (hand-written suite)", show_edge=False)
    table.add_column("measure")
    for name in summary:
        table.add_column(name)
    for k in keys:
        table.add_row(k, *(str(summary[n].get(k, "—")) for n in summary))
    stdout.print(table)
    if json_out is not None:
        stdout.print(f"results: {json_out}")


def save_report(report: dict[str, Any], json_out: Optional[Path], as_json: bool) -> bool:
    """Write the results file; with ``--json`` print the one summary object. True when printed (no table then)."""
    if json_out is not None:
        write_json_file(json_out, report)
    if as_json:
        print_json({"summary": report["summary"], "results": str(json_out) if json_out else None})
    return as_json
