"""BUILD: turn the agents' structured answers into graph changes, checking everything mechanically.

- An entity is kept only if its label's words occur in the passage its quote came from; its quote
  must really occur in a source (else the sentence of the passage that names it is quoted instead).
  An entity nothing grounds is dropped: the graph holds no invented entities.
- An edge's quote must really occur in a source; failing that, a sentence of the passages that
  names both ends is quoted; failing that the edge is *provisional* (strength ≤ 0.5, no evidence).
- Labels with the same identity key are one node at once; labels that are merely similar become
  merge questions for the mapper (:func:`merge_pairs`, :func:`apply_merges`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from moot.teams.graph.evidence import Chunk, SourceIndex, sentences
from moot.teams.graph.quantify import age_years
from moot.teams.graph.scaffold import (
    EntityNode,
    Evidence,
    Gap,
    GraphAnswer,
    PlaceholderNode,
    Scaffold,
    label_key,
    label_tokens,
)


UNCERTAIN = re.compile(r"\b(unknown|unclear|uncertain|not known|not clear|no one knows|could not|cannot say|"
                       r"may|might|possibl[ey]|perhaps|why|how it|how they|whether|unexplained|missing)\b", re.IGNORECASE)
"""Words by which a passage says that something is not known (a gap's quote must have one)."""


def render_passages(chunks: list[Chunk], limit: int = 900) -> str:
    return "\n\n".join(f"[{i}] ({c.source}) {c.text[:limit]}" for i, c in enumerate(chunks, 1))


def _tokens(text: str) -> set[str]:
    return set(label_tokens(text))


def _sentence_naming(chunks: list[Chunk], *labels: str) -> Evidence | None:
    """A sentence of the passages that contains every word of each label (a real quote)."""
    wanted = [_tokens(label) for label in labels]
    if any(not w for w in wanted):
        return None
    for chunk in chunks:
        for sentence in sentences(chunk.text):
            have = _tokens(sentence)
            if all(w <= have for w in wanted):
                return Evidence(source=chunk.source, quote=sentence, chunk=chunk.id)
    return None


def _ground(index: SourceIndex, quote: str, chunks: list[Chunk], *labels: str) -> Evidence | None:
    """Evidence for a claim: its own quote where that really occurs and names the labels, else a
    sentence of the passages that names them, else ``None``."""
    found = index.locate(quote, chunks) if quote else None
    if found is not None:
        # the quote itself must name each label as written (words in order), not just its passage
        # or its words scattered over two sentences ("Ostby Water Board … the mill's channel")
        said = f" {label_key(quote)} "
        if all(f" {label_key(label)} " in said for label in labels):
            return Evidence(source=found.source, quote=" ".join(quote.split()), chunk=found.id)
    return _sentence_naming(chunks, *labels)


_NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|the\s+)?[A-Z][\w'-]*)*")
_QUESTION_WORDS = frozenset("how what why when where which who whom whose does do did is are was were can could "
                            "should would will if in on at the a an".split())


def question_entities(question: str, chunks: list[Chunk]) -> list[tuple[str, Evidence]]:
    """Names the question itself uses (capitalised words: "Lake Mira", "Ostby") that a sentence
    of the passages also names, with that sentence as the quote. The mapper sometimes leaves out
    the very things the question is about; these are found mechanically, never invented."""
    out: list[tuple[str, Evidence]] = []
    for match in _NAME.finditer(question):
        words = match.group(0).split()
        while words and words[0].lower() in _QUESTION_WORDS:
            words = words[1:]
        name = " ".join(words)
        if not name or not _tokens(name):
            continue
        evidence = _sentence_naming(chunks, name)
        if evidence is not None:
            out.append((name, evidence))
    return out


@dataclass
class MappingReport:
    """What one mapper answer changed, for the iteration record and the events."""

    answer: GraphAnswer
    new_nodes: list[EntityNode] = field(default_factory=list)
    new_gaps: list[Gap] = field(default_factory=list)
    dropped_entities: list[str] = field(default_factory=list)
    provisional_edges: int = 0
    merge_candidates: list[tuple[str, str]] = field(default_factory=list)
    """(new node id, existing node id) pairs whose labels are similar."""
    found: list[str] = field(default_factory=list)
    """Ids of the entities the answer named (new or known), in its order."""

    def summarise(self) -> None:
        a = self.answer
        a.note = (f"{len(a.added_nodes)} entities, {len(a.added_edges)} edges ({self.provisional_edges} provisional), "
                  f"{len(a.gaps)} gaps" + (f"; dropped as ungrounded: {', '.join(self.dropped_entities[:5])}"
                                          if self.dropped_entities else ""))


def _clean_label(label: str) -> str:
    return " ".join(label.replace("[PROVISIONAL]", "").split()).strip(" .,:;\"'")


def apply_entities(scaffold: Scaffold, output: Any, chunks: list[Chunk], index: SourceIndex, *,
                   question_id: str, iteration: int) -> MappingReport:
    """Add the mapper's grounded entities to the scaffold (same identity key: one node)."""
    report = MappingReport(answer=GraphAnswer(question_id=question_id, chunks=[c.id for c in chunks]))
    for entity in output.entities:
        label = _clean_label(entity.label)
        if not label or len(label) > 80 or not _tokens(label):
            continue
        known = scaffold.find(label)
        evidence = _ground(index, entity.quote, chunks, label)
        if evidence is None:
            if known is None:
                report.dropped_entities.append(label)
            elif known.id not in report.found:
                report.found.append(known.id)
            continue
        before = {c.id for c in scaffold.candidates(label)} if known is None else set()
        node, new = scaffold.add_entity(label, why_relevant=entity.why_relevant, evidence=[evidence], iteration=iteration)
        if new:
            report.new_nodes.append(node)
            report.answer.added_nodes.append(node.id)
            report.merge_candidates += [(node.id, other) for other in sorted(before) if other != node.id]
        if node.id not in report.found:
            report.found.append(node.id)
    report.summarise()
    return report


def add_question_entities(scaffold: Scaffold, report: MappingReport, question: str, chunks: list[Chunk],
                          iteration: int) -> None:
    """Add the names the question uses that the passages name too (see :func:`question_entities`)."""
    for name, evidence in question_entities(question, chunks):
        known = scaffold.find(name)
        if known is None and any(name.lower() in n.label.lower() for n in scaffold.entities()):
            continue  # "Ostby" when "Ostby mill" is already there: the longer name holds it
        node, new = scaffold.add_entity(name, why_relevant="named in the question", evidence=[evidence], iteration=iteration)
        if new:
            report.new_nodes.append(node)
            report.answer.added_nodes.append(node.id)
        if node.id not in report.found:
            report.found.append(node.id)


def link_choices(scaffold: Scaffold, report: MappingReport, chunks: list[Chunk], limit: int = 12) -> dict[str, str]:
    """The entity labels the links call may choose from: those the answer named, then known
    entities the passages mention. Label -> node id."""
    text = _tokens(" ".join(c.text for c in chunks))
    ids = [i for i in report.found if i in scaffold.nodes]
    ids += [n.id for n in scaffold.entities() if n.id not in ids and _tokens(n.label) and _tokens(n.label) <= text]
    return {scaffold.label_of(i): i for i in ids[:limit]}


def _labels(scaffold: Scaffold, node_id: str) -> list[str]:
    node = scaffold.nodes[node_id]
    return [node.label, *(node.aliases if isinstance(node, EntityNode) else [])]


def _edge_evidence(scaffold: Scaffold, index: SourceIndex, quote: str, chunks: list[Chunk], source: str,
                   target: str) -> Evidence | None:
    """The link's own quote where it really occurs and names both ends; else a sentence of the
    passages naming both; else ``None`` (the edge is provisional)."""
    found = index.locate(quote, chunks) if quote else None
    if found is not None:
        have = _tokens(quote)
        if any(_tokens(a) <= have for a in _labels(scaffold, source)) and any(_tokens(b) <= have for b in _labels(scaffold, target)):
            return Evidence(source=found.source, quote=" ".join(quote.split()), chunk=found.id)
    for a in _labels(scaffold, source):
        for b in _labels(scaffold, target):
            if (evidence := _sentence_naming(chunks, a, b)) is not None:
                return evidence
    return None


def apply_links(scaffold: Scaffold, output: Any, chunks: list[Chunk], index: SourceIndex, report: MappingReport,
                choices: dict[str, str], *, iteration: int) -> MappingReport:
    """Add the links call's edges (checked quotes, else provisional) and gaps between chosen entities."""
    for rel in getattr(output, "relationships", None) or []:
        source, target = choices.get(rel.source), choices.get(rel.target)
        if source is None or target is None or source == target or source not in scaffold.nodes or target not in scaffold.nodes:
            continue
        evidence = _edge_evidence(scaffold, index, rel.quote, chunks, source, target)
        edge, new = scaffold.add_edge(source, target, rel.type, evidence=[evidence] if evidence else [],
                                      provisional=evidence is None, iteration=iteration)
        if new:
            report.answer.added_edges.append(edge.id)
            report.provisional_edges += int(edge.provisional)
    for gap in getattr(output, "gaps", None) or []:
        ends = [e for e in dict.fromkeys(choices.get(b) for b in gap.between) if e is not None and e in scaffold.nodes]
        # a gap is a passage saying something is not known: its quote must occur and say so
        found = index.locate(gap.quote, chunks) if gap.quote else None
        if not ends or found is None or not UNCERTAIN.search(gap.quote):
            continue
        g, new = scaffold.add_gap(" ".join(gap.quote.split()), ends, domain=scaffold.label_of(ends[0]), iteration=iteration)
        if new:
            report.new_gaps.append(g)
            report.answer.gaps.append(g.id)
    report.summarise()
    return report


# --------------------------------------------------------------------------- merges


def merge_task(scaffold: Scaffold, pairs: list[tuple[str, str]]) -> str:
    lines = [f"{i}. \"{scaffold.label_of(a)}\" and \"{scaffold.label_of(b)}\"" for i, (a, b) in enumerate(pairs, 1)]
    return "Pairs of labels:\n" + "\n".join(lines)


def apply_merges(scaffold: Scaffold, pairs: list[tuple[str, str]], output: Any) -> list[tuple[str, str]]:
    """Merge every pair the mapper called the same; returns (kept, merged) ids."""
    merged: list[tuple[str, str]] = []
    for decision in getattr(output, "decisions", []) or []:
        if not decision.same or not 1 <= decision.pair <= len(pairs):
            continue
        new, old = pairs[decision.pair - 1]
        if new in scaffold.nodes and old in scaffold.nodes and new != old:
            # keep the node seen first, under its label; the other's label becomes an alias
            scaffold.merge(old, new)
            merged.append((old, new))
    return merged


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
            lines.append(f"- {eid}: {scaffold.label_of(e.source)} {e.type} {scaffold.label_of(e.target)}. "
                         f"Quote: \"{e.evidence[0].quote[:240]}\"")
    if entity_ids:
        lines.append("Entities:")
        for nid in entity_ids:
            n = scaffold.nodes[nid]
            assert isinstance(n, EntityNode)
            lines.append(f"- {nid}: {n.label}. Source: {n.evidence[0].source}. Quote: \"{n.evidence[0].quote[:200]}\"")
    return "\n".join(lines)


def apply_labels(scaffold: Scaffold, output: Any, index: SourceIndex) -> set[str]:
    """Copy the quantifier's labels into the elements' features; count ages in Python. Returns ids labelled."""
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
        texts = [c.text for e in node.evidence if e.chunk is not None and (c := index.chunk(e.chunk))]
        node.features.age_years = age_years(" ".join(texts), index.newest_year)
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
