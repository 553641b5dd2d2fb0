"""The answer, written in Python from the finished graph: the path from the question's subject to
its object, hop by hop with each hop's quote; then the gaps and their placeholders. And the
hypothesizer's answer turned into structural hypotheses that name the graph's own nodes."""

from __future__ import annotations

from typing import Any

from moot.memory.search import query_terms
from moot.teams.graph.scaffold import (
    EntityNode,
    HypothesisPlaceholder,
    HypothesisStructure,
    KeyRelationship,
    PathHop,
    Scaffold,
    StructuralHypothesis,
    label_tokens,
)
from moot.teams.graph.vocabulary import Vocabulary


def hop_sentence(scaffold: Scaffold, hop: PathHop, vocabulary: Vocabulary) -> str:
    """One hop as a sentence in the edge's own direction, with its id, strength and quote."""
    a, b = (hop.source, hop.target) if hop.forward else (hop.target, hop.source)
    text = f"{scaffold.label_of(a)} {vocabulary.phrase(hop.type)} {scaffold.label_of(b)}"
    marks = [hop.edge, f"strength {hop.strength:.2f}"] + (["hedged"] if hop.hedged else []) + (["provisional"] if hop.provisional else [])
    quote = f"; \"{hop.quote[:200]}\" ({hop.document})" if hop.quote else ""
    return f"{text} [{', '.join(marks)}{quote}]"


def _relevant_edges(scaffold: Scaffold, question: str, vocabulary: Vocabulary, limit: int = 4) -> list[str]:
    terms = set(query_terms(question))

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
    out = []
    for e in edges[:limit]:
        quote = e.evidence[0]
        out.append(f"{scaffold.label_of(e.source)} {vocabulary.phrase(e.type)} {scaffold.label_of(e.target)} "
                   f"[{e.id}, strength {e.strength:.2f}{', hedged' if e.hedged else ''}; \"{quote.quote[:160]}\" ({quote.source})].")
    return out


def compose_answer(scaffold: Scaffold, question: str, vocabulary: Vocabulary, *, sentences_read: int) -> str:
    """The path first (or why there is none), then the open gaps with their placeholders."""
    if sentences_read == 0:
        return "The sources do not cover this question: no sentence in them matches it, so the graph is empty."
    if not scaffold.entities():
        return "The sources do not cover this question: the sentences that matched it relate nothing it is about."
    parts: list[str] = []
    s, o = scaffold.subject, scaffold.object
    if scaffold.path:
        hops = scaffold.path
        stated = [h for h in hops if not h.provisional]
        lead = (f"From {scaffold.label_of(s)} to {scaffold.label_of(o)}" +
                (" (through a placeholder: part of this path is a gap, not evidence)" if len(stated) < len(hops) else "") + ": ")
        parts.append(lead + "; ".join(hop_sentence(scaffold, h, vocabulary) for h in hops) + ".")
    elif s and o and s != o:
        parts.append(f"No source links {scaffold.label_of(s)} to {scaffold.label_of(o)}.")
        parts += _relevant_edges(scaffold, question, vocabulary, limit=3)
    else:
        named = scaffold.label_of(s) if s else ""
        if named:
            parts.append(f"The question starts from {named}; the sources name nothing else it asks about.")
        parts += _relevant_edges(scaffold, question, vocabulary)
        if not parts:
            parts.append("The sources name " + ", ".join(n.label for n in scaffold.entities()[:4])
                         + " but state no relation between them.")
    for g in [g for g in scaffold.gaps.values() if g.placeholder][:3]:
        if g.reason == "disconnected":
            parts.append(f"Gap: {g.description} (placeholder {g.placeholder}, confidence ≤ 0.5).")
        else:
            parts.append(f"Unknown: \"{g.description}\" (placeholder {g.placeholder}, confidence ≤ 0.5).")
    return " ".join(parts)


def hypotheses_task(scaffold: Scaffold, question: str, vocabulary: Vocabulary) -> str:
    lines = [f"Question: {question}", "Nodes:"]
    lines += [f"- {n.label}" for n in scaffold.nodes.values()][:30]
    lines.append("Edges:")
    lines += [f"- {scaffold.label_of(e.source)} {vocabulary.phrase(e.type)} {scaffold.label_of(e.target)}"
              for e in scaffold.edges.values()][:30]
    return "\n".join(lines)


def _names_a_node(text: str, labels: list[str]) -> bool:
    words = set(label_tokens(text))
    return any(label_tokens(label) and label_tokens(label) <= words for label in labels)


def to_hypotheses(scaffold: Scaffold, output: Any) -> list[StructuralHypothesis]:
    """The hypothesizer's alternatives, with chosen labels mapped back to node ids; duplicates
    dropped; a prediction that names none of the graph's nodes is dropped (it tests nothing here)."""
    by_label = {n.label: n.id for n in scaffold.nodes.values()}
    labels = [n.label.replace("[PROVISIONAL]", "").strip() for n in scaffold.nodes.values()]
    out: list[StructuralHypothesis] = []
    seen: set[str] = set()
    for h in getattr(output, "hypotheses", None) or []:
        name = " ".join(h.name.split())
        if not name or name.lower() in seen:
            continue
        seen.add(name.lower())
        keys = [KeyRelationship(source=by_label[k.source], target=by_label[k.target], type=k.type)
                for k in getattr(h, "key_links", None) or [] if k.source in by_label and k.target in by_label and k.source != k.target]
        bridge = getattr(h, "bridge", "none")
        placeholders = ([HypothesisPlaceholder(label=bridge, reason="the placeholder this shape puts between its parts", position="bridge")]
                        if bridge in by_label else [])
        out.append(StructuralHypothesis(
            name=name, rationale=h.rationale,
            structure=HypothesisStructure(pattern=h.pattern, central_nodes=[by_label[c] for c in h.central_nodes if c in by_label],
                                          key_relationships=keys),
            placeholders=placeholders,
            testable_predictions=[p for p in h.testable_predictions if p.strip() and _names_a_node(p, labels)]))
    return out
