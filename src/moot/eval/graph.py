"""The graph reasoning benchmark: seeded documents with a gold graph, a scorer, and a one-call baseline.

``make_case(seed)`` writes a small world in three dated documents (YAML front matter naming a
publisher, who is named once in a body too, and is provenance, not an entity): eight made-up entities (each with a
unique invented name, and an alias in another wording, so entity resolution is tested), the
relations between them stated by sentence templates (some causal, some only "associated with",
two of them repeated in a second document), and one *deliberately missing link*: the documents
say that A affects C but that how is unknown, while the gold graph holds the hidden mediator.

``score(case, prediction)`` scores any graph: entity precision/recall after resolution (a second
node for one entity counts as a false positive), edge precision/recall (directed and not), the
share of quotes that really occur in the documents, whether the missing link is covered by a
placeholder (or a gap) linked to both ends, and calibration: the error rate of low-confidence
(≤ 0.5) and high-confidence elements. Nothing here imports a team: a team is wired in by the CLI
as a :class:`GraphSystem`; :class:`OneCallBaseline` is the baseline a user would try first.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, Field

from moot.models.base import ModelSettings, Usage
from moot.text.frontmatter import read_front_matter

_SYLLABLES = ("dra", "vik", "os", "mo", "tel", "quor", "bren", "lit", "kal", "sen", "vor", "ul", "ess", "tam", "rin",
              "gad", "fol", "nar", "pek", "ys")
_KINDS = (("mill", "the mill at {n}"), ("river", "the {n} stream"), ("lake", "{n} water"), ("farm", "the {n} farmstead"),
          ("salt", "{n} salts"), ("trout", "{n} fish"), ("council", "the {n} board"), ("plant", "the {n} works"))

_TEMPLATES: dict[str, tuple[str, ...]] = {
    "causes": ("{a} causes {b}.", "{a} leads to {b}, because it feeds it."),
    "increases": ("{a} raises {b}.", "More {a} means more {b}."),
    "decreases": ("{a} reduces {b}.", "{a} lowers {b} every year."),
    "supplies": ("{a} supplies {b}.", "{a} delivers water to {b}."),
    "operates": ("{a} operates {b}.", "{a} runs {b}."),
    "uses": ("{a} uses {b}.", "{a} relies on {b}."),
    "regulates": ("{a} regulates {b}.", "{a} sets the rules for {b}."),
    "correlates_with": ("{a} may be linked to {b}.", "{a} is suspected to go together with {b}."),
}
"""A ``correlates_with`` edge is the hedged one: its sentences say "may" or "is suspected"."""
_FILLER = ("The area has been mapped many times.", "Local records go back a long way.", "Visitors come in summer.")
_PUBLISHERS = ("Valley Courier", "Harbour Gazette", "County Ledger", "Fjord Weekly", "Lowland Herald", "Ridge Bulletin")
_TITLES = ("Notes from the valley", "What the survey found", "Council meeting report")


class GoldEntity(BaseModel):
    id: str
    name: str
    alias: str
    token: str
    """The invented word only this entity's names contain (how a predicted label is matched)."""
    hidden: bool = False
    """The missing link's mediator: in the gold graph, named in no document."""


class GoldEdge(BaseModel):
    source: str
    target: str
    type: str
    hedged: bool = False
    corroborated: bool = False


class GraphCase(BaseModel):
    seed: int
    question: str
    documents: dict[str, str]
    entities: list[GoldEntity]
    edges: list[GoldEdge]
    missing_link: tuple[str, str]
    """The two entities (ids) between which the mediator is missing."""
    publishers: list[str] = []
    """Who published each document (front matter, and named once in a body): provenance, never an entity."""


def _name(rng: random.Random, used: set[str]) -> str:
    while True:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(2))
        if word not in used and len(word) >= 4:
            used.add(word)
            return word.capitalize()


