"""The graph as files: GraphML that networkx opens with its attributes, Mermaid, JSON."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from moot.errors import MootError
from moot.teams.graph import Scaffold, to_graphml, to_mermaid, write_graph
from moot.teams.graph.scaffold import Evidence


def small_graph() -> Scaffold:
    s = Scaffold(question="q")
    mill, _ = s.add_entity("Ostby mill", evidence=[Evidence(source="a.md", quote='the "Ostby" mill & co <ltd>')])
    lake, _ = s.add_entity("Lake Mira", evidence=[Evidence(source="a.md", quote="Lake Mira")])
    mill.confidence, lake.confidence = 0.8, 0.6
    edge, _ = s.add_edge(mill.id, lake.id, "decreases", evidence=[Evidence(source="a.md", quote="waste into Lake Mira")],
                         provisional=False)
    edge.strength = 0.7
    gap, _ = s.add_gap("why trout declined", [mill.id, lake.id], domain="lake")
    s.add_placeholder(gap, "low oxygen")
    return s


def test_graphml_opens_in_networkx_with_typed_attributes(tmp_path: Path) -> None:
    nx = pytest.importorskip("networkx")
    path = tmp_path / "g.graphml"
    assert write_graph(path, small_graph()) == "graphml"
    g = nx.read_graphml(path)
    assert g.is_directed() and g.number_of_nodes() == 3 and g.number_of_edges() == 3
    assert g.nodes["ostby_mill"]["label"] == "Ostby mill" and g.nodes["ostby_mill"]["confidence"] == 0.8
    assert g.nodes["placeholder_lake_1"]["kind"] == "placeholder" and g.nodes["placeholder_lake_1"]["confidence"] == 0.3
    edge = g.edges["ostby_mill", "lake_mira"]
    assert edge["type"] == "decreases" and edge["strength"] == 0.7 and edge["provisional"] is False
    assert '"Ostby" mill & co <ltd>' in g.nodes["ostby_mill"]["evidence"]  # quotes survive escaping


def test_graphml_is_well_formed_without_networkx() -> None:
    root = ET.fromstring(to_graphml(small_graph()))
    ns = "{http://graphml.graphdrawing.org/xmlns}"
    assert len(root.findall(f"{ns}graph/{ns}node")) == 3 and len(root.findall(f"{ns}graph/{ns}edge")) == 3


def test_mermaid_marks_placeholders_and_provisional_edges() -> None:
    text = to_mermaid(small_graph())
    assert text.startswith("flowchart LR\n")
    assert 'ostby_mill["Ostby mill (0.80)"]' in text
    assert 'ostby_mill -->|"decreases 0.70"| lake_mira' in text
    assert 'placeholder_lake_1{{"[PROVISIONAL] low oxygen (0.30)"}}' in text
    assert 'ostby_mill -.->|"related_to 0.40"| placeholder_lake_1' in text
    assert "class placeholder_lake_1 placeholder" in text
    assert "==>" not in text and "classDef path" not in text  # no path yet


def test_mermaid_draws_the_answer_path_thick_and_marks_hedged_edges() -> None:
    from moot.teams.graph.paths import find_path

    s = small_graph()
    s.edges["e_ostby_mill_decreases_lake_mira"].hedged = True
    s.path = find_path(s, "ostby_mill", "lake_mira")
    text = to_mermaid(s)
    assert 'ostby_mill ==>|"decreases 0.70 hedged"| lake_mira' in text  # the path, over the stated edge
    assert 'ostby_mill -.->|"related_to 0.40"| placeholder_lake_1' in text  # off the path: as before
    assert "class ostby_mill,lake_mira path" in text


def test_json_and_unknown_extension(tmp_path: Path) -> None:
    path = tmp_path / "out" / "g.json"
    write_graph(path, small_graph(), {"nodes": [1], "answer": "x"})
    assert json.loads(path.read_text()) == {"nodes": [1], "answer": "x"}
    with pytest.raises(MootError, match="format"):
        write_graph(tmp_path / "g.png", small_graph())
