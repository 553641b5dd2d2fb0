"""The adapter interface: what an agent must do to be scored by the progressive suite.

Any agent that can learn content and answer a question is scored the same way — the
learning team (``moot.teams.learning.eval_adapter``) or a user's own agent. The runner makes
one agent per level, in a fresh working folder, so no level sees another level's knowledge.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Union, runtime_checkable

from moot.models.base import Usage


@dataclass
class AgentAnswer:
    """One answer from the agent under test."""

    text: str
    usage: Usage = field(default_factory=Usage)
    """Tokens and model calls this answer cost (``requests`` = model calls)."""
    run_id: str | None = None
    """The run in the run store, when the agent records one (error analysis reads it)."""
    trace: dict[str, Any] | None = None
    """Anything that explains the answer; ``intent``, ``facts`` (list of {content}) and
    ``mode`` are read by the error analysis when present."""
    seconds: float | None = None
    """Wall time, when the agent measured it (else the runner's measurement is used)."""
    complete: bool = True
    """False when the agent gave up and returned a partial result instead of an answer (for
    example only the facts it found, after its budget ran out). Graded as a failure whatever the
    text contains: a list of retrieved facts can hold the right number without answering."""


@runtime_checkable
class EvalAgent(Protocol):
    """An agent the suite can score: it learns articles, then answers questions.

    ``mode`` is ``single`` or ``multi`` (an agent with one way of answering may ignore it);
    ``seed`` differs between the runs of a question, so sampling can differ — a
    deterministic agent may ignore it.
    """

    async def learn(self, content: str, *, source: str, published: str | None) -> Usage | None:
        """Take in one article; return what learning cost, when known."""
        ...

    async def answer(self, question: str, *, mode: str, seed: int | None) -> AgentAnswer:
        """Answer one question from what was learned."""
        ...


class TeachingAgent(Protocol):
    """Optional (L7): teach ``topic`` to a student that starts empty; the STUDENT answers."""

    async def teach_and_quiz(self, topic: str, questions: list[str], *, seed: int | None) -> list[AgentAnswer]:
        ...


class Inspectable(Protocol):
    """Optional: lets the error analysis look inside the agent."""

    def knowledge_text(self) -> str:
        """Everything the agent learned, as text (to tell "never learned" from "not retrieved")."""
        ...

    def run_details(self, run_id: str) -> dict[str, Any] | None:
        """The run's task results ({task id: {status, agent, output, …}}) from the run store."""
        ...


AgentFactory = Callable[[Path], Union[EvalAgent, Awaitable[EvalAgent]]]
"""Makes a fresh agent whose memory lives in the given (empty, temporary) folder."""


def supports_teaching(agent: object) -> bool:
    return callable(getattr(agent, "teach_and_quiz", None))


async def close_agent(agent: object) -> None:
    """Close the agent if it has ``aclose`` (or ``close``)."""
    closer = getattr(agent, "aclose", None) or getattr(agent, "close", None)
    if closer is not None:
        result = closer()
        if hasattr(result, "__await__"):
            await result


__all__ = ["AgentAnswer", "AgentFactory", "EvalAgent", "Inspectable", "TeachingAgent", "close_agent",
           "supports_teaching"]
