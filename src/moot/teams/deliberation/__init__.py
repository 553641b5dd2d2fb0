"""The deliberation team: the request is read into the options it names; domain coordinators'
specialists take typed positions on them from evidence Python computed from your exports; real
conflicts (contradictions, competition for the same time) go to a four-round debate that ends in
a typed compromise or stays open; other agents vote; Python decides and writes the answer.

See docs/deliberation.md.
"""

from __future__ import annotations

from moot.teams.deliberation.consensus import MODES, Mode, adjusted_confidence, consensus_score, is_low_consensus, rank
from moot.teams.deliberation.data import METRICS, DataSet, load_folder
from moot.teams.deliberation.memory import FeedbackMemory
from moot.teams.deliberation.models import (
    AgentInsight,
    Conflict,
    ConsensusVote,
    CoordinatorResult,
    Debate,
    DebateResolution,
    DebateRound,
    Decision,
    DeliberationResult,
    Evidence,
    RequestReading,
)
from moot.teams.deliberation.plan import Option, PlanItem, Position, TimeWindow
from moot.teams.deliberation.roster import DEFAULT_ROSTER, Roster, load_roster
from moot.teams.deliberation.team import ROLES, DeliberationTeam

__all__ = [
    "DEFAULT_ROSTER", "METRICS", "MODES", "ROLES", "AgentInsight", "Conflict", "ConsensusVote", "CoordinatorResult", "DataSet",
    "Debate", "DebateResolution", "DebateRound", "Decision", "DeliberationResult", "DeliberationTeam", "Evidence",
    "FeedbackMemory", "Mode", "Option", "PlanItem", "Position", "RequestReading", "Roster", "TimeWindow",
    "adjusted_confidence", "consensus_score", "is_low_consensus", "load_folder", "load_roster", "rank",
]
