"""One short graph run on the real embedded model over the bundled example sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.runtime import RunStore
from moot.teams.graph import GraphConfig, GraphTeam
from moot.teams.graph.evidence import normalise
from moot.teams.graph.scaffold import label_tokens

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "graph"


@pytest.mark.embedded
def test_embedded_model_grows_a_grounded_graph_from_dated_documents(tmp_path: Path, local_model) -> None:  # type: ignore[no-untyped-def]
    sources = sorted(EXAMPLE.glob("*.md"))
    team = GraphTeam(sources, model=local_model, store=RunStore(tmp_path / "runs.db"),
                     config=GraphConfig(iterations=1, max_calls=6, hypotheses=False))
    try:
        result = team.ask_sync("How does the Ostby mill affect trout in Lake Mira?")
    finally:
        team.close()
    from moot.text import read_front_matter

    text = normalise(" ".join(read_front_matter(p.read_text()).body for p in sources))  # quotes from bodies only
    words = set(text.replace(".", " ").replace(",", " ").split())
    entities = result.scaffold.entities()
    assert entities, result.answer
    for node in entities:  # nothing invented: every label's words and every quote are in the sources
        assert label_tokens(node.label) <= {w.rstrip("s") if len(w) > 3 else w for w in words} | words, node.label
        assert node.evidence and all(normalise(e.quote) in text for e in node.evidence), node
    for edge in result.scaffold.edges.values():
        assert edge.provisional or all(normalise(e.quote) in text for e in edge.evidence)
        assert not edge.provisional or edge.strength <= 0.5
    assert all(p.confidence <= 0.5 for p in result.scaffold.placeholders())
    # the front matter is metadata: its publishers are no nodes, and every document is dated
    labels = " ".join(n.label for n in entities)
    assert not any(p in labels for p in ("Courier", "Monitor", "Gazette")), labels
    assert all(d["published"] for d in result.scaffold.documents)
    assert result.usage.requests <= 6 and len(result.iterations) == 1
    assert RunStore(tmp_path / "runs.db").get_run(result.run_id).status in ("completed", "stopped")


@pytest.mark.embedded
def test_embedded_model_asked_plainly_draws_the_people_of_a_family_and_a_parent_link(tmp_path: Path, local_model) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "family.md"
    source.write_text("Mateo is married to Ingrid. They have a child called Tomas.\n", encoding="utf-8")
    config = GraphConfig.preset("quick", vocabulary="family", quantify=False, challenge=False, hypotheses=False, max_calls=30)
    team = GraphTeam([source], model=local_model, store=RunStore(tmp_path / "runs.db"), config=config)
    try:
        result = team.ask_sync("What is Tomas to Ingrid?")
    finally:
        team.close()
    s = result.scaffold
    assert {n.label: n.entity_type for n in s.entities()} == {"Mateo": "man", "Ingrid": "woman", "Tomas": "man"}
    parents = {s.label_of(e.source) for e in s.edges.values() if e.type == "parent_of" and s.label_of(e.target) == "Tomas"}
    assert parents and parents <= {"Mateo", "Ingrid"}  # "They have a child called Tomas": Tomas is nobody's parent here
    assert not any(e.type == "parent_of" and s.label_of(e.source) == "Tomas" for e in s.edges.values())
    assert (s.label_of(s.subject), s.label_of(s.object)) == ("Tomas", "Ingrid")
