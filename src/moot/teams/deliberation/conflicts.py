"""Conflict detection. Resource competition — two recommendations of different agents for
overlapping times — is decided here from the times insights carry; whether another pair
contradicts, clashes in priority or disagrees on a cause is the conflict judge's choice under a
schema (see :mod:`moot.teams.deliberation.agents`), and this module turns its choices into
:class:`Conflict` records.
"""

from __future__ import annotations

from datetime import datetime, timezone
from itertools import combinations
from typing import Iterable

from moot.teams.deliberation.models import AgentInsight, Conflict, ConflictSide, ConflictType, Severity

SEVERITY_ORDER = {"blocking": 0, "significant": 1, "minor": 2}


def side(insight: AgentInsight) -> ConflictSide:
    return ConflictSide(name=insight.agent, insight_id=insight.insight_id, position=insight.recommendation,
                        evidence=list(insight.evidence), confidence=insight.confidence)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def resource_conflicts(insights: Iterable[AgentInsight], start: int = 1) -> list[Conflict]:
    """Pairs of insights by different agents whose time windows overlap, one conflict per pair of agents.

    Severity: blocking when both are high impact, significant when one is, minor otherwise. When two
    agents compete with several insights, the most severe pair stands for them (on the embedded
    model eight overlapping pairs between three specialists became eight debates-in-waiting).
    """
    best: dict[frozenset[str], tuple[tuple[int, float], AgentInsight, AgentInsight, Severity]] = {}
    timed = [i for i in insights if i.time_window is not None]
    for a, b in combinations(timed, 2):
        if a.agent == b.agent or not a.time_window.overlaps(b.time_window):  # type: ignore[union-attr]
            continue
        highs = (a.impact == "high") + (b.impact == "high")
        severity: Severity = "blocking" if highs == 2 else "significant" if highs == 1 else "minor"
        key = (-SEVERITY_ORDER[severity], a.confidence + b.confidence)
        pair = frozenset((a.agent, b.agent))
        if pair not in best or key > best[pair][0]:
            best[pair] = (key, a, b, severity)
    out: list[Conflict] = []
    for _, a, b, severity in best.values():
        out.append(Conflict(id=f"c{start + len(out)}", type="resource_competition", agent_a=side(a), agent_b=side(b),
                            severity=severity, detected_at=_now(), detected_by="python",
                            note=f"both want {a.time_window.label()} and {b.time_window.label()}"))  # type: ignore[union-attr]
    return out


def candidate_pairs(insights: list[AgentInsight], already: list[Conflict], limit: int = 6) -> list[tuple[AgentInsight, AgentInsight]]:
    """Pairs the judge looks at: different agents, not already in a conflict; cross-domain pairs first."""
    taken = {frozenset((c.agent_a.insight_id, c.agent_b.insight_id)) for c in already}
    pairs = [(a, b) for a, b in combinations(insights, 2)
             if a.agent != b.agent and frozenset((a.insight_id, b.insight_id)) not in taken]
    pairs.sort(key=lambda p: (p[0].domain == p[1].domain, -(p[0].confidence + p[1].confidence)))
    return pairs[:limit]


def model_conflict(number: int, a: AgentInsight, b: AgentInsight, kind: ConflictType, severity: Severity) -> Conflict:
    return Conflict(id=f"c{number}", type=kind, agent_a=side(a), agent_b=side(b), severity=severity,
                    detected_at=_now(), detected_by="model")


def by_severity(conflicts: list[Conflict], domain_of: dict[str, str] | None = None) -> list[Conflict]:
    """Most severe first; then conflicts across domains before those inside one; then resource
    competition (decided from data) before the model's."""
    domains = domain_of or {}

    def inside(c: Conflict) -> bool:
        return domains.get(c.agent_a.name, "a") == domains.get(c.agent_b.name, "b")

    return sorted(conflicts, key=lambda c: (SEVERITY_ORDER[c.severity], inside(c), c.detected_by != "python"))


__all__ = ["by_severity", "candidate_pairs", "model_conflict", "resource_conflicts", "side"]