def make_case(seed: int) -> GraphCase:
    """One seeded world: eight entities (one hidden), seven stated edges, three documents."""
    rng = random.Random(seed)
    used: set[str] = set()
    kinds = list(_KINDS)
    rng.shuffle(kinds)
    entities = []
    for i, (kind, alias) in enumerate(kinds):
        n = _name(rng, used)
        entities.append(GoldEntity(id=f"g{i}", name=f"{n} {kind}", alias=alias.format(n=n), token=n.lower()))
    entities[-1].hidden = True  # the mediator
    visible = [e for e in entities if not e.hidden]
    order = visible[:]
    rng.shuffle(order)
    edges: list[GoldEdge] = []
    types = list(_TEMPLATES)
    for a, b in zip(order, order[1:]):  # a chain through all visible entities ...
        t = rng.choice(types)
        edges.append(GoldEdge(source=a.id, target=b.id, type=t, hedged=t == "correlates_with"))
    extra = rng.sample(range(len(order) - 2), 1)[0]  # ... and one cross link
    t = rng.choice(types)
    edges.append(GoldEdge(source=order[extra].id, target=order[extra + 2].id, type=t, hedged=t == "correlates_with"))
    a, c = order[0], order[-1]
    mediator = entities[-1]
    for e in rng.sample(edges, 2):
        e.corroborated = True
    by_id = {e.id: e for e in entities}
    docs: list[list[str]] = [[], [], []]
    for k, e in enumerate(edges):
        src, dst = by_id[e.source], by_id[e.target]
        docs[k % 3].append(rng.choice(_TEMPLATES[e.type]).format(a=src.name, b=dst.name))
        if e.corroborated:  # said again elsewhere, in other words and with the aliases
            docs[(k + 1) % 3].append(_TEMPLATES[e.type][1].format(a=src.alias, b=dst.alias))
    docs[2].append(f"{a.name} affects {c.name}, but how it does so is unknown.")
    for d in docs:
        d.insert(rng.randrange(len(d) + 1), rng.choice(_FILLER))
    publishers = rng.sample(_PUBLISHERS, 3)
    docs[0].append(f"The {publishers[0]} asked {a.name} for comment.")  # the publisher in a body, too
    texts = {}
    for i, d in enumerate(docs):
        head = (f"---\ntitle: \"{_TITLES[i]}\"\nsource: {publishers[i]}\npublished: 2026-0{i + 3}-1{i}\n---\n\n")
        texts[f"report-{i + 1}.md"] = head + " ".join(s[0].upper() + s[1:] for s in d) + "\n"
    return GraphCase(seed=seed, question=f"How does {a.name} affect {c.name}?", documents=texts, entities=entities,
                     edges=[*edges, GoldEdge(source=a.id, target=c.id, type="related_to")], missing_link=(a.id, c.id),
                     publishers=publishers)
    # (mediator stays out of every document; it is what the placeholder should stand for)


# --------------------------------------------------------------------------- predictions


@dataclass
class PredictedNode:
    id: str
    label: str
    aliases: list[str] = field(default_factory=list)
    confidence: float | None = None
    placeholder: bool = False
    quotes: list[str] = field(default_factory=list)


@dataclass
class PredictedEdge:
    source: str
    target: str
    type: str
    strength: float | None = None
    provisional: bool = False
    quotes: list[str] = field(default_factory=list)


@dataclass
class GraphPrediction:
    """Any system's graph, in the scorer's terms."""

    nodes: list[PredictedNode] = field(default_factory=list)
    edges: list[PredictedEdge] = field(default_factory=list)
    gaps: list[list[str]] = field(default_factory=list)
    """Node ids each gap sits between."""
    gap_texts: list[str] = field(default_factory=list)
    """What each gap says (its description, its suggested placeholder)."""
    path: list[str] | None = None
    """The node ids of the system's answer path from the question's subject to its object, if it gives one."""
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    run_id: str = ""
    note: str = ""


class GraphSystem(Protocol):
    name: str

    async def build(self, case: GraphCase, paths: list[str]) -> GraphPrediction: ...


# --------------------------------------------------------------------------- scoring


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[\u2018\u2019]", "'", text).lower().split())


