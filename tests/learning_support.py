"""Shared by the learning team's specialist tests: one question to a team on scripted models."""

from __future__ import annotations

from typing import Any

from moot.memory import KnowledgeBase
from moot.models.testing import FunctionModel, by_agent
from moot.teams.learning import LearningTeam

DONT_KNOW = "I do not know."


def ask(kb: KnowledgeBase, question: str, routes: dict[str, Any], mode: str = "multi",
        default: Any = DONT_KNOW) -> tuple[Any, FunctionModel]:
    """The team's reply to ``question`` and the model (for its requests). Agents without a route in
    ``routes`` answer ``default``; ``default=None`` makes an unrouted agent fail the test."""
    model = FunctionModel(by_agent(routes, default=default))
    return LearningTeam(kb, model=model, store=False).ask_sync(question, mode=mode), model
