"""Shared set-up for the deliberation team's tests: a function model that plays every agent,
routed by the output schema an agent asks for and the agent's role on the request (never by
prompt text)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel

ROOT = Path(__file__).resolve().parents[1]
SLEEP_VS_DEADLINE = ROOT / "examples" / "deliberation" / "sleep-vs-deadline"
RECOVERY_DAY = ROOT / "examples" / "deliberation" / "recovery-day"
REQUEST = "I have the Q4 report due at 9am tomorrow and feel wiped out. Should I keep working tonight?"
NOW = "2026-11-24T20:00"


def enum(schema: dict[str, Any], definition: str | None, prop: str) -> list[Any]:
    spec = (schema["$defs"][definition] if definition else schema)["properties"][prop]
    if "items" in spec:
        spec = spec["items"]
    return list(spec.get("enum") or ([spec["const"]] if "const" in spec else []))


def pick(options: list[str], word: str) -> str:
    return next((o for o in options if word in o), "any time")


class Deliberators:
    """Plays specialists, the judge, debaters, moderator, validators and voters.

    ``insights``: specialist name → list of (recommendation, impact, confidence, slot word);
    ``reject``: specialists that reject the compromise; ``bad_moderator``: the moderator's replies
    break the schema; ``votes``: voter → vote for every insight; ``judge``: conflict type for every pair.
    """

    def __init__(self, *, insights: dict[str, list[tuple[str, str, int, str]]] | None = None,
                 reject: tuple[str, ...] = (), bad_moderator: bool = False, votes: dict[str, int] | None = None,
                 judge: str = "none", barrier: asyncio.Barrier | None = None, slow: dict[str, float] | None = None) -> None:
        self.insights = insights if insights is not None else DEFAULT_INSIGHTS
        self.reject, self.bad_moderator, self.votes, self.judge = reject, bad_moderator, votes or {}, judge
        self.barrier = barrier
        self.slow = slow or {}
        """Agent → seconds its answers take (to cut it with a deadline)."""
        self.calls: list[tuple[str, str]] = []
        """(schema, agent) per request, in order."""
        self.requests: list[ModelRequest] = []

    async def __call__(self, request: ModelRequest) -> Any:
        assert request.output is not None, "every deliberation agent answers under a schema"
        kind, schema = request.output.name, request.output.json_schema
        agent = request.output.description.split()[1] if request.output.description.startswith("the ") else request.output.description
        self.calls.append((kind, agent))
        self.requests.append(request)
        if agent in self.slow:
            await asyncio.sleep(self.slow[agent])
        if kind == "SpecialistInsights":
            if self.barrier is not None:
                await asyncio.wait_for(self.barrier.wait(), 5)
            slots = enum(schema, "InsightOut", "when")
            facts = enum(schema, "InsightOut", "evidence")
            return {"insights": [{"finding": "my data shows it", "evidence": facts[:2], "action": ACTION_OF.get(agent, "rest"), "detail": rec, "impact": impact,
                                  "confidence": conf, "when": pick(slots, word) if word else "any time"}
                                 for rec, impact, conf, word in self.insights.get(agent, [("Keep going.", "low", 50, "")])]}
        if kind == "ConflictJudgement":
            pairs = enum(schema, "PairJudgement", "pair")
            return {"pairs": [{"pair": p, "conflict": self.judge, "severity": "significant"} for p in pairs]}
        if kind == "DebateEvidence":
            return {"argument": "my data says so", "evidence": enum(schema, None, "evidence")[:2]}
        if kind == "Compromise":
            if self.bad_moderator:
                return '{"resolution": 5}'
            types = enum(schema, None, "compromise_type")
            return {"resolution": "Work on the report until 22:00, send the manager an update, then sleep.",
                    "compromise_type": "time_split" if "time_split" in types else types[0], "winning_perspective": "neither",
                    "keep_from_a": enum(schema, None, "keep_from_a")[:1], "keep_from_b": enum(schema, None, "keep_from_b")[:1],
                    "when": pick(enum(schema, None, "when"), "tonight (evening)"), "reasoning": "both keep what matters"}
        if kind == "CompromiseVerdict":
            return {"accept": agent not in self.reject, "reason": "protects my evidence" if agent not in self.reject else "gives up sleep"}
        if kind == "ConsensusBallot":
            ids = enum(schema, "Ballot", "insight")
            return {"votes": [{"insight": i, "vote": self.votes.get(agent, 1), "reasoning": "fits my data"} for i in ids]}
        raise AssertionError(f"unexpected schema {kind}")


ACTION_OF = {"sleep": "sleep early", "hypnos": "sleep early", "calendar": "work on the deadline", "chronos": "work on the deadline",
             "deep_content": "work on the deadline", "stress": "limit messages", "activity": "take a light walk"}

DEFAULT_INSIGHTS: dict[str, list[tuple[str, str, int, str]]] = {
    "recovery": [("Take it easy tonight; your recovery is low.", "high", 80, "")],
    "sleep": [("Be in bed by 22:30 to repay sleep debt.", "high", 85, "tonight (night)")],
    "calendar": [("Use tonight's block to finish the Q4 report.", "high", 75, "Finish Q4 report")],
    "deep_content": [("Fix the section 3 chart before sending.", "medium", 70, "")],
    "stress": [("Mute non-urgent channels tonight.", "low", 60, "")],
    "activity": [("Walk 10 minutes tomorrow morning.", "low", 55, "tomorrow morning")],
    "cardio": [("Skip hard cardio this week.", "medium", 65, "")],
    "context": [("Ask for help on section 4.", "medium", 60, "")],
}


def model_for(script: Deliberators) -> FunctionModel:
    return FunctionModel(script)
