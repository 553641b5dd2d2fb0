"""The deliberation team's records: evidence, insights, conflicts, debate rounds, resolutions,
votes, the decision and the run's result, named as in the design (snake_case in JSON).

Everything a model chooses lands in one of these after Python has checked it. Every number the
design defines by a rule (consensus score, adjusted confidence, the low-consensus flag, the
ranking) is computed in :mod:`moot.teams.deliberation.consensus`; every number in the evidence
comes from the data (:mod:`moot.teams.deliberation.evidence`); the options, positions and plans
are typed (:mod:`moot.teams.deliberation.plan`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from moot.models.base import Usage
from moot.teams.deliberation.plan import Option, PlanItem, Position, TimeWindow

ConflictType = Literal["contradiction", "resource_competition", "priority_clash", "causal_disagreement"]
Severity = Literal["blocking", "significant", "minor"]
RoundType = Literal["position", "evidence", "compromise", "validation"]
CompromiseType = Literal["full_merge", "time_split", "priority_override", "conditional"]
COMPROMISE_TYPES: tuple[str, ...] = ("full_merge", "time_split", "priority_override", "conditional")
"""The design's compromise types."""
DataQuality = Literal["high", "medium", "low"]
Impact = Literal["low", "medium", "high"]
EvidenceKind = Literal["metric", "trend", "event", "free_time", "message", "note"]
Readiness = Literal["lower", "usual", "higher"]

IMPACT_WEIGHT: dict[str, float] = {"low": 1.0, "medium": 2.0, "high": 3.0}
"""Impact as a number for ranking (impact × adjusted confidence)."""


class Evidence(BaseModel):
    """One thing the data shows, computed or quoted by Python (never written by a model)."""

    evidence_id: str
    """``E1``, ``E2``, … across the run."""
    kind: EvidenceKind
    text: str
    """As shown to the specialists and in the answer: ``recovery score 34 % against a weekly average of 56 %``."""
    source: str
    """The file it comes from."""
    label: str = ""
    """For a metric: the column's name in words (``recovery score``)."""
    value: float | None = None
    baseline: float | None = None
    """For a metric: the mean of the week before the latest value."""
    unit: str = ""
    shown_value: str = ""
    shown_baseline: str = ""
    """The numbers as the text writes them (rounded like the data)."""
    change: float | None = None
    """For a metric with a baseline: ``(value − baseline) / baseline`` (−0.36 is 36 % below the week)."""
    readiness: Readiness | None = None
    """For a metric with a baseline: what the change says of the body's readiness for effort, computed by
    :func:`moot.teams.deliberation.evidence.readiness` (``None`` for every other kind of evidence)."""


class AgentInsight(BaseModel):
    """One typed position on the decision, with every specialist that took it."""

    insight_id: str
    agent: str
    """The first specialist that took it (``supporters`` lists all of them)."""
    supporters: list[str] = Field(default_factory=list)
    domain: str
    """Its supporters' domain(s), ``health+work`` when they differ."""
    position: Position | None = None
    """What it recommends, typed (do, skip, shorten, move, split), with its parameters."""
    recommendation: str
    """The position in words, written by Python from ``position``."""
    action: str | None = None
    """The position's kind (``do``, ``skip``, ``shorten``, ``move``, ``split``)."""
    evidence_ids: list[str] = Field(default_factory=list)
    """Evidence the supporters cited, most cited first (ids into the run's ``evidence``)."""
    evidence: list[str] = Field(default_factory=list)
    """The same evidence as text."""
    impact: Impact = "medium"
    confidence: float
    """0–100 %, the mean of its supporters' confidence (clamped)."""
    adjusted_confidence: float | None = None
    """After consensus voting (the design's rule); equal to ``confidence`` when nobody voted."""
    consensus_score: float | None = None
    """Mean vote, −2..+2; ``None`` when nobody voted."""
    low_consensus: bool = False
    """The design's flag: consensus score below −0.5."""
    time_window: TimeWindow | None = None
    """The time the position claims, if one."""
    unresolved: bool = False
    """Part of a conflict that is still open."""
    resolution_of: str | None = None
    """For a compromise insight: the conflict it resolves."""
    resolved_by: str | None = None
    """For an insight in a conflict whose compromise both sides accepted: that compromise's insight id."""
    because: str = ""
    """The strongest evidence, as text."""
    support: float = 0.0
    """Σ over supporters of impact weight × confidence (what the decision weighs)."""

    def final_confidence(self) -> float:
        return self.confidence if self.adjusted_confidence is None else self.adjusted_confidence


class CoordinatorResult(BaseModel):
    """What one domain coordinator returns (the design's CoordinatorResult)."""

    domain: str
    insights: list[AgentInsight] = Field(default_factory=list)
    internal_conflicts: list[str] = Field(default_factory=list)
    """Ids of conflicts between two positions taken inside this domain."""
    cross_domain_flags: list[str] = Field(default_factory=list)
    confidence_level: float = 0.0
    """Mean confidence of its specialists' positions."""
    data_quality: DataQuality = "low"
    specialists: list[str] = Field(default_factory=list)
    activated: bool = True
    reason: str = ""
    """Why it was (not) activated."""


class ConflictSide(BaseModel):
    name: str
    """The side's first supporter."""
    insight_id: str
    position: str
    evidence: list[str] = Field(default_factory=list)
    confidence: float
    supporters: list[str] = Field(default_factory=list)


