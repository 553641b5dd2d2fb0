"""The code research team: planner → parallel researchers → synthesizer → verifier.

See docs/code-research.md.
"""

from __future__ import annotations

from moot.teams.research.models import (
    EvidenceBundle,
    Finding,
    MultiAgentResult,
    PhaseUsage,
    ResearchPlan,
    SubQuestion,
    VerificationResult,
)
from moot.teams.research.routing import Route, route
from moot.teams.research.team import ROLES, ResearchConfig, ResearchTeam

__all__ = [
    "ROLES",
    "EvidenceBundle",
    "Finding",
    "MultiAgentResult",
    "PhaseUsage",
    "ResearchConfig",
    "ResearchPlan",
    "ResearchTeam",
    "Route",
    "SubQuestion",
    "VerificationResult",
    "route",
]
