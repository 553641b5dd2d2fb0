"""The five agents of the graph team, each a :class:`~moot.runtime.SubAgent` with a JSON schema.

Python proposes, the model chooses: every answer the model writes is a choice among options
that Python put in the schema as an enum (which of the question's phrases is its subject, what
type each candidate phrase is or that it is no entity, which known entity a new label names,
which sentence of relation phrases a pair's text states, or the pair's own "no link"). Where an answer must name
something that exists (an element to label, a gap, a central node), the allowed names are the
enum, so the constrained decoder cannot name anything else. The schemas are built per call;
each has one property per item, in order, so no item can be skipped or answered twice.

Every answer of a batch is the item's own: it starts with the item's words ("X:
organisation" for candidate X, "A and B: no link" for pair A, B), so no two items share an answer. A small model
answering a batch whose items share one set of answers copies its first answer down the whole
batch (measured: 24 candidates all "publisher or author", 85 pairs all "none"); with answers
of their own, each decision is written right after the words it is about.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.models.base import ModelSettings, odds_settings
from moot.runtime import SubAgent, load_prompt
from moot.teams.graph.vocabulary import Vocabulary, item_answers, mapper_options

AGENT_NAMES = ("mapper", "skeptic", "placeholder", "quantifier", "hypothesizer")
"""The agent registry, in the order they act in an iteration."""

TOOL_TURNS = 2
"""Extra model requests for an agent given a tool server (each tool round is one)."""

NO_OBJECT = "nothing else"


def _choice(ids: Sequence[str]) -> Any:
    return Literal[tuple(dict.fromkeys(ids))]  # type: ignore[valid-type]


def _settings(tokens: int) -> ModelSettings:
    return ModelSettings(max_tokens=tokens, temperature=0.0)


# --------------------------------------------------------------------------- mapper


def question_output(phrases: list[str]) -> type[BaseModel]:
    """Which of the question's own phrases it starts from and which it asks about."""
    return create_model("QuestionFocus", subject=(_choice(phrases), ...),
                        object=(_choice([*phrases, NO_OBJECT]), ...))


def question_agent(model: Any, phrases: list[str]) -> SubAgent:
    return SubAgent("mapper", "finds what the question starts from and what it asks about", load_prompt("question", __package__),
                    model=model, output_type=question_output(phrases), max_turns=2, settings=_settings(80))


def choices_output(labels: Sequence[str], options: Sequence[str]) -> type[BaseModel]:
    """One answer per numbered candidate, its own: its words and an entity type, or why it is no entity."""
    fields: dict[str, Any] = {f"c{i}": (_choice(list(item_answers(label, options))), ...) for i, label in enumerate(labels, 1)}
    return create_model("EntityChoices", **fields)


