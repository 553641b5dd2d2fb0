"""The deliberation team's data: insights, coordinator results, conflicts, debate rounds,
resolutions and votes, named as in the design (snake_case in JSON), plus the run's result.

Everything a model writes lands in one of these after Python has checked it; every number that
the design defines by a rule (the consensus score, the adjusted confidence, the low-consensus
flag, the ranking) is computed in :mod:`moot.teams.deliberation.consensus`, never written by a model.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from moot.models.base import Usage

ConflictType = Literal["contradiction", "resource_competition", "priority_clash", "causal_disagreement"]
Severity = Literal["blocking", "significant", "minor"]
RoundType = Literal["position", "evidence", "compromise", "validation"]
CompromiseType = Literal["full_merge", "time_split", "priority_override", "conditional"]
DataQuality = Literal["high", "medium", "low"]
Impact = Literal["low", "medium", "high"]

IMPACT_WEIGHT: dict[str, float] = {"low": 1.0, "medium": 2.0, "high": 3.0}
"""Impact as a number for ranking (impact × adjusted confidence)."""


class TimeWindow(BaseModel):
    """When a recommendation takes place (resource competition is decided from these)."""

    start: datetime
    end: datetime

    def overlaps(self, other: TimeWindow) -> bool:
        return self.start < other.end and other.start < self.end

    def label(self) -> str:
        same_day = self.start.date() == self.end.date()
        return f"{self.start:%a %H:%M}–{self.end:%H:%M}" if same_day else f"{self.start:%a %H:%M}–{self.end:%a %H:%M}"


class AgentInsight(BaseModel):
    """One recommendation of one specialist."""

    insight_id: str
    agent: str
    """The specialist that wrote it."""
    domain: str
    """Its coordinator's domain."""
    recommendation: str
    action: str | None = None
    """The action the specialist chose from a fixed list (``rest``, ``sleep early``, ``work on the deadline``, …)."""
    evidence: list[str] = Field(default_factory=list)
    """Facts from the data summary that the specialist cited (checked to come from its summary)."""
    impact: Impact = "medium"
    confidence: float
    """0–100 %, as the specialist gave it (clamped)."""
    adjusted_confidence: float | None = None
    """After consensus voting (the design's rule); equal to ``confidence`` when nobody voted."""
    consensus_score: float | None = None
    """Mean vote, −2..+2; ``None`` when nobody voted."""
    low_consensus: bool = False
    """The design's flag: consensus score below −0.5."""
    time_window: TimeWindow | None = None
    """When the recommendation happens, if it is tied to a time (from the calendar slot it names)."""
    unresolved: bool = False
    """Part of a conflict whose debate did not agree on a compromise."""
    resolution_of: str | None = None
    """For a compromise insight: the conflict it resolves."""
    resolved_by: str | None = None
    """For an insight in a conflict whose compromise both sides accepted: that compromise's insight id."""
    because: str = ""
    """The specialist's reason in one sentence."""

    def final_confidence(self) -> float:
        return self.confidence if self.adjusted_confidence is None else self.adjusted_confidence


class CoordinatorResult(BaseModel):
    """What one domain coordinator returns (the design's CoordinatorResult)."""

    domain: str
    insights: list[AgentInsight] = Field(default_factory=list)
    internal_conflicts: list[str] = Field(default_factory=list)
    """Ids of conflicts between two insights of this domain."""
    cross_domain_flags: list[str] = Field(default_factory=list)
    confidence_level: float = 0.0
    """Mean confidence of its insights."""
    data_quality: DataQuality = "low"
    specialists: list[str] = Field(default_factory=list)
    activated: bool = True
    reason: str = ""
    """Why it was (not) activated."""


class ConflictSide(BaseModel):
    name: str
    """The specialist."""
    insight_id: str
    position: str
    evidence: list[str] = Field(default_factory=list)
    confidence: float


class Conflict(BaseModel):
    id: str
    type: ConflictType
    agent_a: ConflictSide
    agent_b: ConflictSide
    severity: Severity
    detected_at: str
    detected_by: Literal["python", "model"]
    """Resource competition is decided in Python from times; the other types by the model."""
    note: str = ""


class DebateRound(BaseModel):
    round_number: Literal[1, 2, 3, 4]
    round_type: RoundType
    agent_a_response: str = ""
    agent_b_response: str = ""
    moderator_note: str | None = None


class DebateResolution(BaseModel):
    conflict_id: str
    original_positions: dict[str, str]
    """``{"agent_a": …, "agent_b": …}``."""
    resolution: str = ""
    compromise_type: CompromiseType | None = None
    winning_perspective: str | None = None
    confidence_in_resolution: float = 0.0
    reasoning: str = ""
    accepted: bool = False
    """Both sides accepted the moderator's compromise. A rejected compromise is unresolved, never agreed."""
    verdicts: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """``{"agent_a": {"accept": bool, "reason": str}, "agent_b": …}``."""


class Debate(BaseModel):
    conflict_id: str
    rounds: list[DebateRound] = Field(default_factory=list)
    resolution: DebateResolution
    status: Literal["resolved", "unresolved"] = "unresolved"
    reason: str = ""
    """Why it is unresolved (a side rejected, a bad reply, the budget)."""
    memory_used: list[str] = Field(default_factory=list)
    """Past user decisions on similar conflicts that the moderator saw."""


class ConsensusVote(BaseModel):
    insight_id: str
    voting_agent: str
    vote: Literal[-2, -1, 0, 1, 2]
    reasoning: str = ""
    timestamp: str


class SkippedInput(BaseModel):
    """Data the loaders could not use; the rest is still used."""

    file: str
    line: int | None = None
    reason: str


class DeliberationResult(BaseModel):
    """Everything one deliberation produced (``--json`` prints this)."""

    request: str
    mode: str
    now: str
    budget: dict[str, float] = Field(default_factory=dict)
    """The mode's limits as applied: ``max_calls`` and ``deadline_s``."""
    coordinators: list[CoordinatorResult] = Field(default_factory=list)
    insights: list[AgentInsight] = Field(default_factory=list)
    """Ranked by impact × adjusted confidence, best first."""
    conflicts: list[Conflict] = Field(default_factory=list)
    debates: list[Debate] = Field(default_factory=list)
    votes: list[ConsensusVote] = Field(default_factory=list)
    skipped: list[SkippedInput] = Field(default_factory=list)
    answer: str = ""
    status: str = "completed"
    stop_reason: str = ""
    usage: Usage = Field(default_factory=Usage)
    seconds: float = 0.0
    run_id: str = ""

    def to_json(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        data["usage"] = {"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens,
                         "requests": self.usage.requests, "cost_usd": round(self.usage.cost_usd, 6)}
        return data


__all__ = [
    "IMPACT_WEIGHT", "AgentInsight", "CompromiseType", "Conflict", "ConflictSide", "ConflictType", "ConsensusVote",
    "CoordinatorResult", "Debate", "DebateResolution", "DebateRound", "DeliberationResult", "RoundType", "Severity",
    "SkippedInput", "TimeWindow",
]
