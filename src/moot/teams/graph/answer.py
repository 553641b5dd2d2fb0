"""The short prose answer, written in Python from the finished graph (it cites node and edge ids),
and the hypothesizer's answer turned into checked structural hypotheses."""

from __future__ import annotations

from typing import Any

from moot.memory.search import query_terms
from moot.teams.graph.scaffold import (
    EntityNode,
    HypothesisPlaceholder,
    HypothesisStructure,
    KeyRelationship,
    Scaffold,
    StructuralHypothesis,
    label_tokens,
)

_VERB = {"part_of": "is part of", "located_in": "is located in", "correlates_with": "correlates with",
         "related_to": "is related to"}


def compose_answer(scaffold: Scaffold, question: str, *, chunks_found: int) -> str:
    """Up to four of the strongest relevant edges as sentences, with strength, quote and ids, then
    the open gaps; or a plain statement that the sources do not cover the question."""
    entities = scaffold.entities()
    if chunks_found == 0:
        return "The sources do not cover this question: no passage in them matches it, so the graph is empty."
    if not entities:
        return "The sources do not cover this question: the passages that matched it name nothing it is about."
    terms = {t for t in query_terms(question)}

    def relevance(node_ids: tuple[str, ...]) -> int:
        words: set[str] = set()
        for nid in node_ids:
            node = scaffold.nodes[nid]
            words |= label_tokens(node.label)
            if isinstance(node, EntityNode):
                for alias in node.aliases:
                    words |= label_tokens(alias)
        return sum(1 for t in terms if any(w.startswith(t[:5]) for w in words))

    edges = [e for e in scaffold.edges.values() if not e.provisional]
    edges.sort(key=lambda e: (-relevance((e.source, e.target)), -e.strength, e.id))
    parts = []
    for e in edges[:4]:
        verb = _VERB.get(e.type, e.type)
        quote = e.evidence[0]
        parts.append(f"{scaffold.label_of(e.source)} {verb} {scaffold.label_of(e.target)} "
                     f"[{e.id}, strength {e.strength:.2f}; \"{quote.quote[:120]}\" ({quote.source})].")
    if not parts:
        top = sorted(entities, key=lambda n: (-relevance((n.id,)), -n.confidence, n.id))[:4]
        parts.append("The sources name " + ", ".join(f"{n.label} [{n.id}]" for n in top)
                     + " but state no relation between them that a quote supports.")
    if relevance(tuple(n.id for n in entities)) == 0:
        parts.insert(0, "The sources barely cover this question: none of the entities found shares a word with it.")
    open_gaps = [g for g in scaffold.gaps.values() if g.placeholder]
    for g in open_gaps[:2]:
        parts.append(f"Unknown: {g.description} (placeholder {g.placeholder}, confidence ≤ 0.5).")
    return " ".join(parts)


def hypotheses_task(scaffold: Scaffold, question: str) -> str:
    lines = [f"Question: {question}", "Nodes:"]
    lines += [f"- {n.label}" for n in scaffold.nodes.values()][:30]
    lines.append("Edges:")
    lines += [f"- {e.id}: {scaffold.label_of(e.source)} {e.type} {scaffold.label_of(e.target)}"
              for e in scaffold.edges.values()][:30]
    return "\n".join(lines)


def to_hypotheses(scaffold: Scaffold, output: Any) -> list[StructuralHypothesis]:
    """The hypothesizer's alternatives, with chosen labels mapped back to node ids; duplicates dropped."""
    by_label = {n.label: n.id for n in scaffold.nodes.values()}
    out: list[StructuralHypothesis] = []
    seen: set[str] = set()
    for h in getattr(output, "hypotheses", None) or []:
        name = " ".join(h.name.split())
        if not name or name.lower() in seen:
            continue
        seen.add(name.lower())
        keys = []
        for eid in getattr(h, "key_edges", None) or []:
            e = scaffold.edges.get(eid)
            if e is not None:
                keys.append(KeyRelationship(source=e.source, target=e.target, type=e.type))
        out.append(StructuralHypothesis(
            name=name, rationale=h.rationale,
            structure=HypothesisStructure(pattern=h.pattern, central_nodes=[by_label[c] for c in h.central_nodes if c in by_label],
                                          key_relationships=keys),
            placeholders=[HypothesisPlaceholder(label=p.label, reason=p.reason, position=p.position) for p in h.placeholders],
            testable_predictions=[p for p in h.testable_predictions if p.strip()]))
    return out
