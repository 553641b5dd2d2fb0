"""Graph team benchmark: scaffold operations at 10,000 nodes, and the loop's wall time per iteration.

Three measurements, the last line of output is one JSON object:

1. **Scaffold operations** (no model): add 10,000 entities, find them by label (case and
   articles ignored), list merge candidates, add 20,000 edges, run the noise-budget check,
   recompute every confidence and strength, and merge 200 pairs; microseconds per operation.
   Beside it, when networkx is installed (the test extra), the same node and edge inserts into a
   ``networkx.DiGraph`` as a reference point for what a bare graph costs.
2. **Scheduling** (no model): a function model that answers every call after a fixed latency plays
   the five agents on the example sources; per iteration the wall time (the critical path, with
   the parallel mapper calls overlapping) against the sum of every step's time.
3. **Embedded model** (not with ``--quick``): the same on ``local`` over ``examples/graph``,
   2 iterations: wall time, calls and tokens per iteration, critical path vs sum.

Run::

    python bench/graph.py --quick      # 1 and 2 (~20 s)
    python bench/graph.py              # also 3 (several minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from moot.teams.graph import GraphConfig, GraphTeam, Scaffold  # noqa: E402
from moot.teams.graph.quantify import requantify  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "graph"
QUESTION = "How does the Ostby mill affect trout in Lake Mira?"


def _us(seconds: float, n: int) -> float:
    return round(seconds / n * 1e6, 2)


def scaffold_ops(n: int = 10_000) -> dict[str, Any]:
    rng = random.Random(0)
    syl = ["dra", "vik", "os", "mo", "tel", "quor", "bren", "lit", "kal", "sen", "vor", "ul", "ess", "tam"]
    labels = [f"{''.join(rng.choice(syl) for _ in range(3)).capitalize()} {rng.choice(['mill', 'lake', 'farm', 'river'])} {i}"
              for i in range(n)]
    s = Scaffold()
    out: dict[str, Any] = {"nodes": n}
    t = time.perf_counter()
    ids = [s.add_entity(label)[0].id for label in labels]
    out["add_entity_us"] = _us(time.perf_counter() - t, n)
    t = time.perf_counter()
    for label in labels:
        s.find("the " + label.upper())
    out["find_us"] = _us(time.perf_counter() - t, n)
    sample = rng.sample(labels, 500)
    t = time.perf_counter()
    for label in sample:
        s.candidates(label)
    out["merge_candidates_us"] = _us(time.perf_counter() - t, len(sample))
    pairs = [(rng.choice(ids), rng.choice(ids)) for _ in range(2 * n)]
    t = time.perf_counter()
    for a, b in pairs:
        if a != b:
            s.add_edge(a, b, "related_to")
    out["add_edge_us"] = _us(time.perf_counter() - t, len(pairs))
    out["edges"] = len(s.edges)
    t = time.perf_counter()
    for _ in range(20):
        s.noise()
    out["noise_check_us"] = _us(time.perf_counter() - t, 20)
    t = time.perf_counter()
    requantify(s)
    out["requantify_all_us"] = _us(time.perf_counter() - t, 1)
    merges = [(ids[i], ids[i + 1]) for i in range(0, 400, 2)]
    t = time.perf_counter()
    for keep, drop in merges:
        s.merge(keep, drop)
    out["merge_us"] = _us(time.perf_counter() - t, len(merges))
    try:
        import networkx as nx
    except ImportError:
        out["networkx"] = None
    else:
        g = nx.DiGraph()
        t = time.perf_counter()
        for i, label in zip(ids, labels):
            g.add_node(i, label=label, confidence=0.5)
        add_nx = time.perf_counter() - t
        t = time.perf_counter()
        for a, b in pairs:
            if a != b:
                g.add_edge(a, b, type="related_to", strength=0.4)
        edge_nx = time.perf_counter() - t
        out["networkx"] = {"add_node_us": _us(add_nx, n), "add_edge_us": _us(edge_nx, len(pairs)),
                           "moot_over_networkx_add_node": round(out["add_entity_us"] / _us(add_nx, n), 1),
                           "moot_over_networkx_add_edge": round(out["add_edge_us"] / _us(edge_nx, len(pairs)), 1)}
    return out


def _per_iteration(result: Any) -> list[dict[str, Any]]:
    return [{"iteration": r.iteration, "wall_s": r.seconds, "sum_of_steps_s": r.agent_seconds,
             "parallel_gain": round(r.agent_seconds / r.seconds, 2) if r.seconds else None,
             "calls": r.calls, "tokens": r.tokens, "nodes": r.nodes, "edges": r.edges, "noise": r.noise}
            for r in result.iterations]


def scheduling(latency: float) -> dict[str, Any]:
    from moot.models.testing import FunctionModel
    from test_graph_support import GraphScript

    script = GraphScript()

    async def slow(request: Any) -> Any:
        await asyncio.sleep(latency)
        return await script(request)

    team = GraphTeam(sorted(EXAMPLE.glob("*.md")), model=FunctionModel(slow), config=GraphConfig(iterations=2))
    try:
        result = team.ask_sync(QUESTION)
    finally:
        team.close()
    return {"latency_s": latency, "iterations": _per_iteration(result), "calls": result.usage.requests}


def embedded(iterations: int) -> dict[str, Any]:
    team = GraphTeam(sorted(EXAMPLE.glob("*.md")), model="local", config=GraphConfig(iterations=iterations, max_calls=600))
    try:
        team.ask_sync("Which river feeds Lake Mira?")  # warm-up: loads the model and fills the prompt cache
        t = time.perf_counter()
        result = team.ask_sync(QUESTION)
        wall = time.perf_counter() - t
    finally:
        team.close()
    return {"wall_s": round(wall, 1), "stop_reason": result.stop_reason, "calls": result.usage.requests,
            "tokens": result.usage.total_tokens, "iterations": _per_iteration(result),
            "nodes": len(result.scaffold.nodes), "edges": len(result.scaffold.edges)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="scaffold operations and scheduling only (< 1 minute)")
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--iterations", type=int, default=2)
    args = parser.parse_args()
    out: dict[str, Any] = {"bench": "graph", "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                           "python": platform.python_version()}
    out["scaffold"] = scaffold_ops(args.nodes)
    print(json.dumps({"scaffold": out["scaffold"]}), file=sys.stderr)
    out["scheduling"] = scheduling(args.latency)
    print(json.dumps({"scheduling": out["scheduling"]}), file=sys.stderr)
    if not args.quick:
        out["embedded"] = embedded(args.iterations)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