def mapper_agent(model: Any, labels: Sequence[str], vocabulary: Vocabulary, tools: Sequence[Any] = ()) -> SubAgent:
    """The mapper's first call for a batch of sentences: which candidate phrases are entities, of which type."""
    prompt = (load_prompt("mapper", __package__)
              .replace("{kinds}", "\n".join(f"  {k}: {v}" for k, v in vocabulary.kinds.items()))
              .replace("{rejections}", "\n".join(f"  {k}: {v}" for k, v in vocabulary.rejections.items())))
    longest = max((len(label) for label in labels), default=20)
    return SubAgent("mapper", "chooses which candidate phrases are entities of the question's world",
                    prompt, model=model, output_type=choices_output(labels, mapper_options(vocabulary)),
                    max_turns=2 + (TOOL_TURNS if tools else 0), tools=tools,
                    settings=_settings(40 + len(labels) * (14 + longest // 3)))


def aliases_output(options: list[list[str]]) -> type[BaseModel]:
    """One answer per new label: the known entity it names, or "different"."""
    fields: dict[str, Any] = {f"a{i}": (_choice([*known, "different"]), ...) for i, known in enumerate(options, 1)}
    return create_model("AliasChoices", **fields)


def merge_agent(model: Any, options: list[list[str]]) -> SubAgent:
    """The mapper's identity check: which known entity a new label names, if any."""
    return SubAgent("mapper", "decides whether a new label names a known entity", load_prompt("merge", __package__), model=model,
                    output_type=aliases_output(options), max_turns=2, settings=_settings(30 + 16 * len(options)))


def links_output(options: list[list[str]]) -> type[BaseModel]:
    """One answer per numbered pair: the relation sentence its text states, or the pair's own "no link"."""
    fields: dict[str, Any] = {f"p{i}": (_choice(sentences), ...) for i, sentences in enumerate(options, 1)}
    return create_model("LinkChoices", **fields)


def links_agent(model: Any, options: list[list[str]], vocabulary: Vocabulary) -> SubAgent:
    """The mapper's second call: for each pair of entities that share a sentence, what that sentence says."""
    longest = max((len(o) for opts in options for o in opts), default=20)
    meanings = "\n".join(f"  {r.phrase}: {r.meaning}" for r in vocabulary.relations.values())
    return SubAgent("mapper", "chooses what each sentence states about a pair of entities",
                    load_prompt("links", __package__).replace("{relation_types}", meanings),
                    model=model, output_type=links_output(options), max_turns=2,
                    settings=_settings(30 + len(options) * (12 + longest // 3)))


def plain_agent(model: Any, role: str, *, alternatives: int | None = None) -> SubAgent:
    """The mapper asked one plain question: one generated token, read for its odds
    (:mod:`moot.teams.graph.plain`); ``alternatives``: how many likeliest first tokens it reads,
    where the answer may be any of a text's words rather than one of a few."""
    settings = odds_settings()
    if alternatives is not None:
        settings = settings.model_copy(update={"top_logprobs": alternatives})
    return SubAgent("mapper", role, load_prompt("plain", __package__), model=model, max_turns=1, settings=settings)


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
                    settings=_settings(60 + 40 * (len(edge_ids) + len(entity_ids))))


# --------------------------------------------------------------------------- skeptic


def skeptic_output(ids: list[str]) -> type[BaseModel]:
    challenge = create_model("Challenge", id=(_choice(ids), ...), supported=(bool, ...),
                             would_disconfirm=(str, Field(default="", max_length=160)))
    return create_model("SkepticOutput", challenges=(list[challenge], Field(default_factory=list, max_length=len(ids))))  # type: ignore[valid-type]


def skeptic_agent(model: Any, ids: list[str], tools: Sequence[Any] = ()) -> SubAgent:
    return SubAgent("skeptic", "challenges confident claims against their quotes", load_prompt("skeptic", __package__), model=model,
                    output_type=skeptic_output(ids), max_turns=2 + (TOOL_TURNS if tools else 0), tools=tools,
                    settings=_settings(60 + 70 * len(ids)))


# --------------------------------------------------------------------------- placeholder generator


def placeholder_output(gap_ids: list[str]) -> type[BaseModel]:
    item = create_model("PlaceholderProposal", gap=(_choice(gap_ids), ...),
                        label=(str, Field(max_length=60)), confirm=(str, Field(default="", max_length=160)),
                        disconfirm=(str, Field(default="", max_length=160)))
    return create_model("PlaceholderOutput", placeholders=(list[item], Field(default_factory=list, max_length=len(gap_ids))))  # type: ignore[valid-type]


def placeholder_agent(model: Any, gap_ids: list[str]) -> SubAgent:
    return SubAgent("placeholder", "proposes a provisional node for each gap", load_prompt("placeholder", __package__), model=model,
                    output_type=placeholder_output(gap_ids), max_turns=2, settings=_settings(60 + 110 * len(gap_ids)))


# --------------------------------------------------------------------------- hypothesizer


def hypothesizer_output(node_labels: list[str], relations: list[str], placeholders: list[str]) -> type[BaseModel]:
    """Structures that name existing nodes only: central nodes, links between nodes, a bridge placeholder."""
    node = _choice(node_labels)
    link = create_model("HypothesisLink", source=(node, ...), type=(_choice(relations), ...), target=(node, ...))
    fields: dict[str, Any] = {
        "name": (str, Field(max_length=60)),
        "rationale": (str, Field(default="", max_length=200)),
        "pattern": (Literal["linear", "hub_spoke", "network", "hierarchical"], ...),
        "central_nodes": (list[node], Field(default_factory=list, max_length=3)),  # type: ignore[valid-type]
        "key_links": (list[link], Field(default_factory=list, max_length=2)),  # type: ignore[valid-type]
        "bridge": (_choice([*placeholders, "none"]), "none"),
        "testable_predictions": (list[str], Field(default_factory=list, min_length=1, max_length=2)),
    }
    hypothesis = create_model("HypothesisOut", **fields)
    return create_model("HypothesizerOutput", hypotheses=(list[hypothesis], Field(min_length=2, max_length=3)))  # type: ignore[valid-type]


def hypothesizer_agent(model: Any, node_labels: list[str], relations: list[str], placeholders: list[str],
                       tools: Sequence[Any] = ()) -> SubAgent:
    return SubAgent("hypothesizer", "proposes alternative structures over the graph's own nodes", load_prompt("hypothesizer", __package__),
                    model=model, output_type=hypothesizer_output(node_labels, relations, placeholders),
                    max_turns=2 + (TOOL_TURNS if tools else 0), tools=tools, settings=_settings(650))


__all__ = [
    "AGENT_NAMES", "NO_OBJECT", "hypothesizer_agent", "links_agent", "mapper_agent", "merge_agent", "placeholder_agent", "plain_agent",
    "quantifier_agent", "question_agent", "skeptic_agent",
]
