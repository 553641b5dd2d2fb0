"""The bridge specialist: "the X that …" questions answered in two hops, the model choosing among names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelRequest
from moot.teams.learning.bridge import bridge_candidates, read_hop
from learning_support import ask

SUPPLIERS = """# Grain for the Tarn bakeries

Tarn Herald, 3 April 2025. Two producers supply the town's bakers. Copse Farm, owned by Ilka Brandt, sells wheat
flour at 2 crowns a kilo. Weir Mill, owned by Odo Fenn, grinds spelt and sells spelt flour at 4 crowns a kilo.

At the county bread show on 29 March, the Hollin bakery of the Tarn co-op won first prize for spelt bread. Second
prize for spelt bread went to the Quay bakery.
"""

BAKERIES = """# The Tarn co-op's two bakeries

Tarn Herald, 1 March 2025. The Quay bakery is managed by Rosa Lind. All of its flour comes from Copse Farm.
The Hollin bakery is managed by Bram Ost, who trained as a miller. Hollin buys its spelt flour from Weir Mill.
"""


@pytest.mark.parametrize(("question", "kind", "clause", "rest"), [
    ("Who owns the farm that supplies the Quay bakery with flour?", "farm", "supplies the Quay bakery with flour",
     "Who owns {bridge}?"),
    ("Who manages the Tarn bakery that won first prize for spelt bread at the county bread show?", "bakery",
     "won first prize for spelt bread at the county bread show", "Who manages {bridge}?"),
    ("What is the price per kilo of flour from the mill that supplies the Hollin bakery?", "mill",
     "supplies the Hollin bakery", "What is the price per kilo of flour from {bridge}?"),
])
def test_the_clause_is_read_from_the_question(question: str, kind: str, clause: str, rest: str) -> None:
    hop = read_hop(question)
    assert hop is not None and (hop.kind, hop.clause, hop.rest) == (kind, clause, rest)


def test_no_hop_without_a_clause_or_a_value_asked() -> None:
    assert read_hop("Who owns Copse Farm?") is None
    assert read_hop("Why did the bakery that won the prize close?") is None  # asks no value


def test_bridge_candidates_are_names_of_the_clauses_kind() -> None:
    hop = read_hop("Who manages the Tarn bakery that won first prize for spelt bread?")
    assert hop is not None
    sentence = "At the county bread show, the Hollin bakery of the Tarn co-op won first prize; Copse Farm came second."
    assert bridge_candidates(hop, [sentence], "") == ["Hollin bakery"]


@pytest.fixture
def kb(tmp_path: Path) -> Any:
    base = KnowledgeBase.open(tmp_path / "tarn.sqlite3")
    base.add_episode(SUPPLIERS, source="Tarn Herald", published="2025-04-03")
    base.add_episode(BAKERIES, source="Tarn Herald", published="2025-03-01")
    base.add_facts([
        Fact("The Quay bakery is managed by Rosa Lind", entity="Quay bakery", attribute="manager", value="Rosa Lind",
             source="Tarn Herald"),
        Fact("All of the Quay bakery's flour comes from Copse Farm", entity="Quay bakery", attribute="flour supplier",
             value="Copse Farm", source="Tarn Herald"),
        Fact("Copse Farm sells wheat flour at 2 crowns a kilo", entity="Copse Farm", attribute="price",
             value="2 crowns a kilo", source="Tarn Herald"),
    ])
    yield base
    base.close()


def test_two_hops_through_the_named_farm(kb: KnowledgeBase) -> None:
    def choose(request: ModelRequest) -> Any:
        assert request.output is not None
        options = request.output.json_schema["properties"]["choice"]["enum"]
        return {"choice": "Ilka Brandt" if "Ilka Brandt" in options else options[0]}

    question = "Who owns the farm that supplies the Quay bakery with flour?"
    answer, _ = ask(kb, question, {"single": "The Quay bakery is managed by Rosa Lind [#1].", "bridge": choose})
    assert answer.answer.startswith("Ilka Brandt (Copse Farm:")
    assert "owned by Ilka Brandt" in answer.answer and "Rosa Lind" not in answer.answer
    assert any("two hops, through Copse Farm" in n for n in answer.trace.notes)
    single, _ = ask(kb, question, {"single": "The Quay bakery is managed by Rosa Lind [#1]."}, mode="single")
    assert single.answer == "The Quay bakery is managed by Rosa Lind [#1]."


def test_the_model_chooses_the_bridge_when_several_names_fit(kb: KnowledgeBase) -> None:
    asked: list[str] = []

    def choose(request: ModelRequest) -> Any:
        asked.append(request.messages[-1].content)
        assert request.output is not None
        options = request.output.json_schema["properties"]["choice"]["enum"]
        return {"choice": "Hollin bakery" if "Hollin bakery" in options else options[0]}

    answer, _ = ask(kb, "Who manages the Tarn bakery that won first prize for spelt bread at the county bread show?",
                    {"single": "Rosa Lind manages it.", "bridge": choose})
    assert answer.answer.startswith("Bram Ost (Hollin bakery:"), answer.answer
    assert "Which bakery won first prize" in asked[0] and "Quay bakery" in asked[0]


def test_a_single_draft_that_names_the_same_answer_is_kept(kb: KnowledgeBase) -> None:
    answer, _ = ask(kb, "Who owns the farm that supplies the Quay bakery with flour?",
                    {"single": "Ilka Brandt owns Copse Farm.", "bridge": {"choice": "Ilka Brandt"}})
    assert answer.answer == "Ilka Brandt owns Copse Farm."
