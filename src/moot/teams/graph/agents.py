"""The five agents of the graph team, each a :class:`~moot.runtime.SubAgent` with a JSON schema.

The model *chooses* inside these schemas (which entities, which relation from the closed
vocabulary, which evidence features apply, whether two labels are one thing); Python computes
and checks everything else (see :mod:`moot.teams.graph.build` and :mod:`moot.teams.graph.quantify`).
Where an answer must name something that already exists (an element to label, a gap, a central
node), the schema is built per call with the allowed ids as an enum, so the constrained decoder
cannot name anything else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.models.base import ModelSettings
from moot.runtime import SubAgent, load_prompt
from moot.teams.graph.scaffold import RELATION_MEANINGS, RelationType

AGENT_NAMES = ("mapper", "skeptic", "placeholder", "quantifier", "hypothesizer")
"""The agent registry, in the order they act in an iteration."""


def _choice(ids: list[str]) -> Any:
    return Literal[tuple(ids)]  # type: ignore[valid-type]


# --------------------------------------------------------------------------- mapper


class MappedEntity(BaseModel):
    label: str = Field(max_length=60, description="the entity's name as written in the text")
    why_relevant: str = Field(default="", max_length=80)
    quote: str = Field(max_length=120, description="words copied exactly from a passage")


class MapperOutput(BaseModel):
    """The entities the passages name (the mapper's first call for a question)."""

    entities: list[MappedEntity] = Field(min_length=1, max_length=6)


def links_output(labels: list[str]) -> type[BaseModel]:
    """The mapper's second call: links and gaps between entities it may only choose from ``labels``."""
    choice = _choice(labels)
    relation = create_model("MappedRelation", quote=(str, Field(max_length=160)), source=(choice, ...),
                            type=(RelationType, ...), target=(choice, ...))
    gap = create_model("MappedGap", quote=(str, Field(max_length=160)),
                       between=(list[choice], Field(min_length=1, max_length=2)))  # type: ignore[valid-type]
    return create_model("LinksOutput",
                        relationships=(list[relation], Field(default_factory=list, max_length=4)),  # type: ignore[valid-type]
                        gaps=(list[gap], Field(default_factory=list, max_length=2)))  # type: ignore[valid-type]


class MergeDecision(BaseModel):
    pair: int
    same: bool


class MergeOutput(BaseModel):
    """For each numbered pair of labels: do they name the same thing?"""

    decisions: list[MergeDecision] = Field(default_factory=list, max_length=12)


TOOL_TURNS = 2
"""Extra model requests for an agent given a tool server (each tool round is one)."""


def mapper_agent(model: Any, tools: Sequence[Any] = ()) -> SubAgent:
    return SubAgent("mapper", "names the entities in the evidence", load_prompt("mapper", __package__), model=model,
                    output_type=MapperOutput, max_turns=2 + (TOOL_TURNS if tools else 0), tools=tools,
                    settings=ModelSettings(max_tokens=380, temperature=0.0))


def links_agent(model: Any, labels: list[str]) -> SubAgent:
    """The mapper's second call: which of the entities the passages link, and how (choices from enums)."""
    types = "\n".join(f"  {name}: {meaning}" for name, meaning in RELATION_MEANINGS.items())
    return SubAgent("mapper", "links the entities the evidence relates", load_prompt("links", __package__).replace("{relation_types}", types),
                    model=model, output_type=links_output(labels), max_turns=2,
                    settings=ModelSettings(max_tokens=480, temperature=0.0))


def merge_agent(model: Any) -> SubAgent:
    """The mapper's identity check: same agent, its merge decisions under their own schema."""
    return SubAgent("mapper", "decides whether two labels name one thing", load_prompt("merge", __package__), model=model,
                    output_type=MergeOutput, max_turns=2, settings=ModelSettings(max_tokens=200, temperature=0.0))


# --------------------------------------------------------------------------- quantifier


def quantifier_output(edge_ids: list[str], entity_ids: list[str]) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    if edge_ids:
        edge_label = create_model(
            "EdgeLabel", id=(_choice(edge_ids), ...),
            evidence_kind=(Literal["causal", "correlational", "none"], ...),
            theoretical_basis=(bool, False), counter_evidence=(bool, False))
        fields["relationships"] = (list[edge_label], Field(default_factory=list, max_length=len(edge_ids)))  # type: ignore[valid-type]
    if entity_ids:
        entity_label = create_model("EntityLabel", id=(_choice(entity_ids), ...),
                                    source_kind=(Literal["study", "report", "news", "blog", "unknown"], "unknown"))
        fields["entities"] = (list[entity_label], Field(default_factory=list, max_length=len(entity_ids)))  # type: ignore[valid-type]
    return create_model("QuantifierOutput", **fields)


def quantifier_agent(model: Any, edge_ids: list[str], entity_ids: list[str]) -> SubAgent:
    return SubAgent("quantifier", "labels what each piece of evidence shows", load_prompt("quantifier", __package__), model=model,
                    output_type=quantifier_output(edge_ids, entity_ids), max_turns=2,
                    settings=ModelSettings(max_tokens=60 + 40 * (len(edge_ids) + len(entity_ids)), temperature=0.0))


# --------------------------------------------------------------------------- skeptic


def skeptic_output(ids: list[str]) -> type[BaseModel]:
    challenge = create_model("Challenge", id=(_choice(ids), ...), supported=(bool, ...),
                             would_disconfirm=(str, Field(default="", max_length=160)))
    return create_model("SkepticOutput", challenges=(list[challenge], Field(default_factory=list, max_length=len(ids))))  # type: ignore[valid-type]


def skeptic_agent(model: Any, ids: list[str], tools: Sequence[Any] = ()) -> SubAgent:
    return SubAgent("skeptic", "challenges confident claims against their quotes", load_prompt("skeptic", __package__), model=model,
                    output_type=skeptic_output(ids), max_turns=2 + (TOOL_TURNS if tools else 0), tools=tools,
                    settings=ModelSettings(max_tokens=60 + 70 * len(ids), temperature=0.0))


# --------------------------------------------------------------------------- placeholder generator


def placeholder_output(gap_ids: list[str]) -> type[BaseModel]:
    item = create_model("PlaceholderProposal", gap=(_choice(gap_ids), ...),
                        label=(str, Field(max_length=60)), confirm=(str, Field(default="", max_length=160)),
                        disconfirm=(str, Field(default="", max_length=160)))
    return create_model("PlaceholderOutput", placeholders=(list[item], Field(default_factory=list, max_length=len(gap_ids))))  # type: ignore[valid-type]


def placeholder_agent(model: Any, gap_ids: list[str]) -> SubAgent:
    return SubAgent("placeholder", "proposes a provisional node for each gap", load_prompt("placeholder", __package__), model=model,
                    output_type=placeholder_output(gap_ids), max_turns=2,
                    settings=ModelSettings(max_tokens=60 + 110 * len(gap_ids), temperature=0.0))


# --------------------------------------------------------------------------- hypothesizer


def hypothesizer_output(node_labels: list[str], edge_ids: list[str]) -> type[BaseModel]:
    placeholder = create_model("HypothesisPlaceholderOut", label=(str, Field(max_length=60)),
                               reason=(str, Field(default="", max_length=120)),
                               position=(Literal["central", "peripheral", "bridge"], "peripheral"))
    fields: dict[str, Any] = {
        "name": (str, Field(max_length=60)),
        "rationale": (str, Field(default="", max_length=200)),
        "pattern": (Literal["linear", "hub_spoke", "network", "hierarchical"], ...),
        "central_nodes": (list[_choice(node_labels)], Field(default_factory=list, max_length=3)),  # type: ignore[misc]
    }
    if edge_ids:
        fields["key_edges"] = (list[_choice(edge_ids)], Field(default_factory=list, max_length=2))  # type: ignore[misc]
    fields["placeholders"] = (list[placeholder], Field(default_factory=list, max_length=1))  # type: ignore[valid-type]
    fields["testable_predictions"] = (list[str], Field(default_factory=list, min_length=1, max_length=2))
    hypothesis = create_model("HypothesisOut", **fields)
    return create_model("HypothesizerOutput", hypotheses=(list[hypothesis], Field(min_length=2, max_length=3)))  # type: ignore[valid-type]


def hypothesizer_agent(model: Any, node_labels: list[str], edge_ids: list[str], tools: Sequence[Any] = ()) -> SubAgent:
    return SubAgent("hypothesizer", "proposes alternative structures with testable predictions", load_prompt("hypothesizer", __package__),
                    model=model, output_type=hypothesizer_output(node_labels, edge_ids), max_turns=2 + (TOOL_TURNS if tools else 0),
                    tools=tools,
                    settings=ModelSettings(max_tokens=650, temperature=0.0))


__all__ = [
    "AGENT_NAMES", "MapperOutput", "links_agent", "MergeOutput", "hypothesizer_agent", "mapper_agent", "merge_agent",
    "placeholder_agent", "quantifier_agent", "skeptic_agent",
]
