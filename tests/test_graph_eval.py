"""The graph benchmark: the seeded generator, the scorer on graphs whose scores are known, and the
one-call baseline, as a person rerunning `moot eval graph` relies on them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from moot.eval.graph import (
    GraphPrediction,
    OneCallBaseline,
    PredictedEdge,
    PredictedNode,
    make_case,
    score,
    summarise,
)
from moot.models.testing import FunctionModel
from openai_stub import openai_compatible_server


def perfect(case: Any) -> GraphPrediction:
    """The gold graph, written as a system would: visible entities, stated edges, a placeholder."""
    pred = GraphPrediction()
    for e in case.entities:
        if not e.hidden:
            pred.nodes.append(PredictedNode(id=e.id, label=e.name, confidence=0.9, quotes=[e.name]))
    for e in case.edges:
        pred.edges.append(PredictedEdge(source=e.source, target=e.target, type=e.type, strength=0.8, quotes=[]))
    a, c = case.missing_link
    pred.nodes.append(PredictedNode(id="p1", label="[PROVISIONAL] mediator", confidence=0.3, placeholder=True))
    pred.edges += [PredictedEdge(source=a, target="p1", type="related_to", provisional=True),
                   PredictedEdge(source="p1", target=c, type="related_to", provisional=True)]
    return pred


def test_generator_is_seeded_and_hides_the_mediator() -> None:
    a, b = make_case(7), make_case(7)
    assert a == b and make_case(8) != a
    hidden = [e for e in a.entities if e.hidden]
    assert len(hidden) == 1
    corpus = " ".join(a.documents.values()).lower()
    assert hidden[0].token not in corpus  # the missing link is named nowhere
    assert all(e.token in corpus for e in a.entities if not e.hidden)
    assert "unknown" in corpus and len(a.documents) == 3
    # every document is dated in front matter by a publisher, and the first names its publisher in the body too
    assert all(d.startswith("---\ntitle:") and f"source: {p}\n" in d for d, p in zip(a.documents.values(), a.publishers))
    assert f"The {a.publishers[0]} asked" in a.documents["report-1.md"]
    assert any(e.type == "correlates_with" for e in a.edges) is ("may be linked" in corpus or "is suspected" in corpus)
    assert a.question not in corpus


def test_the_gold_graph_scores_perfectly() -> None:
    case = make_case(3)
    row = score(case, perfect(case))
    assert row["entity_precision"] == row["entity_recall"] == 1.0 and row["duplicates"] == 0
    assert row["edge_precision_directed"] == row["edge_recall_directed"] == 1.0
    assert row["quote_grounding"] == 1.0 and row["missing_link_covered"] is True
    assert row["high_confidence"] == {"elements": len(case.edges) + 7, "error_rate": 0.0}


def test_duplicates_reversed_edges_invented_quotes_and_calibration_are_counted() -> None:
    case = make_case(3)
    pred = perfect(case)
    first = next(e for e in case.entities if not e.hidden)
    pred.nodes.append(PredictedNode(id="dup", label=first.alias, confidence=0.4, quotes=["words found nowhere"]))
    pred.nodes.append(PredictedNode(id="pub", label=case.publishers[1], quotes=[f"source: {case.publishers[1]}"]))
    gold = case.edges[0]
    pred.edges = [PredictedEdge(source=gold.target, target=gold.source, type=gold.type, strength=0.9)]  # reversed
    row = score(case, pred)
    assert row["duplicates"] == 1 and row["entity_precision"] == round(7 / 9, 4) and row["publisher_nodes"] == 1
    assert row["duplicate_labels"] == [first.alias] and row["off_graph_labels"] == [case.publishers[1]]  # named, to read
    assert row["edge_precision_directed"] == 0.0 and row["edge_precision_undirected"] == 1.0
    assert row["quote_grounding"] == round(7 / 9, 4)  # a front-matter line is no evidence
    assert row["missing_link_covered"] is False  # the placeholder lost its edges
    assert row["low_confidence"] == {"elements": 1, "error_rate": 1.0}  # the duplicate was the low one
    total = summarise([row, score(case, perfect(case))])
    assert total["missing_link_covered"] == "1/2" and total["cases"] == 2


def test_one_call_baseline_turns_its_answer_into_a_scored_graph() -> None:
    case = make_case(5)
    by_id = {e.id: e for e in case.entities}
    gold = case.edges[0]
    a, c = case.missing_link

    def answer(request: Any) -> dict[str, Any]:
        assert request.output.name == "BaselineGraph"
        return {"entities": [{"label": by_id[gold.source].name, "quote": by_id[gold.source].name},
                             {"label": by_id[gold.target].name, "quote": by_id[gold.target].name}],
                "relationships": [{"quote": "x", "source": by_id[gold.source].name, "type": gold.type,
                                   "target": by_id[gold.target].name}],
                "gaps": [{"description": "unknown", "between": [by_id[a].name, by_id[c].name]}]}

    pred = asyncio.run(OneCallBaseline(FunctionModel(answer)).build(case, []))
    row = score(case, pred)
    assert row["calls"] == 1 and row["edge_recall_directed"] == round(1 / len(case.edges), 4)
    assert row["missing_link_covered"] is True and row["entity_precision"] == 1.0


def test_moot_eval_graph_prints_a_summary(tmp_path: Path) -> None:
    def reply(body: dict[str, Any]) -> str:
        return json.dumps({"entities": [], "relationships": [], "gaps": []})

    env = {**os.environ, "MOOT_HOME": str(tmp_path), "MOOT_RUNS_DB": str(tmp_path / "runs.db")}
    with openai_compatible_server(reply) as model:
        done = subprocess.run([sys.executable, "-m", "moot", "eval", "graph", "--cases", "2", "--systems", "one-call",
                               "--model", model, "--out", str(tmp_path / "r.json"), "--json"],
                              capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])["summary"]["one-call"]
    assert summary["cases"] == 2 and summary["entity_recall"] == 0.0 and summary["missing_link_covered"] == "0/2"
    assert len(json.loads((tmp_path / "r.json").read_text())["cases"]["one-call"]) == 2


def test_moot_eval_graph_records_one_run_holding_each_cases_run(tmp_path: Path) -> None:
    def reply(body: dict[str, Any]) -> str:  # every agent finds nothing: the loop ends quickly
        return json.dumps({"entities": [], "relationships": [], "gaps": [], "verdicts": [], "edges": [],
                           "placeholders": [], "hypotheses": [], "quantities": []})

    env = {**os.environ, "MOOT_HOME": str(tmp_path), "MOOT_RUNS_DB": str(tmp_path / "runs.db")}
    with openai_compatible_server(reply) as model:
        done = subprocess.run([sys.executable, "-m", "moot", "eval", "graph", "--cases", "1", "--systems", "team",
                               "--model", model, "--out", str(tmp_path / "r.json"), "--json"],
                              capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    from moot.runtime import RunStore

    store = RunStore(tmp_path / "runs.db")
    [parent] = store.list_runs(top_level=True)
    assert parent.name == "eval graph (1 case)" and parent.status == "completed"
    cases = json.loads((tmp_path / "r.json").read_text())["cases"]["team"]
    assert sorted(r.id for r in store.children(parent.id)) == sorted(c["run_id"] for c in cases)
