"""The checking agents' tasks and how their answers change the graph: the quantifier's evidence
labels (Python computes the numbers from them), the skeptic's challenges, the placeholder
generator's proposals (one placeholder per gap, a plain one where the model gave none)."""

from __future__ import annotations

from typing import Any

from moot.teams.graph.evidence import SourceIndex
from moot.teams.graph.quantify import age_years
from moot.teams.graph.scaffold import EntityNode, Gap, PlaceholderNode, Scaffold


def _clean_label(label: str) -> str:
    return " ".join(label.replace("[PROVISIONAL]", "").split()).strip(" .,:;\"'")


# --------------------------------------------------------------------------- quantifier


def unlabelled(scaffold: Scaffold, labelled: set[str]) -> tuple[list[str], list[str]]:
    """Edges with a checked quote and entities that the quantifier has not labelled yet."""
    edges = [e.id for e in scaffold.edges.values() if not e.provisional and e.evidence and e.id not in labelled]
    entities = [n.id for n in scaffold.entities() if n.evidence and n.id not in labelled]
    return edges[:8], entities[:8]


def quantifier_task(scaffold: Scaffold, edge_ids: list[str], entity_ids: list[str]) -> str:
    lines = []
    if edge_ids:
        lines.append("Relationships:")
        for eid in edge_ids:
            e = scaffold.edges[eid]
            lines.append(f"- {eid}: {scaffold.label_of(e.source)} {e.type.replace('_', ' ')} {scaffold.label_of(e.target)}. "
                         f"Quote: \"{e.evidence[0].quote[:240]}\"")
    if entity_ids:
        lines.append("Entities:")
        for nid in entity_ids:
            n = scaffold.nodes[nid]
            assert isinstance(n, EntityNode)
            lines.append(f"- {nid}: {n.label}. Source: {n.evidence[0].source}. Quote: \"{n.evidence[0].quote[:200]}\"")
    return "\n".join(lines)


def apply_labels(scaffold: Scaffold, output: Any, index: SourceIndex) -> set[str]:
    """Copy the quantifier's labels into the elements' features; count ages in Python (a source's
    publication date where its front matter gives one, else the years its sentence names). Returns ids labelled."""
    done: set[str] = set()
    for label in getattr(output, "relationships", None) or []:
        edge = scaffold.edges.get(label.id)
        if edge is not None:
            edge.features.evidence_kind = label.evidence_kind
            edge.features.theoretical_basis = label.theoretical_basis
            edge.features.counter_evidence = edge.features.counter_evidence or label.counter_evidence
            done.add(edge.id)
    for label in getattr(output, "entities", None) or []:
        node = scaffold.nodes.get(label.id)
        if isinstance(node, EntityNode):
            node.features.source_kind = label.source_kind
            done.add(node.id)
    for node in scaffold.entities():
        dated = [d.year for e in node.evidence if (d := index.documents.get(e.source)) is not None and d.year]
        text = " ".join(e.quote for e in node.evidence) if not dated else " ".join(str(y) for y in dated)
        node.features.age_years = age_years(text, index.newest_year)
    return done


# --------------------------------------------------------------------------- skeptic


def skeptic_targets(scaffold: Scaffold, challenged: set[str], deficit: bool, limit: int = 6) -> list[str]:
    """Elements above 0.8 first; when the noise budget is short, the most confident of the rest."""
    items: list[tuple[float, str]] = [(n.confidence, n.id) for n in scaffold.entities() if n.evidence and n.id not in challenged]
    items += [(e.strength, e.id) for e in scaffold.edges.values() if e.evidence and e.id not in challenged]
    items.sort(key=lambda x: (-x[0], x[1]))
    high = [i for c, i in items if c > 0.8]
    if deficit:
        high += [i for c, i in items if 0.5 < c <= 0.8]
    return high[:limit]


def skeptic_task(scaffold: Scaffold, ids: list[str]) -> str:
    lines = ["Claims:"]
    for cid in ids:
        if cid in scaffold.edges:
            e = scaffold.edges[cid]
            lines.append(f"- {cid}: \"{scaffold.label_of(e.source)} {e.type.replace('_', ' ')} {scaffold.label_of(e.target)}\" "
                         f"(strength {e.strength}). Quote: \"{e.evidence[0].quote[:240]}\"")
        else:
            n = scaffold.nodes[cid]
            assert isinstance(n, EntityNode)
            lines.append(f"- {cid}: \"{n.label} exists and matters here\" (confidence {n.confidence}). "
                         f"Quote: \"{n.evidence[0].quote[:200]}\"")
    return "\n".join(lines)


def apply_challenges(scaffold: Scaffold, output: Any) -> tuple[set[str], int]:
    """A claim the skeptic finds unsupported gets counter-evidence (edges) or loses consistency
    (entities); every challenge keeps what would disconfirm it. Returns (ids challenged, unsupported)."""
    seen: set[str] = set()
    unsupported = 0
    for c in getattr(output, "challenges", None) or []:
        seen.add(c.id)
        text = " ".join((c.would_disconfirm or "").split())
        if c.id in scaffold.edges:
            edge = scaffold.edges[c.id]
            edge.challenge = text or edge.challenge
            if not c.supported:
                edge.features.counter_evidence = True
                unsupported += 1
        elif isinstance(node := scaffold.nodes.get(c.id), EntityNode):
            node.challenge = text or node.challenge
            if not c.supported:
                node.features.consistent = False
                unsupported += 1
    return seen, unsupported


# --------------------------------------------------------------------------- placeholders


def placeholder_task(scaffold: Scaffold, gaps: list[Gap]) -> str:
    lines = ["Gaps:"]
    for g in gaps:
        ends = " and ".join(f"\"{scaffold.label_of(b)}\"" for b in g.between)
        lines.append(f"- {g.id}: {g.description}" + (f" (between {ends})" if ends else ""))
    return "\n".join(lines)


def apply_placeholders(scaffold: Scaffold, gaps: list[Gap], output: Any, iteration: int) -> list[PlaceholderNode]:
    """One placeholder per gap: the model's proposal where it made one, else a plain one named after the gap."""
    proposals = {p.gap: p for p in getattr(output, "placeholders", None) or []}
    made = []
    for gap in gaps:
        if gap.placeholder:
            continue
        ends = " and ".join(scaffold.label_of(b) for b in gap.between) or "the graph"
        p = proposals.get(gap.id)
        label = _clean_label(p.label) if p is not None else ""
        confirm = (p.confirm if p is not None else "") or f"a source naming what links {ends}"
        disconfirm = (p.disconfirm if p is not None else "") or f"a source showing {ends} are not linked"
        made.append(scaffold.add_placeholder(
            gap, label or f"link between {ends}", description=f"Placeholder for: {gap.description}",
            constraints=[f"Would be confirmed by: {confirm}", f"Would be disconfirmed by: {disconfirm}"],
            iteration=iteration))
    return made
