"""The uncertainty quantifier's rules: confidence and strength computed from evidence features.

The model never writes these numbers. The quantifier agent labels what the evidence *is*
(a study or a blog, causal or only correlational, contradicted or not); Python counts what
can be counted (how many sources, how old the evidence is) and applies the rules below.
"""

from __future__ import annotations

import re

from moot.teams.graph.scaffold import LOW, EntityNode, EvidenceFeatures, PlaceholderNode, Scaffold

PLACEHOLDER_CONFIDENCE = 0.3


def _clamp(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 4)


def quantify_confidence(f: EvidenceFeatures) -> float:
    """Confidence of an entity: base 0.5; a study +0.2, a blog −0.1; evidence within a year +0.1,
    older than five years −0.1; two or more sources +0.2; no contradiction +0.1; clamped to [0, 1]."""
    value = 0.5
    if f.source_kind == "study":
        value += 0.2
    elif f.source_kind == "blog":
        value -= 0.1
    if f.age_years is not None:
        if f.age_years <= 1:
            value += 0.1
        elif f.age_years > 5:
            value -= 0.1
    if f.sources >= 2:
        value += 0.2
    if f.consistent:
        value += 0.1
    return _clamp(value)


def quantify_strength(f: EvidenceFeatures, *, provisional: bool = False) -> float:
    """Strength of an edge: base 0.4; causal evidence +0.3, else correlational +0.1; a theoretical
    basis +0.15; counter-evidence −0.2; clamped to [0, 1]. A provisional edge (no checked quote
    states it) and a hedged one (its quote says "may", "could", "is suspected") never rise above 0.5."""
    value = 0.4
    if f.evidence_kind == "causal":
        value += 0.3
    elif f.evidence_kind == "correlational":
        value += 0.1
    if f.theoretical_basis:
        value += 0.15
    if f.counter_evidence:
        value -= 0.2
    value = _clamp(value)
    return min(value, LOW) if provisional or f.hedged else value


_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")


def years_in(text: str) -> list[int]:
    """Four-digit years (1800–2099) mentioned in a text."""
    return [int(y) for y in _YEAR.findall(text)]


def age_years(evidence_text: str, newest_year: int | None) -> float | None:
    """How much older the evidence's newest year is than the newest year in all sources."""
    found = years_in(evidence_text)
    if not found or newest_year is None:
        return None
    return float(max(0, newest_year - max(found)))


def requantify(scaffold: Scaffold) -> None:
    """Recompute every number in the graph from its features (after any change to evidence).

    Corroboration is counted here from the checked quotes; placeholders stay at 0.3.
    """
    for node in scaffold.nodes.values():
        if isinstance(node, PlaceholderNode):
            node.confidence = PLACEHOLDER_CONFIDENCE
        elif isinstance(node, EntityNode):
            node.features.sources = len({e.source for e in node.evidence})
            node.confidence = quantify_confidence(node.features) if node.evidence else min(quantify_confidence(node.features), LOW)
    for edge in scaffold.edges.values():
        edge.features.sources = len({e.source for e in edge.evidence})
        edge.features.hedged = edge.hedged
        edge.strength = quantify_strength(edge.features, provisional=edge.provisional)


__all__ = ["PLACEHOLDER_CONFIDENCE", "age_years", "quantify_confidence", "quantify_strength", "requantify", "years_in"]
