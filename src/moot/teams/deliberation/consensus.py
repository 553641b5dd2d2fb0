"""The design's rules as code: the consensus score, the confidence adjustment, the
low-consensus flag, the ranking, and the three modes with their budgets.

A model never writes any of these numbers: voters give a vote in −2..+2 under a schema, and
Python does the arithmetic here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from moot.errors import MootError
from moot.teams.deliberation.models import IMPACT_WEIGHT, AgentInsight, ConsensusVote

LOW_CONSENSUS_BELOW = -0.5
"""An insight whose consensus score is below this carries the low-consensus flag."""
POINTS_PER_VOTE = 10.0
"""Adjusted confidence = confidence + score × 10 percentage points."""
LOW_CONSENSUS_WARNING = "Low consensus: other agents have concerns about this recommendation"


def consensus_score(votes: Iterable[int]) -> float | None:
    """The mean vote (−2..+2); ``None`` when there are no votes."""
    values = list(votes)
    if not values:
        return None
    for v in values:
        if v not in (-2, -1, 0, 1, 2):
            raise ValueError(f"a vote must be -2..+2, got {v!r}")
    return sum(values) / len(values)


def adjusted_confidence(confidence: float, score: float | None) -> float:
    """``confidence + score × 10`` points, clamped to 0–100 %; unchanged without votes.

    The design's example: 85 % with votes [+2, +1, 0, −1] (score +0.5) → 90 %.
    """
    if score is None:
        return clamp_pct(confidence)
    return clamp_pct(confidence + score * POINTS_PER_VOTE)


def is_low_consensus(score: float | None) -> bool:
    return score is not None and score < LOW_CONSENSUS_BELOW


def clamp_pct(value: float) -> float:
    return round(max(0.0, min(100.0, float(value))), 2)


def apply_votes(insights: Sequence[AgentInsight], votes: Sequence[ConsensusVote]) -> None:
    """Set each insight's consensus score, adjusted confidence and flag from its votes."""
    by_insight: dict[str, list[int]] = {}
    for vote in votes:
        by_insight.setdefault(vote.insight_id, []).append(vote.vote)
    for insight in insights:
        score = consensus_score(by_insight.get(insight.insight_id, []))
        insight.consensus_score = None if score is None else round(score, 4)
        insight.adjusted_confidence = adjusted_confidence(insight.confidence, score)
        insight.low_consensus = is_low_consensus(score)


def rank_score(insight: AgentInsight) -> float:
    """Impact × adjusted confidence (impact low/medium/high = 1/2/3) × the number of specialists
    who took the position (a position two specialists took counts twice)."""
    return IMPACT_WEIGHT[insight.impact] * insight.final_confidence() * max(1, len(insight.supporters))


def rank(insights: Iterable[AgentInsight]) -> list[AgentInsight]:
    """Best first by :func:`rank_score`; ties keep their order. Sets each insight's ``support``."""
    items = list(insights)
    for i in items:
        i.support = round(rank_score(i), 2)
    return sorted(items, key=rank_score, reverse=True)


# --------------------------------------------------------------------------- modes

ConsensusLevel = Literal["none", "light", "full"]


@dataclass(frozen=True)
class Mode:
    """One execution mode: how many coordinators, whether to debate and vote, and the budget."""

    name: str
    max_coordinators: int
    debate: bool
    consensus: ConsensusLevel
    """``light``: only high-impact insights are voted on, by 2 other agents; ``full``: every insight, by up to 3."""
    max_calls: int
    deadline_s: float
    specialists_per_coordinator: int
    """How many specialists of a coordinator run (those with the most data first)."""
    max_debates: int | None
    """``0``: no debate; ``None``: every conflict, most severe first, as long as the calls last."""

    @property
    def voters(self) -> int:
        return {"none": 0, "light": 2, "full": 3}[self.consensus]

    def with_limits(self, *, max_calls: int | None = None, deadline_s: float | None = None) -> Mode:
        from dataclasses import replace

        return replace(self, max_calls=self.max_calls if max_calls is None else max_calls,
                       deadline_s=self.deadline_s if deadline_s is None else deadline_s)


