"""The noisy graph scaffold: typed nodes, edges, gaps and hypotheses, and the operations on them.

A scaffold is the graph the five agents grow together. Python owns every number in it:
confidence and strength come from :mod:`moot.teams.graph.quantify`, a placeholder can never
claim more than 0.5 (the model type refuses it), and :meth:`Scaffold.noise` is the noise-budget
check computed exactly as the design describes (the mean of the low-confidence share of nodes
and of edges). Lookups are by dictionary, so adding or resolving a node is O(1) on a graph of
ten thousand nodes (``bench/graph.py`` measures it).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, PrivateAttr

from moot.memory.facts import STOPWORDS, words

from moot.teams.graph.vocabulary import DEFAULT

RELATION_TYPES: tuple[str, ...] = tuple(DEFAULT.relations)
"""The default closed relation vocabulary (see :mod:`moot.teams.graph.vocabulary`)."""

RELATION_MEANINGS: dict[str, str] = {name: rel.meaning for name, rel in DEFAULT.relations.items()}

LOW = 0.5
"""An element at or below this confidence (nodes) or strength (edges) counts as low-confidence."""

DEFAULT_NOISE_BUDGET = 0.25

RARE_POSTING = 256
"""A label word shared by more entities than this is too common to find merge candidates by."""


class Evidence(BaseModel):
    """A quote that really occurs in a source (checked mechanically before it is stored)."""

    source: str
    quote: str
    chunk: int | None = None
    """The chunk of the source the quote was found in."""


class EvidenceFeatures(BaseModel):
    """What the evidence for one element shows: the inputs of the confidence and strength rules.

    The quantifier agent labels the kind of evidence and counter-evidence; Python fills in what
    it can count (sources, recency, consistency).
    """

    sources: int = 0
    """Distinct sources with a checked quote (corroboration is two or more)."""
    source_kind: Literal["study", "report", "news", "blog", "unknown"] = "unknown"
    age_years: float | None = None
    """Years between the evidence's newest date and the newest date in all sources (``None``: undated)."""
    consistent: bool = True
    """No contradiction found (the skeptic clears this when the quote does not support the element)."""
    evidence_kind: Literal["causal", "correlational", "none"] = "none"
    theoretical_basis: bool = False
    counter_evidence: bool = False
    hedged: bool = False
    """The quote hedges the claim ("may", "could", "is suspected"): low confidence by rule."""


class Measure(BaseModel):
    """A quantity the sources give for an entity ("fell by 40 %", "6.1 mg/L"), with its sentence."""

    text: str
    value: float
    unit: str = ""
    source: str = ""
    quote: str = ""


class EntityNode(BaseModel):
    """Something the sources talk about."""

    kind: Literal["entity"] = "entity"
    id: str
    label: str
    entity_type: str = ""
    """The type the model chose for it from the vocabulary ("facility", "substance", "woman")."""
    why_relevant: str = ""
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    evidence: list[Evidence] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    """Other labels resolved to this node ("the paper mill at Ostby" for "Ostby mill")."""
    measures: list[Measure] = Field(default_factory=list)
    """Quantities the sources give for it."""
    features: EvidenceFeatures = Field(default_factory=EvidenceFeatures)
    challenge: str = ""
    """What the skeptic said would disconfirm it, when it challenged it."""
    iteration: int = 0
    """The iteration that added it."""


class PlaceholderNode(BaseModel):
    """A provisional node standing for something the evidence implies but does not name."""

    kind: Literal["placeholder"] = "placeholder"
    id: str
    """``placeholder_{domain}_{n}``."""
    label: str
    """Starts with ``[PROVISIONAL]``."""
    description: str = ""
    confidence: float = Field(default=0.3, ge=0.0, le=LOW)
    """Never above 0.5: a placeholder is a guess by construction."""
    constraints: list[str] = Field(default_factory=list)
    """What would confirm it and what would disconfirm it."""
    gap_reference: str = ""
    iteration: int = 0


Node = Annotated[Union[EntityNode, PlaceholderNode], Field(discriminator="kind")]