def _match(case: GraphCase, labels: list[str]) -> str | None:
    words = set(re.findall(r"\w+", " ".join(labels).lower()))
    hits = [e.id for e in case.entities if e.token in words]
    return hits[0] if len(hits) == 1 else None


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def score(case: GraphCase, pred: GraphPrediction) -> dict[str, Any]:
    """Every measure for one case (see the module docstring)."""
    visible = {e.id for e in case.entities if not e.hidden}
    mapping: dict[str, str | None] = {}
    seen_gold: set[str] = set()
    entity_ok = 0
    calib: dict[str, list[int]] = {"low": [0, 0], "high": [0, 0]}  # [elements, errors]

    def bucket(conf: float | None, error: bool) -> None:
        if conf is None:
            return
        b = calib["low" if conf <= 0.5 else "high"]
        b[0] += 1
        b[1] += int(error)

    entities = [n for n in pred.nodes if not n.placeholder]
    publisher_nodes = sum(1 for n in entities if any(p.lower() in n.label.lower() for p in case.publishers))
    off_graph: list[str] = []
    second: list[str] = []
    for n in entities:
        g = _match(case, [n.label, *n.aliases])
        mapping[n.id] = g
        good = g is not None and g in visible and g not in seen_gold
        if good:
            seen_gold.add(g)  # type: ignore[arg-type]
            entity_ok += 1
        else:
            (off_graph if g is None else second).append(n.label)
        bucket(n.confidence, not good)
    gold_directed = {(e.source, e.target) for e in case.edges}
    gold_undirected = {frozenset(p) for p in gold_directed}
    found_d: set[tuple[str, str]] = set()
    found_u: set[frozenset[str]] = set()
    ok_d = ok_u = scored_edges = 0
    for e in pred.edges:
        s, t = mapping.get(e.source), mapping.get(e.target)
        if e.source not in mapping or e.target not in mapping:
            continue  # an edge to a placeholder is scored as missing-link coverage, not here
        scored_edges += 1
        und = frozenset((s, t)) if s and t and s != t else None
        good_u = und is not None and und in gold_undirected
        good_d = good_u and (s, t) in gold_directed
        ok_u += int(good_u)
        ok_d += int(good_d)
        if good_u:
            found_u.add(und)  # type: ignore[arg-type]
        if good_d:
            found_d.add((s, t))  # type: ignore[arg-type]
        bucket(e.strength, not good_u)
    corpus = _norm(" ".join(read_front_matter(t).body for t in case.documents.values()))  # front matter is no evidence
    quotes = [q for n in entities for q in n.quotes] + [q for e in pred.edges if not e.provisional for q in e.quotes]
    grounded = sum(1 for q in quotes if _norm(q).strip(" .\"'") in corpus)
    claims = len(entities) + sum(1 for e in pred.edges if not e.provisional)
    with_quote = sum(1 for n in entities if n.quotes) + sum(1 for e in pred.edges if not e.provisional and e.quotes)
    a, c = case.missing_link
    covered = False
    for p in (n for n in pred.nodes if n.placeholder):
        ends = {mapping.get(x) for e in pred.edges for x in (e.source, e.target) if p.id in (e.source, e.target)}
        covered = covered or {a, c} <= ends
    covered = covered or any({a, c} <= {mapping.get(x) for x in gap} for gap in pred.gaps)
    return {
        "seed": case.seed,
        "entity_precision": _ratio(entity_ok, len(entities)), "entity_recall": _ratio(len(seen_gold), len(visible)),
        "duplicates": sum(1 for n in entities if mapping[n.id] is not None) - len(seen_gold),
        "off_graph_labels": off_graph, "duplicate_labels": second,
        "edge_precision_directed": _ratio(ok_d, scored_edges), "edge_recall_directed": _ratio(len(found_d), len(gold_directed)),
        "edge_precision_undirected": _ratio(ok_u, scored_edges),
        "edge_recall_undirected": _ratio(len(found_u), len(gold_undirected)),
        "quote_grounding": _ratio(grounded, len(quotes)), "claims_with_quote": _ratio(with_quote, claims),
        "missing_link_covered": covered, "publisher_nodes": publisher_nodes,
        "low_confidence": {"elements": calib["low"][0], "error_rate": _ratio(calib["low"][1], calib["low"][0])},
        "high_confidence": {"elements": calib["high"][0], "error_rate": _ratio(calib["high"][1], calib["high"][0])},
        "nodes": len(pred.nodes), "edges": len(pred.edges),
        "calls": pred.usage.requests, "tokens": pred.usage.total_tokens, "seconds": round(pred.seconds, 2),
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over cases (``None`` values left out); sums for calls, tokens, seconds; calibration pooled."""
    out: dict[str, Any] = {"cases": len(rows)}
    keys = [k for k, v in rows[0].items() if k not in ("seed", "low_confidence", "high_confidence")
            and (v is None or isinstance(v, (int, float)))] if rows else []
    for k in keys:
        values = [r[k] for r in rows if r[k] is not None]
        if k in ("calls", "tokens", "seconds", "nodes", "edges", "duplicates", "publisher_nodes"):
            out[k] = round(sum(values), 2)
        elif k == "missing_link_covered":
            out[k] = f"{sum(values)}/{len(values)}"
        else:
            out[k] = round(sum(values) / len(values), 3) if values else None
    for b in ("low_confidence", "high_confidence"):
        n = sum(r[b]["elements"] for r in rows)
        errors = sum(round((r[b]["error_rate"] or 0) * r[b]["elements"]) for r in rows)
        out[b] = {"elements": n, "error_rate": _ratio(errors, n)}
    return out


# --------------------------------------------------------------------------- the baseline


class BaselineEntity(BaseModel):
    label: str = Field(max_length=80)
    quote: str = Field(max_length=200)


class BaselineRelation(BaseModel):
    quote: str = Field(max_length=200)
    source: str = Field(max_length=80)
    type: str = Field(max_length=30)
    target: str = Field(max_length=80)


class BaselineGap(BaseModel):
    description: str = Field(max_length=160)
    between: list[str] = Field(default_factory=list, max_length=2)


class BaselineGraph(BaseModel):
    """A whole graph in one answer."""

    entities: list[BaselineEntity] = Field(default_factory=list, max_length=12)
    relationships: list[BaselineRelation] = Field(default_factory=list, max_length=12)
    gaps: list[BaselineGap] = Field(default_factory=list, max_length=3)


BASELINE_PROMPT = (
    "You turn documents into a knowledge graph. Answer in JSON with: entities (label as written, and a quote "
    "copied from a document that names it); relationships (a quote copied from a document that states the link, "
    "source and target entity labels, and a type such as causes, increases, decreases, supplies, operates, uses, "
    "regulates, correlates_with, related_to); gaps (where a document says a link is unknown: a description and "
    "the two entity labels)."
)


class OneCallBaseline:
    """One model call with every document in the prompt that returns the whole graph (same schema style)."""

    name = "one-call"

    def __init__(self, model: Any) -> None:
        self.model = model

    async def build(self, case: GraphCase, paths: list[str]) -> GraphPrediction:
        from moot.runtime import SubAgent

        agent = SubAgent("one-call", "extracts a graph in one answer", BASELINE_PROMPT, model=self.model,
                         output_type=BaselineGraph, max_turns=2, settings=ModelSettings(max_tokens=1200, temperature=0.0))
        docs = "\n\n".join(f"[{name}]\n{text}" for name, text in case.documents.items())
        started = time.perf_counter()
        result = await agent.run(f"Question: {case.question}\n\nDocuments:\n{docs}")
        pred = GraphPrediction(usage=result.usage, seconds=time.perf_counter() - started, note=result.stop_reason)
        out = result.output if isinstance(result.output, BaselineGraph) else BaselineGraph()
        ids: dict[str, str] = {}

        def node(label: str, quote: str = "") -> str:
            key = " ".join(label.lower().split())
            if key not in ids:
                ids[key] = f"n{len(ids)}"
                pred.nodes.append(PredictedNode(id=ids[key], label=label, quotes=[quote] if quote else []))
            return ids[key]

        for e in out.entities:
            node(e.label, e.quote)
        for r in out.relationships:
            pred.edges.append(PredictedEdge(source=node(r.source), target=node(r.target), type=r.type, quotes=[r.quote]))
        for g in out.gaps:
            pred.gaps.append([node(b) for b in g.between])
            pred.gap_texts.append(g.description)
        return pred


__all__ = ["GraphCase", "GraphPrediction", "GraphSystem", "OneCallBaseline", "PredictedEdge", "PredictedNode", "make_case",
           "score", "summarise"]