MODES: dict[str, Mode] = {
    "quick": Mode("quick", max_coordinators=1, debate=False, consensus="none", max_calls=4, deadline_s=15.0,
                  specialists_per_coordinator=3, max_debates=0),
    "standard": Mode("standard", max_coordinators=2, debate=True, consensus="light", max_calls=10, deadline_s=30.0,
                     specialists_per_coordinator=2, max_debates=None),
    "deep": Mode("deep", max_coordinators=3, debate=True, consensus="full", max_calls=20, deadline_s=60.0,
                 specialists_per_coordinator=3, max_debates=None),
}
"""The design's table: quick 1 coordinator / no debate / no consensus / 4 calls / 15 s; standard
2 / debate / light / 10 / 30 s; deep all 3 / debate / full / 20 / 60 s."""

READER_CALLS = 3
"""The request is read once, into its options and window; which option is a physical activity is
asked twice, the options listed both ways (only when readiness evidence needs it)."""
PLAIN_QUESTIONS = 2
"""With the order check (a model on this machine) which option is physical is asked plainly, two
one-token questions per option (is it a sport? is it resting?, :mod:`moot.teams.deliberation.plain`)."""
EXPECTED_OPTIONS = 2
"""How many options the reserve counts on before the request is read (most requests name two)."""
DEBATE_CALLS = 3
"""Model calls one debate costs: the moderator's compromise and each side's vote on it (round 1's
positions are the specialists' own; round 2's evidence is computed by Python from the data)."""


def reading_calls(m: Mode, readiness: bool, order_check: bool) -> int:
    """The calls to reserve for reading the request and asking which option is physical: the reading
    alone without readiness evidence; with it, one listed question (no order check), else the plain
    questions, both per option where the mode leaves a call after them, else the sport question only."""
    if not readiness:
        return 1
    if not order_check:
        return 2
    both = 1 + PLAIN_QUESTIONS * EXPECTED_OPTIONS
    return both if m.max_calls > both else 1 + EXPECTED_OPTIONS


def mode(name: str) -> Mode:
    if name not in MODES:
        raise MootError(f"unknown size {name!r}", fix="use --budget quick, standard or deep (mode='quick' in Python)")
    return MODES[name]


def specialist_slots(m: Mode, available: Sequence[int], reader_calls: int = READER_CALLS) -> list[int]:
    """How many specialists each activated coordinator runs, so the mode's later phases keep their calls.

    ``available``: specialists with data, per activated coordinator. The reading of the request and,
    in modes that debate, one debate are reserved first; further debates and votes use what is left.
    ``reader_calls``: 1 when no specialist has readiness evidence (no physical option is asked for).
    A specialist counts one call; the calls left over pay for asking again with the positions listed
    the other way (the team's ``_order_checks``).
    """
    reserve = reader_calls + (DEBATE_CALLS if m.debate else 0)
    room = max(1, m.max_calls - reserve)
    slots = [min(n, m.specialists_per_coordinator) for n in available]
    while sum(slots) > room:  # trim the largest first, never below one per coordinator
        i = max(range(len(slots)), key=lambda k: slots[k])
        if slots[i] <= 1:
            break
        slots[i] -= 1
    return slots


__all__ = [
    "DEBATE_CALLS", "EXPECTED_OPTIONS", "PLAIN_QUESTIONS", "READER_CALLS", "LOW_CONSENSUS_BELOW", "LOW_CONSENSUS_WARNING", "MODES", "Mode", "adjusted_confidence",
    "apply_votes", "clamp_pct", "consensus_score", "is_low_consensus", "mode", "rank", "reading_calls", "rank_score", "specialist_slots",
]