class Conflict(BaseModel):
    id: str
    type: ConflictType
    agent_a: ConflictSide
    agent_b: ConflictSide
    severity: Severity
    detected_at: str
    detected_by: Literal["python", "model"] = "python"
    """Both kinds the team detects (contradiction, resource competition) are decided in Python."""
    note: str = ""
    """What cannot hold at once, in words (``'interval run' and 'rehearse' both want Wed 06:30–07:30``)."""
    options: list[str] = Field(default_factory=list)
    """The option ids the two positions disagree about."""


class DebateRound(BaseModel):
    round_number: Literal[1, 2, 3, 4]
    round_type: RoundType
    agent_a_response: str = ""
    agent_b_response: str = ""
    moderator_note: str | None = None


class EvidenceCheck(BaseModel):
    """Python's check that a compromise keeps one side's strongest evidence."""

    side: str
    """``agent_a`` or ``agent_b``."""
    strongest_evidence: str
    kept: bool
    how: str
    """What of the side's position the compromise keeps, or what it drops."""


class DebateResolution(BaseModel):
    conflict_id: str
    original_positions: dict[str, str]
    """``{"agent_a": …, "agent_b": …}``."""
    resolution: str = ""
    """The compromise in words, written by Python from its typed slots."""
    compromise_type: CompromiseType | None = None
    slots: dict[str, str] = Field(default_factory=dict)
    """The moderator's typed choices: ``side``, ``option``, ``adjustment``, ``slot``, ``condition``."""
    plan: list[PlanItem] = Field(default_factory=list)
    """What the compromise does to each option (for ``conditional``: when the condition holds)."""
    otherwise: list[PlanItem] = Field(default_factory=list)
    """For ``conditional``: what happens when the condition does not hold."""
    condition: str = ""
    checks: list[EvidenceCheck] = Field(default_factory=list)
    winning_perspective: str | None = None
    confidence_in_resolution: float = 0.0
    """Mean of the two sides' confidence, adjusted by their round-4 votes (the design's rule)."""
    reasoning: str = ""
    accepted: bool = False
    """Both sides voted for the compromise. A rejected compromise leaves the conflict open, never agreed."""
    verdicts: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """``{"agent_a": {"accept": bool, "vote": int, "reason": str}, "agent_b": …}``."""


class Debate(BaseModel):
    conflict_id: str
    rounds: list[DebateRound] = Field(default_factory=list)
    resolution: DebateResolution
    status: Literal["resolved", "unresolved"] = "unresolved"
    reason: str = ""
    """Why it is still open (Python's evidence check, a side's vote, a bad reply, the budget)."""
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


class RequestReading(BaseModel):
    """The request as the reader read it: the options it names and the decision's time window."""

    options: list[Option] = Field(default_factory=list)
    window: TimeWindow | None = None
    window_label: str = ""
    note: str = ""
    """What Python changed or filled in (an option dropped, a window taken from the options)."""


class Decision(BaseModel):
    """What to do, decided in Python from the positions, the debates and the votes."""

    insight_id: str = ""
    """The position or compromise the decision rests on."""
    compromise_type: CompromiseType | None = None
    plan: list[PlanItem] = Field(default_factory=list)
    otherwise: list[PlanItem] = Field(default_factory=list)
    condition: str = ""
    supporters: list[str] = Field(default_factory=list)
    also: list[str] = Field(default_factory=list)
    """Ids of compatible positions folded into the plan."""
    evidence_ids: list[str] = Field(default_factory=list)
    confidence: float = 0.0
    would_change: list[str] = Field(default_factory=list)
    """What in the data would change the advice."""
    open_conflicts: list[str] = Field(default_factory=list)
    what: str = ""
    why: str = ""
    calendar: str = ""
    confidence_line: str = ""
    polished: bool = False
    """The first line was reworded by the model (and passed Python's check)."""


class DeliberationResult(BaseModel):
    """Everything one deliberation produced (``--json`` prints this)."""

    request: str
    mode: str
    now: str
    budget: dict[str, float] = Field(default_factory=dict)
    """The mode's limits as applied: ``max_calls`` and ``deadline_s``."""
    reading: RequestReading = Field(default_factory=RequestReading)
    evidence: list[Evidence] = Field(default_factory=list)
    coordinators: list[CoordinatorResult] = Field(default_factory=list)
    insights: list[AgentInsight] = Field(default_factory=list)
    """Ranked by support, best first."""
    conflicts: list[Conflict] = Field(default_factory=list)
    debates: list[Debate] = Field(default_factory=list)
    votes: list[ConsensusVote] = Field(default_factory=list)
    decision: Decision | None = None
    skipped: list[SkippedInput] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    answer: str = ""
    """The decision first (what, why, calendar, confidence), rendered by Python."""
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
    "COMPROMISE_TYPES", "IMPACT_WEIGHT", "AgentInsight", "CompromiseType", "Conflict", "ConflictSide", "ConflictType",
    "ConsensusVote", "CoordinatorResult", "Debate", "DebateResolution", "DebateRound", "Decision", "DeliberationResult",
    "Evidence", "EvidenceCheck", "RequestReading", "RoundType", "Severity", "SkippedInput",
]
