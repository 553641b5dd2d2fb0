"""Hand-written graph sets (`moot eval graph --suite`): the loader, the scorer a reader would
agree with, and the command on the set kept in examples/, with a stub model in place of the real one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moot.errors import MootError
from moot.eval.graph import GraphPrediction, PredictedEdge, PredictedNode
from moot.eval.graph_suite import load_suite, match_entity, score_world, summarise_worlds
from openai_stub import openai_compatible_server

SUITE = Path(__file__).resolve().parents[1] / "examples" / "graph-blind-2026-11-27"


def reader_graph(world: Any) -> GraphPrediction:
    """The reader's own graph, labelled with each entity's first name and quoting body sentences."""
    gold = world.gold
    body_sentence = next(line for line in world.documents[sorted(world.documents)[0]].splitlines()[7:] if line.strip())
    pred = GraphPrediction(nodes=[PredictedNode(id=e["id"], label=e["names"][0], quotes=[body_sentence]) for e in gold["entities"]])
    pred.edges = [PredictedEdge(source=e["source"], target=e["target"], type=e["type"]) for e in gold["edges"]]
    pred.gap_texts = [f"{world.names[gold['unmeasured']][0]} has not been measured"]
    pred.path = list(gold["path"])
    return pred


def test_the_suite_loads_and_its_own_gold_graph_scores_full_marks() -> None:
    worlds = load_suite(SUITE)
    assert [w.name for w in worlds] == ["loxley", "skarvik", "tarnby"] and all(len(w.paths) == 3 for w in worlds)
    rows = [score_world(w, reader_graph(w), reader_graph(w).path) for w in worlds]
    assert all(r["entity_recall"] == r["entity_precision"] == r["edge_recall_undirected"] == r["edge_recall_directed"] == 1.0
               for r in rows)
    # every edge drawn the wrong way round: found undirected, none in the reader's direction
    flipped = reader_graph(worlds[0])
    flipped.edges = [PredictedEdge(source=e.target, target=e.source, type=e.type) for e in flipped.edges]
    row = score_world(worlds[0], flipped)
    assert row["edge_recall_undirected"] == 1.0 and row["edge_recall_directed"] == 0.0
    assert all(r["subject_object_directed"] and r["unmeasured_named"] and r["answer_path_reaches"] for r in rows)
    assert all(r["publisher_nodes"] == 0 for r in rows)
    assert summarise_worlds(rows)["unmeasured_named"] == "3/3"


def test_publishers_front_matter_quotes_and_broken_chains_count_against_a_graph() -> None:
    world = next(w for w in load_suite(SUITE) if w.name == "skarvik")
    assert match_entity(world, ["the Holmgren works"]) == "plant" and match_entity(world, ["Skarvik Bay"]) is None
    assert match_entity(world, ["nitrogen-rich runoff from the storage yard"]) == "runoff"
    pred = GraphPrediction(nodes=[PredictedNode(id="a", label="Bay Herald", quotes=["source: Bay Herald"]),
                                  PredictedNode(id="b", label="Holmgren plant", quotes=["The plant's owner has not commented."]),
                                  PredictedNode(id="c", label="blue mussels"),
                                  PredictedNode(id="p", label="[PROVISIONAL] mediator", placeholder=True)],
                           edges=[PredictedEdge(source="b", target="p", type="related_to", provisional=True),
                                  PredictedEdge(source="p", target="c", type="related_to", provisional=True)])
    row = score_world(world, pred)
    assert row["publisher_nodes"] == 1 and row["entity_precision"] == round(2 / 3, 4)
    assert row["quote_grounding"] == 0.5  # the front-matter line is no evidence
    assert not row["subject_object_linked"]  # only through a placeholder: not a grounded chain
    assert not row["unmeasured_named"] and "answer_path" not in row


def test_a_bad_suite_folder_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(MootError, match="no world") as err:
        load_suite(tmp_path)
    assert err.value.fix
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "gold.json").write_text('{"question": "q"}')
    with pytest.raises(MootError, match="lacks subject"):
        load_suite(tmp_path)


def test_moot_eval_graph_suite_runs_the_baseline_on_every_world(tmp_path: Path) -> None:
    def reply(body: dict[str, Any]) -> str:  # the one call names the plant and the mussels and says nothing more
        return json.dumps({"entities": [{"label": "Holmgren plant", "quote": "x"}, {"label": "mussels", "quote": "y"}],
                           "relationships": [{"quote": "z", "source": "Holmgren plant", "type": "causes", "target": "mussels"}],
                           "gaps": []})

    env = {**os.environ, "MOOT_HOME": str(tmp_path), "MOOT_RUNS_DB": str(tmp_path / "runs.db")}
    with openai_compatible_server(reply) as model:
        done = subprocess.run([sys.executable, "-m", "moot", "eval", "graph", "--suite", str(SUITE), "--systems", "one-call",
                               "--model", model, "--out", str(tmp_path / "r.json"), "--json"],
                              capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])["summary"]["one-call"]
    assert summary["worlds"] == 3 and summary["subject_object_linked"] == "1/3"  # only skarvik's names match
    worlds = json.loads((tmp_path / "r.json").read_text())["worlds"]["one-call"]
    assert [w["world"] for w in worlds] == ["loxley", "skarvik", "tarnby"] and worlds[1]["edge_recall_undirected"] == 0.0
