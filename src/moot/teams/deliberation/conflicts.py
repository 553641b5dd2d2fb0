"""Conflict detection, in Python, from the calendar claims of the positions.

Two positions conflict when they cannot both hold (:func:`~moot.teams.deliberation.plan.clash`):
a **contradiction** gives one option two different fates ("do the run" against "skip the run",
or against "shorten it"); **resource competition** gives two options overlapping times ("run at
06:30" against "rehearse at 06:30") — decided from the times, never by a model. Positions that
agree were merged into one insight before this (its supporters listed), so agreement is never
paired into a conflict, and positions that can both hold are no conflict at all.
"""

from __future__ import annotations

from datetime import datetime, timezone
from itertools import combinations

from moot.teams.deliberation.models import AgentInsight, Conflict, ConflictSide, Severity
from moot.teams.deliberation.plan import Claims, Option, clash

SEVERITY_ORDER = {"blocking": 0, "significant": 1, "minor": 2}


def side(insight: AgentInsight) -> ConflictSide:
    return ConflictSide(name=insight.agent, insight_id=insight.insight_id, position=insight.recommendation,
                        evidence=list(insight.evidence), confidence=insight.confidence, supporters=list(insight.supporters))


def severity(a: AgentInsight, b: AgentInsight) -> Severity:
    """Blocking when both sides are high impact, significant when one is, minor otherwise."""
    highs = (a.impact == "high") + (b.impact == "high")
    return "blocking" if highs == 2 else "significant" if highs == 1 else "minor"


def find_conflicts(insights: list[AgentInsight], claims_of: dict[str, Claims], options: dict[str, Option]) -> list[Conflict]:
    """Every pair of positions that cannot both hold, most severe first (then across domains, then by support)."""
    found: list[tuple[tuple[int, bool, float], Conflict]] = []
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for a, b in combinations([i for i in insights if i.insight_id in claims_of], 2):
        hit = clash(claims_of[a.insight_id], claims_of[b.insight_id])
        if hit is None:
            continue
        kind, about = hit
        if kind == "contradiction":
            note = f"{options[about[0]].name()}: {a.recommendation} against {b.recommendation}"
        else:
            spans = [w.label() for c in (claims_of[a.insight_id], claims_of[b.insight_id]) for o, w in c.items() if o in about and w]
            note = " and ".join(options[o].name() for o in about) + " want the same time (" + ", ".join(dict.fromkeys(spans)) + ")"
        sev = severity(a, b)
        conflict = Conflict(id="", type=kind, agent_a=side(a), agent_b=side(b), severity=sev, detected_at=stamp,
                            detected_by="python", note=note, options=about)
        key = (SEVERITY_ORDER[sev], a.domain == b.domain, -(a.support + b.support))
        found.append((key, conflict))
    found.sort(key=lambda f: f[0])
    out = [c for _, c in found]
    for k, c in enumerate(out, 1):
        c.id = f"c{k}"
    return out


__all__ = ["SEVERITY_ORDER", "find_conflicts", "severity", "side"]
