"""The graph team's order check: on a model that copies its first answer down a batch, every
batch of the mapper's choices is asked twice, listed as Python listed it and reversed, and only
the answers that do not change with the order stand. Scripted models, routed by schema name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.teams.graph import GraphConfig, GraphTeam
from moot.teams.graph.build import CHANGED, UNSURE, agreed_choices, agreed_links
from moot.teams.graph.vocabulary import DEFAULT
from test_graph_support import GraphScript, make_sources, model_for, options, own

TREES = ["Alder", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Gum", "Hazel"]


def quiet(**config: Any) -> GraphConfig:
    return GraphConfig(quantify=False, challenge=False, hypotheses=False, **config)


class Copier:
    """A small model's habit, scripted: it answers a batch's first item from the text (``first``)
    and writes that answer's kind for every item after it."""

    def __init__(self, first_type: dict[str, str], linked: set[frozenset[str]]) -> None:
        self.first_type, self.linked = first_type, linked
        self.steps: list[str] = []

    async def __call__(self, request: ModelRequest) -> Any:
        assert request.output is not None
        name, schema = request.output.name, request.output.json_schema
        task = str(request.messages[1].content)
        self.steps.append(name)
        if name == "QuestionFocus":
            subjects = options(schema["properties"]["subject"])
            return {"subject": subjects[0], "object": options(schema["properties"]["object"])[-1]}
        if name == "EntityChoices":
            labels = re.findall(r'^c\d+\. "(.*)" \(in', task, re.M)
            kind = self.first_type.get(labels[0], "too general")
            return {f"c{i}": own(schema, f"c{i}", f"{label}: {kind}") for i, label in enumerate(labels, 1)}
        if name == "AliasChoices":
            return {k: "different" for k in schema["properties"]}
        if name == "LinkChoices":
            pairs = re.findall(r'Pair: "(.*)" and "(.*)"', task)
            link = frozenset(pairs[0]) in self.linked
            return {f"p{i}": own(schema, f"p{i}", f"{a} correlates with {b}" if link else f"{a} and {b}: no link")
                    for i, (a, b) in enumerate(pairs, 1)}
        if name == "PlaceholderOutput":
            return {"placeholders": []}
        raise AssertionError(f"unexpected schema {name}")


def trees(tmp_path: Path) -> list[Path]:
    (tmp_path / "trees.md").write_text(f"{', '.join(TREES[:-1])} and {TREES[-1]} grow by the Tarn lake.\n")
    return [tmp_path / "trees.md"]


def test_answers_copied_down_a_batch_change_with_the_order_and_are_dropped(tmp_path: Path) -> None:
    # Python lists the candidates from "Tarn lake" on and the pairs from Alder–Birch on; reversed, the
    # candidates open with a tree and the pairs with one the text does not link
    copier = Copier({"Tarn lake": "place", **{name: "organism" for name in TREES}}, {frozenset({"Alder", "Birch"})})
    config = dict(iterations=1, pairs_per_call=4, link_calls_per_iteration=1)
    once = GraphTeam(trees(tmp_path), model=FunctionModel(copier), config=quiet(order_check=False, **config)).ask_sync(
        "Which trees grow by the Tarn lake?")
    firm = [e for e in once.scaffold.edges.values() if not e.provisional]
    assert len(firm) == 4 and {e.type for e in firm} == {"correlates_with"}  # the first answer, written four times
    assert {once.scaffold.nodes[e.source].entity_type for e in firm} == {"place"}  # and "place" for every tree

    copier.steps.clear()
    both = GraphTeam(trees(tmp_path), model=FunctionModel(copier), config=quiet(order_check=True, **config)).ask_sync(
        "Which trees grow by the Tarn lake?")
    assert copier.steps.count("LinkChoices") == 2 and copier.steps.count("EntityChoices") == 2  # each batch, both ways
    assert not [e for e in both.scaffold.edges.values() if not e.provisional]  # every copied link changed with the order
    # every candidate was an entity both ways ("place" copied one way, "organism" the other): an entity of no type
    types = {m["label"]: m["type"] for m in both.mentions} | {n.label: n.entity_type for n in both.scaffold.entities()}
    assert set(TREES) <= set(types) and {types[t] for t in TREES} == {""}
    assert both.iterations[0].changed_answers == len(types) + 4  # every candidate's type, and the four links


def test_a_model_that_reads_each_item_gives_the_same_graph_asked_both_ways(tmp_path: Path) -> None:
    results = []
    for check in (False, True):
        script = GraphScript()
        team = GraphTeam(make_sources(tmp_path / f"src{check}"), model=model_for(script), config=GraphConfig(order_check=check))
        results.append((team.ask_sync("How does the Ostby mill affect Lake Mira?"), script))
    (plain, plain_script), (checked, checked_script) = results
    edges = lambda r: sorted((r.scaffold.label_of(e.source), e.type, r.scaffold.label_of(e.target))  # noqa: E731
                             for e in r.scaffold.edges.values() if not e.provisional)
    assert edges(checked) == edges(plain) and edges(plain)
    assert sum(r.changed_answers for r in checked.iterations) == 0
    assert checked_script.calls["LinkChoices"] == 2 * plain_script.calls["LinkChoices"]
    assert checked_script.calls["EntityChoices"] == 2 * plain_script.calls["EntityChoices"]


def test_the_check_is_on_for_a_model_on_this_machine_and_off_for_a_hosted_one(tmp_path: Path) -> None:
    from moot.teams.graph.loop import Loop

    sources = make_sources(tmp_path)
    for model, expected in (("local", True), (FunctionModel(GraphScript()), False)):
        team = GraphTeam(sources, model=model)
        loop = Loop(team, "How does the mill affect the lake?", team.index(), record=_record())
        assert loop.order_check is expected
        team.close()


def _record() -> Any:
    from moot.runtime import Budget, Run

    return Run("test", Budget())


def test_agreement_rules() -> None:
    # candidates: the same answer stands; an entity both ways but of two types has no type; otherwise no entity
    assert agreed_choices(DEFAULT, ["place", "facility", "place", "too general", None],
                          ["place", "organisation", "not relevant", "too general", "place"]) == [
        "place", UNSURE, CHANGED, "too general", None]
    # links: a relation stands only when both answers chose it in the same direction
    a_b, b_a = ("causes", "A", "B"), ("causes", "B", "A")
    assert agreed_links([a_b, a_b, None, ("uses", "A", "B")], [a_b, b_a, a_b, ("supplies", "A", "B")]) == [a_b, None, None, None]
