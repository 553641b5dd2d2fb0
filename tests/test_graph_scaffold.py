"""The graph scaffold, the quantifier's rules, the noise budget and the evidence index: the
parts of the graph team that are pure Python, as a user of the graph would notice them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from moot.errors import MootError
from moot.teams.graph.evidence import SourceIndex
from moot.teams.graph.quantify import age_years, quantify_confidence, quantify_strength, requantify
from moot.teams.graph.scaffold import Evidence, EvidenceFeatures, PlaceholderNode, Scaffold, similar_labels


def test_confidence_rule_adds_each_factor_and_clamps() -> None:
    f = EvidenceFeatures
    assert quantify_confidence(f(consistent=False)) == 0.5
    assert quantify_confidence(f()) == 0.6  # one source, no date, no contradiction
    assert quantify_confidence(f(sources=2)) == 0.8
    assert quantify_confidence(f(sources=3, source_kind="study", age_years=0)) == 1.0  # 1.1 clamped
    assert quantify_confidence(f(source_kind="blog", age_years=9, consistent=False)) == 0.3
    assert quantify_confidence(f(age_years=3)) == 0.6  # between one and five years: no change


def test_strength_rule_causal_beats_correlational_and_counter_evidence_subtracts() -> None:
    f = EvidenceFeatures
    assert quantify_strength(f()) == 0.4
    assert quantify_strength(f(evidence_kind="correlational")) == 0.5
    assert quantify_strength(f(evidence_kind="causal")) == 0.7
    assert quantify_strength(f(evidence_kind="causal", theoretical_basis=True)) == 0.85
    assert quantify_strength(f(evidence_kind="causal", counter_evidence=True)) == 0.5
    assert quantify_strength(f(evidence_kind="none", counter_evidence=True)) == 0.2
    # an edge no checked quote states stays low whatever the labels say
    assert quantify_strength(f(evidence_kind="causal", theoretical_basis=True), provisional=True) == 0.5


def test_age_is_counted_from_the_newest_year_in_the_sources() -> None:
    assert age_years("In 2019 the mill closed.", 2025) == 6.0
    assert age_years("No date here.", 2025) is None
    assert age_years("Opened 1990, rebuilt 2024.", 2025) == 1.0


def test_noise_budget_is_the_mean_of_the_node_and_edge_shares() -> None:
    s = Scaffold()
    a, _ = s.add_entity("Ostby mill")
    b, _ = s.add_entity("Varn river")
    c, _ = s.add_entity("Lake Mira")
    d, _ = s.add_entity("Harbour")
    for node, conf in zip((a, b, c, d), (0.9, 0.8, 0.7, 0.4)):
        node.confidence = conf
    e1, _ = s.add_edge(a.id, b.id, "uses", provisional=False)
    e2, _ = s.add_edge(b.id, c.id, "supplies", provisional=False)
    e1.strength, e2.strength = 0.85, 0.85
    status = s.noise()
    assert (status.node_ratio, status.edge_ratio, status.current) == (0.25, 0.0, 0.125)
    assert not status.satisfied and status.deficit == 0.125
    e2.strength = 0.5  # at 0.5 an element counts as low
    assert s.noise().current == 0.375 and s.noise().satisfied
    assert Scaffold().noise().current == 0.0  # empty graph: no uncertainty to show


def test_placeholder_confidence_can_never_exceed_one_half() -> None:
    with pytest.raises(ValidationError):
        PlaceholderNode(id="placeholder_x_1", label="[PROVISIONAL] x", confidence=0.6)
    s = Scaffold()
    a, _ = s.add_entity("Ostby mill")
    b, _ = s.add_entity("Lake Mira")
    gap, _ = s.add_gap("how the mill affects the lake", [a.id, b.id], domain="water")
    node = s.add_placeholder(gap, "discharge channel", constraints=["confirmed by: a permit"])
    assert node.id == "placeholder_water_1" and node.label == "[PROVISIONAL] discharge channel"
    assert node.confidence <= 0.5 and gap.placeholder == node.id
    # linked to both ends of the gap by provisional edges
    linked = {(e.source, e.target) for e in s.edges.values() if e.provisional}
    assert (a.id, node.id) in linked and (node.id, b.id) in linked
    requantify(s)
    assert all(e.strength <= 0.5 for e in s.edges.values()) and node.confidence == 0.3


def test_same_label_in_other_words_is_one_node_and_similar_labels_are_candidates() -> None:
    s = Scaffold()
    mill, new = s.add_entity("Ostby mill", evidence=[Evidence(source="a.md", quote="the Ostby mill")])
    again, new_again = s.add_entity("the Ostby Mills", evidence=[Evidence(source="b.md", quote="Ostby mills")])
    assert new and not new_again and again.id == mill.id and len(mill.evidence) == 2
    assert similar_labels("Ostby mill", "the paper mill at Ostby")
    assert not similar_labels("Ostby mill", "Varn harbour")
    paper, _ = s.add_entity("the paper mill at Ostby")
    assert [n.id for n in s.candidates("the paper mill at Ostby") if n.id != paper.id] == [mill.id]


def test_merge_moves_aliases_evidence_and_edges_without_duplicates() -> None:
    s = Scaffold()
    mill, _ = s.add_entity("Ostby mill")
    paper, _ = s.add_entity("the paper mill at Ostby", evidence=[Evidence(source="b.md", quote="paper mill at Ostby")])
    river, _ = s.add_entity("Varn river")
    s.add_edge(mill.id, river.id, "uses")
    s.add_edge(paper.id, river.id, "uses", provisional=False)
    s.add_edge(paper.id, mill.id, "part_of")
    s.merge(mill.id, paper.id)
    assert set(s.nodes) == {mill.id, river.id}
    assert mill.aliases == ["the paper mill at Ostby"] and mill.evidence[0].source == "b.md"
    [edge] = s.edges.values()  # the duplicate folded in, the self-loop dropped
    assert (edge.source, edge.target, edge.type, edge.provisional) == (mill.id, river.id, "uses", False)
    assert s.find("paper mill at Ostby") is mill


def test_scaffold_survives_a_json_round_trip_with_its_lookups() -> None:
    s = Scaffold(question="q")
    a, _ = s.add_entity("Ostby mill")
    b, _ = s.add_entity("Varn river")
    s.add_edge(a.id, b.id, "uses")
    copy = Scaffold.model_validate_json(s.model_dump_json())
    assert copy.find("ostby mills") is not None
    _, new = copy.add_edge(a.id, b.id, "uses")
    assert not new


def test_sources_are_read_into_sentences_searched_and_quotes_located(tmp_path: Path) -> None:
    with SourceIndex() as index:
        index.add_text("a.md", ["# Title\n", "\n", "The Ostby mill draws water from the Varn river. It returns it warm.\n", "\n",
                                "Unrelated: the bakery opens at nine.\n"])
        [found] = index.search("Where does the Ostby mill get water?")
        assert found.source == "a.md" and found.text == "The Ostby mill draws water from the Varn river."
        assert index.count() == 3  # the heading is no claim; each sentence is one row
        assert index.neighbour(found, 1).text == "It returns it warm."
        assert index.locate("draws  WATER from the Varn River") is not None
        assert index.locate("Varn river. It returns") is not None  # a quote of two adjacent sentences
        assert index.locate("draws water from the Lake") is None
        assert index.search("quantum chromodynamics") == []


def test_front_matter_is_metadata_never_a_sentence() -> None:
    yaml_doc = ["---\n", "title: 'Algae: the summer of 2025'\n", "source: Harbour Gazette\n", "author: [A. Lind]\n",
                "published: 2025-08-14\n", "---\n", "The bloom closed the beach.\n"]
    toml_doc = ["+++\n", 'title = "Notes"\n', 'publisher = "Fjord Weekly"\n', "date = 2023-02-01\n", "+++\n"]
    with SourceIndex() as index:
        assert index.add_text("bloom.md", yaml_doc) == 1 and index.add_text("notes.md", toml_doc) == 0
        bloom, notes = index.documents["bloom.md"], index.documents["notes.md"]
        assert (bloom.title, bloom.publisher, bloom.author, bloom.published) == ("Algae: the summer of 2025", "Harbour Gazette",
                                                                                 "A. Lind", "2025-08-14")
        assert bloom.provenance_names() == ["Harbour Gazette", "A. Lind"] and notes.publisher == "Fjord Weekly"
        assert [s.text for s in index.all(10)] == ["The bloom closed the beach."]  # no line of the header is evidence
        assert index.sources == ["bloom.md"] and set(index.documents) == {"bloom.md", "notes.md"}
        assert index.newest_year == 2025


def test_bad_sources_are_one_line_errors_naming_the_fix(tmp_path: Path) -> None:
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\x00\x00\x01")
    latin = tmp_path / "old.txt"
    latin.write_bytes("caf\xe9 au lait".encode("latin-1"))
    with SourceIndex() as index:
        for path, words in ((binary, "binary"), (latin, "UTF-8"), (tmp_path / "nope.md", "does not exist"),
                            (tmp_path, "folder")):
            with pytest.raises(MootError) as err:
                index.add_file(path)
            assert words in str(err.value) and err.value.fix


def test_a_big_source_is_read_in_batches_with_progress(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    para = "The Ostby mill draws water from the Varn river in every season of the year. " * 8
    big.write_text("\n\n".join(f"{para} Section {i} ends here." for i in range(3000)))  # about 2 MB
    calls: list[int] = []
    with SourceIndex() as index:
        sentences = index.add_file(big, progress=lambda source, n: calls.append(n))
        assert sentences == index.count() == 3000 * 9
        assert len(calls) >= 10 and calls == sorted(calls)  # progress reported as batches are written
        assert index.search("Section 2999 ends")[0].text == "Section 2999 ends here."