class Edge(BaseModel):
    """A directed, typed relation between two nodes."""

    id: str
    source: str
    target: str
    type: str
    """A relation type of the run's vocabulary."""
    strength: float = Field(default=0.4, ge=0.0, le=1.0)
    provisional: bool = True
    """No checked quote states it (or it touches a placeholder): its strength stays at or below 0.5."""
    hedged: bool = False
    """Its quote hedges it ("may", "could", "is suspected"): its strength stays at or below 0.5."""
    evidence: list[Evidence] = Field(default_factory=list)
    features: EvidenceFeatures = Field(default_factory=EvidenceFeatures)
    challenge: str = ""
    iteration: int = 0


class Gap(BaseModel):
    """Something missing between known nodes (a mediator, an unexplained effect)."""

    id: str
    description: str
    between: list[str] = Field(default_factory=list)
    """Node ids the gap sits between."""
    reason: Literal["unknown", "disconnected"] = "unknown"
    """``unknown``: a source says the link or the factor is not known or not measured;
    ``disconnected``: the question links two parts of the graph that no evidence connects."""
    suggested_placeholder: str = ""
    domain: str = "general"
    placeholder: str = ""
    """The placeholder node made for it."""
    iteration: int = 0


class HypothesisPlaceholder(BaseModel):
    label: str
    reason: str = ""
    position: Literal["central", "peripheral", "bridge"] = "peripheral"


class KeyRelationship(BaseModel):
    source: str
    target: str
    type: str


class HypothesisStructure(BaseModel):
    pattern: Literal["linear", "hub_spoke", "network", "hierarchical"]
    central_nodes: list[str] = Field(default_factory=list)
    key_relationships: list[KeyRelationship] = Field(default_factory=list)


class StructuralHypothesis(BaseModel):
    """One alternative shape of the whole graph, with predictions that would test it."""

    name: str
    rationale: str = ""
    structure: HypothesisStructure
    placeholders: list[HypothesisPlaceholder] = Field(default_factory=list)
    testable_predictions: list[str] = Field(default_factory=list)


class GraphQuestion(BaseModel):
    """A question an agent asks of the evidence in one iteration."""

    id: str
    agent: str
    text: str
    focus: list[str] = Field(default_factory=list)
    """Node or edge ids it is about."""
    iteration: int = 0


class GraphAnswer(BaseModel):
    """What the evidence gave for one question, and what it changed in the graph."""

    question_id: str
    chunks: list[int] = Field(default_factory=list)
    added_nodes: list[str] = Field(default_factory=list)
    added_edges: list[str] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list)
    note: str = ""


class NoiseStatus(BaseModel):
    """The noise-budget check: is at least ``target`` of the graph honestly uncertain?"""

    satisfied: bool
    current: float
    target: float
    deficit: float
    node_ratio: float = 0.0
    edge_ratio: float = 0.0


class PathHop(BaseModel):
    """One step of the answer's path, with the sentence that states it."""

    edge: str
    source: str
    target: str
    type: str
    forward: bool = True
    """The path walks the edge from its source to its target (else against its direction)."""
    strength: float = 0.0
    quote: str = ""
    document: str = ""
    hedged: bool = False
    provisional: bool = False


class ScaffoldMeta(BaseModel):
    iteration: int = 0
    iteration_limit: int = 3
    noise_budget: float = Field(default=DEFAULT_NOISE_BUDGET, ge=0.0, le=1.0)
    converged: bool = False
    stop_reason: str = ""


def _slug(text: str, limit: int = 40) -> str:
    slug = "_".join(words(text))[:limit].strip("_")
    return slug or "node"


_LEAD = frozenset({"the", "a", "an", "this", "that", "these", "those"})


def label_key(label: str) -> str:
    """A label's identity key: case, punctuation, leading articles and plural ``s`` ignored."""
    tokens = words(label)
    while tokens and tokens[0] in _LEAD:
        tokens = tokens[1:]
    return " ".join(t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t for t in tokens)


def token_key(label: str) -> str:
    """A label's content words, sorted: "mill at Dravik" and "Dravik mill" share it."""
    return " ".join(sorted(label_tokens(label)))


def label_tokens(label: str) -> frozenset[str]:
    """The meaningful words of a label (stop words dropped, plurals folded)."""
    key = label_key(label)
    return frozenset(t for t in key.split() if t not in STOPWORDS)


