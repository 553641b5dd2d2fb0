"""The deliberation team: domain coordinators run specialists over your exports, conflicts
between their insights go to a four-round debate with a moderator, other agents vote on
insights, and Python adjusts confidence and ranks the result.

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
    DeliberationResult,
)
from moot.teams.deliberation.roster import DEFAULT_ROSTER, Roster, load_roster
from moot.teams.deliberation.team import ROLES, DeliberationTeam

__all__ = [
    "DEFAULT_ROSTER", "METRICS", "MODES", "ROLES", "AgentInsight", "Conflict", "ConsensusVote", "CoordinatorResult", "DataSet",
    "Debate", "DebateResolution", "DebateRound", "DeliberationResult", "DeliberationTeam", "FeedbackMemory", "Mode",
    "Roster", "adjusted_confidence", "consensus_score", "is_low_consensus", "load_folder", "load_roster", "rank",
]
