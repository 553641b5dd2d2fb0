"""`moot eval graph`: the graph team against a one-call baseline on seeded documents with a gold graph.

The eval layer knows nothing of teams; this command wires the graph team in as a
:class:`moot.eval.graph.GraphSystem`.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any, Optional

import typer

from moot.cli._output import print_json, stderr, stdout
from moot.errors import MootError

SYSTEMS = ("team", "one-call")


def register(eval_app: typer.Typer) -> None:
    eval_app.command("graph")(graph_eval)


class TeamSystem:
    """The graph team as a :class:`moot.eval.graph.GraphSystem`."""

    name = "team"

    def __init__(self, model: Any, store: Any, budget: str, iterations: int | None) -> None:
        self.model, self.store, self.budget, self.iterations = model, store, budget, iterations

    async def build(self, case: Any, paths: list[str]) -> Any:
        from moot.eval.graph import GraphPrediction, PredictedEdge, PredictedNode
        from moot.teams.graph import EntityNode, GraphConfig, GraphTeam

        team = GraphTeam(paths, model=self.model, store=self.store,
                         config=GraphConfig.preset(self.budget, iterations=self.iterations))
        try:
            result = await team.ask(case.question)
        finally:
            team.close()
        s = result.scaffold
        nodes = [PredictedNode(id=n.id, label=n.label, aliases=list(n.aliases) if isinstance(n, EntityNode) else [],
                               confidence=n.confidence, placeholder=n.kind == "placeholder",
                               quotes=[e.quote for e in n.evidence] if isinstance(n, EntityNode) else [])
                 for n in s.nodes.values()]
        edges = [PredictedEdge(source=e.source, target=e.target, type=e.type, strength=e.strength, provisional=e.provisional,
                               quotes=[x.quote for x in e.evidence]) for e in s.edges.values()]
        return GraphPrediction(nodes=nodes, edges=edges, gaps=[list(g.between) for g in s.gaps.values()], usage=result.usage,
                               seconds=result.seconds, run_id=result.run_id, note=result.stop_reason)


def graph_eval(
    cases: int = typer.Option(3, "--cases", "-n", help="How many seeded worlds (each: 3 documents, 7 entities, 8 edges)."),
    seed: int = typer.Option(1, "--seed", help="The first seed; cases use seed, seed+1, …"),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Model string (default: $MOOT_MODEL, else the embedded model)."),
    budget: str = typer.Option("quick", "--budget", "-b", help="The team's budget: quick, standard or deep."),
    iterations: Optional[int] = typer.Option(None, "--iterations", help="Override the team's iteration limit."),
    systems: str = typer.Option("team,one-call", "--systems", help="Which to run: team, one-call, or both (comma-separated)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write every case's scores here; print the summary JSON on stdout."),
) -> None:
    """Score the graph team and a one-call baseline on seeded documents with a gold graph."""
    from moot.eval.graph import OneCallBaseline, make_case, score, summarise
    from moot.models.registry import infer_model
    from moot.runtime import RunStore
    from moot.teams.graph import BUDGETS

    chosen = [s.strip() for s in systems.split(",") if s.strip()]
    if not chosen or set(chosen) - set(SYSTEMS):
        raise MootError(f"unknown system(s) in {systems!r}", fix="use --systems team,one-call")
    if budget not in BUDGETS:
        raise MootError(f"unknown budget {budget!r}", fix="use --budget " + ", ".join(BUDGETS))
    if cases < 1:
        raise MootError("--cases must be at least 1", fix="use --cases 1 or more")
    resolved = infer_model(model)
    runners: dict[str, Any] = {"team": TeamSystem(resolved, RunStore(), budget, iterations), "one-call": OneCallBaseline(resolved)}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in chosen}
    with tempfile.TemporaryDirectory(prefix="moot-eval-graph-") as tmp:
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
                stderr.print(f"[dim]{name:>8} seed {case.seed}: entities P {row['entity_precision']} R {row['entity_recall']} · "
                             f"edges R {row['edge_recall_undirected']} · missing link {'yes' if row['missing_link_covered'] else 'no'} · "
                             f"{row['calls']} calls, {row['seconds']}s[/]")
    summary = {name: summarise(r) for name, r in rows.items()}
    report = {"model": getattr(resolved, "name", str(model)), "budget": budget, "seed": seed, "summary": summary, "cases": rows}
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    if json_out is None:
        _table(summary)
    print_json({"summary": summary, **({"results": str(json_out)} if json_out else {})})


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