def similar_labels(a: str, b: str) -> bool:
    """Whether two labels may name one thing and the mapper should be asked (not merged blindly).

    True when one label's words contain the other's ("Ostby mill" / "the paper mill at Ostby")
    or they share at least half their words.
    """
    ta, tb = label_tokens(a), label_tokens(b)
    if not ta or not tb or ta == tb:
        return False
    if ta <= tb or tb <= ta:
        return True
    return len(ta & tb) / len(ta | tb) >= 0.5


class Scaffold(BaseModel):
    """The whole graph plus its questions, answers and meta (the design's scaffold)."""

    question: str = ""
    subject: str = ""
    """The node the answer's path starts from: one of the question's phrases (chosen by the model, or
    the question's first named phrase when asked plainly), swapped with :attr:`object` where the
    vocabulary reads paths the way their links point and the stated links run from the object."""
    object: str = ""
    """The node the question asks about."""
    path: list[PathHop] = Field(default_factory=list)
    """The answer: a path from ``subject`` to ``object``, one hop per edge (empty: none was found)."""
    vocabulary: str = "default"
    documents: list[dict[str, Any]] = Field(default_factory=list)
    """Each source's metadata (title, publisher, author, date): provenance, never nodes."""
    nodes: dict[str, Node] = Field(default_factory=dict)
    edges: dict[str, Edge] = Field(default_factory=dict)
    gaps: dict[str, Gap] = Field(default_factory=dict)
    hypotheses: list[StructuralHypothesis] = Field(default_factory=list)
    graph_questions: list[GraphQuestion] = Field(default_factory=list)
    graph_answers: list[GraphAnswer] = Field(default_factory=list)
    meta: ScaffoldMeta = Field(default_factory=ScaffoldMeta)
    _by_key: dict[str, str] = PrivateAttr(default_factory=dict)
    _by_token: dict[str, set[str]] = PrivateAttr(default_factory=dict)
    _edge_by_triple: dict[tuple[str, str, str], str] = PrivateAttr(default_factory=dict)
    _counter: dict[str, int] = PrivateAttr(default_factory=dict)
    _adjacent: dict[str, set[str]] = PrivateAttr(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        for node in self.nodes.values():
            self._index_node(node)
        for edge in self.edges.values():
            self._edge_by_triple[(edge.source, edge.target, edge.type)] = edge.id
            self._link(edge)

    def _link(self, edge: Edge) -> None:
        self._adjacent.setdefault(edge.source, set()).add(edge.id)
        self._adjacent.setdefault(edge.target, set()).add(edge.id)

    # ------------------------------------------------------------------ ids and indexes

    def _new_id(self, stem: str, taken: dict[str, Any]) -> str:
        n = self._counter.get(stem, 0)
        while True:
            n += 1
            candidate = stem if n == 1 else f"{stem}_{n}"
            if candidate not in taken:
                self._counter[stem] = n
                return candidate

    def _index_node(self, node: EntityNode | PlaceholderNode) -> None:
        if isinstance(node, EntityNode):
            for label in (node.label, *node.aliases):
                self._by_key.setdefault(label_key(label), node.id)
                if token_key(label):
                    self._by_key.setdefault("~" + token_key(label), node.id)
                for token in label_tokens(label):
                    self._by_token.setdefault(token, set()).add(node.id)

    # ------------------------------------------------------------------ nodes

    def entities(self) -> list[EntityNode]:
        return [n for n in self.nodes.values() if isinstance(n, EntityNode)]

    def placeholders(self) -> list[PlaceholderNode]:
        return [n for n in self.nodes.values() if isinstance(n, PlaceholderNode)]

    def find(self, label: str) -> EntityNode | None:
        """The entity whose label or alias has this identity key, if any."""
        node_id = self._by_key.get(label_key(label)) or (self._by_key.get("~" + token_key(label)) if token_key(label) else None)
        node = self.nodes.get(node_id) if node_id else None
        return node if isinstance(node, EntityNode) else None

    def candidates(self, label: str, limit: int = 5) -> list[EntityNode]:
        """Entities whose labels may name the same thing as ``label`` (for a merge decision)."""
        # Candidates share a word with the label. A word hundreds of labels contain ("mill") adds
        # nothing but cost, so only the rarer words are looked up (the rarest one when all are common).
        postings = sorted((self._by_token.get(t, set()) for t in label_tokens(label)), key=len)
        rare = [p for p in postings if len(p) <= RARE_POSTING] or postings[:1]
        seen: set[str] = set().union(*rare) if rare else set()
        out = []
        for node_id in sorted(seen):
            node = self.nodes.get(node_id)
            if isinstance(node, EntityNode) and any(similar_labels(label, l) for l in (node.label, *node.aliases)):
                out.append(node)
                if len(out) >= limit:
                    break
        return out

    def add_entity(self, label: str, *, why_relevant: str = "", evidence: list[Evidence] | None = None,
                   iteration: int = 0) -> tuple[EntityNode, bool]:
        """Add an entity, or fold it into the one with the same identity key; returns (node, new)."""
        label = " ".join(label.split())
        existing = self.find(label)
        if existing is not None:
            self._add_evidence(existing.evidence, evidence or [])
            if not existing.why_relevant and why_relevant:
                existing.why_relevant = why_relevant
            return existing, False
        node = EntityNode(id=self._new_id(_slug(label), self.nodes), label=label, why_relevant=why_relevant,
                          evidence=list(evidence or []), iteration=iteration)
        self.nodes[node.id] = node
        self._index_node(node)
        return node, True

    def merge(self, keep_id: str, drop_id: str) -> EntityNode:
        """Merge entity ``drop_id`` into ``keep_id``: aliases, evidence and edges move; no duplicate edges."""
        keep, drop = self.nodes[keep_id], self.nodes[drop_id]
        if not isinstance(keep, EntityNode) or not isinstance(drop, EntityNode) or keep_id == drop_id:
            raise ValueError("only two different entities can be merged")
        for label in (drop.label, *drop.aliases):
            if label_key(label) != label_key(keep.label) and label not in keep.aliases:
                keep.aliases.append(label)
        self._add_evidence(keep.evidence, drop.evidence)
        del self.nodes[drop_id]
        for label in (drop.label, *drop.aliases):
            for key in (label_key(label), "~" + token_key(label)):
                if self._by_key.get(key) == drop_id:
                    self._by_key[key] = keep_id
            for token in label_tokens(label):
                self._by_token.get(token, set()).discard(drop_id)
        self._index_node(keep)
        for edge_id in sorted(self._adjacent.pop(drop_id, set())):
            edge = self.edges.pop(edge_id, None)
            if edge is None:
                continue
            self._edge_by_triple.pop((edge.source, edge.target, edge.type), None)
            for end in (edge.source, edge.target):
                self._adjacent.get(end, set()).discard(edge.id)
            source = keep_id if edge.source == drop_id else edge.source
            target = keep_id if edge.target == drop_id else edge.target
            if source != target:
                moved, _ = self.add_edge(source, target, edge.type, evidence=edge.evidence, provisional=edge.provisional,
                                         iteration=edge.iteration, edge_id=edge.id, hedged=edge.hedged)
                moved.features.hedged = moved.hedged
        for gap in self.gaps.values():
            gap.between = [keep_id if b == drop_id else b for b in gap.between]
        return keep

    def add_placeholder(self, gap: Gap, label: str, *, description: str = "", constraints: list[str] | None = None,
                        iteration: int = 0) -> PlaceholderNode:
        """One provisional node for a gap, linked to the nodes the gap sits between by provisional edges."""
        domain = _slug(gap.domain, 20)
        stem = f"placeholder_{domain}"
        n = self._counter.get(stem, 0) + 1
        self._counter[stem] = n
        text = " ".join(label.split()) or "unknown link"
        node = PlaceholderNode(id=f"{stem}_{n}", label=text if text.startswith("[PROVISIONAL]") else f"[PROVISIONAL] {text}",
                               description=description or f"Placeholder for: {gap.description}",
                               constraints=list(constraints or []), gap_reference=gap.id, iteration=iteration)
        self.nodes[node.id] = node
        gap.placeholder = node.id
        ends = [b for b in gap.between if b in self.nodes]
        if len(ends) >= 2:
            self.add_edge(ends[0], node.id, "related_to", provisional=True, iteration=iteration)
            self.add_edge(node.id, ends[1], "related_to", provisional=True, iteration=iteration)
        elif ends:
            self.add_edge(node.id, ends[0], "related_to", provisional=True, iteration=iteration)
        return node

    # ------------------------------------------------------------------ edges and gaps

    def add_edge(self, source: str, target: str, type: str, *, evidence: list[Evidence] | None = None,
                 provisional: bool = True, iteration: int = 0, edge_id: str | None = None,
                 hedged: bool = False) -> tuple[Edge, bool]:
        """Add a relation, or add evidence to the same (source, target, type); returns (edge, new)."""
        if source not in self.nodes or target not in self.nodes:
            raise KeyError(f"unknown node in edge {source} -> {target}")
        existing_id = self._edge_by_triple.get((source, target, type))
        if existing_id is not None:
            edge = self.edges[existing_id]
            self._add_evidence(edge.evidence, evidence or [])
            edge.provisional = edge.provisional and provisional
            edge.hedged = edge.hedged and hedged  # a second source stating it plainly lifts the hedge
            edge.features.hedged = edge.hedged
            return edge, False
        if isinstance(self.nodes[source], PlaceholderNode) or isinstance(self.nodes[target], PlaceholderNode):
            provisional = True
        edge = Edge(id=edge_id if edge_id and edge_id not in self.edges else self._new_id(f"e_{source}_{type}_{target}"[:80], self.edges),
                    source=source, target=target, type=type, evidence=list(evidence or []),  # type: ignore[arg-type]
                    provisional=provisional, iteration=iteration, hedged=hedged)
        edge.features.hedged = hedged
        self.edges[edge.id] = edge
        self._edge_by_triple[(source, target, type)] = edge.id
        self._link(edge)
        return edge, True

    def add_gap(self, description: str, between: list[str], *, suggested: str = "", domain: str = "general",
                iteration: int = 0, reason: str = "unknown") -> tuple[Gap, bool]:
        """Record a gap, unless one already sits between the same nodes."""
        ends = list(dict.fromkeys(between))  # order kept: a gap from A to B points from A to B
        for gap in self.gaps.values():
            if ends and set(gap.between) == set(ends):
                return gap, False
        gap = Gap(id=self._new_id("gap", self.gaps), description=description, between=ends,
                  suggested_placeholder=suggested, domain=domain, iteration=iteration, reason=reason)  # type: ignore[arg-type]
        self.gaps[gap.id] = gap
        return gap, True

    @staticmethod
    def _add_evidence(into: list[Evidence], more: list[Evidence]) -> None:
        seen = {(e.source, " ".join(e.quote.lower().split())) for e in into}
        for e in more:
            key = (e.source, " ".join(e.quote.lower().split()))
            if key not in seen:
                seen.add(key)
                into.append(e)

    def degree(self, node_id: str) -> int:
        return len(self._adjacent.get(node_id, ()))

    # ------------------------------------------------------------------ the noise budget

    def noise(self) -> NoiseStatus:
        """The share of low-confidence elements: mean of the node share and the edge share.

        An empty node or edge set counts as share 0, as in the design's check.
        """
        nodes, edges = list(self.nodes.values()), list(self.edges.values())
        node_ratio = sum(1 for n in nodes if n.confidence <= LOW) / len(nodes) if nodes else 0.0
        edge_ratio = sum(1 for e in edges if e.strength <= LOW) / len(edges) if edges else 0.0
        current = (node_ratio + edge_ratio) / 2
        target = self.meta.noise_budget
        return NoiseStatus(satisfied=current >= target, current=round(current, 4), target=target,
                           deficit=round(max(0.0, target - current), 4), node_ratio=round(node_ratio, 4),
                           edge_ratio=round(edge_ratio, 4))

    def size(self) -> tuple[int, int, int]:
        """(nodes, edges, gaps): what convergence compares between iterations."""
        return len(self.nodes), len(self.edges), len(self.gaps)

    def label_of(self, node_id: str) -> str:
        node = self.nodes.get(node_id)
        return node.label if node is not None else node_id
