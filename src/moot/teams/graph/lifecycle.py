"""Each agent's life in a run: spawn → active → pause ⇄ resume → terminate, with counts."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field

from moot.errors import MootError

Status = Literal["spawn", "active", "pause", "resume", "terminate"]

_ALLOWED: dict[str, set[str]] = {
    "spawn": {"active", "terminate"},
    "active": {"pause", "terminate"},
    "pause": {"resume", "terminate"},
    "resume": {"pause", "terminate"},
    "terminate": set(),
}


class AgentState(BaseModel):
    """One agent's state (the design's AgentState), plus its transitions for the run's record."""

    id: str
    status: Status = "spawn"
    questions_generated: int = 0
    answers_processed: int = 0
    calls: int = 0
    last_activity: float = Field(default_factory=time.time)
    error: str | None = None
    history: list[tuple[Status, float]] = Field(default_factory=list)

    def move(self, status: Status) -> None:
        if status == self.status:
            return
        if status not in _ALLOWED[self.status]:
            raise MootError(f"agent {self.id} cannot go from {self.status} to {status}",
                            fix="this is a bug in the graph team's loop; please report it")
        self.status = status
        self.last_activity = time.time()
        self.history.append((status, self.last_activity))


class Lifecycle:
    """The states of every agent of one run."""

    def __init__(self, names: tuple[str, ...]) -> None:
        now = time.time()
        self.agents = {n: AgentState(id=n, history=[("spawn", now)]) for n in names}

    def working(self, name: str) -> None:
        """The agent starts a piece of work: active the first time, resume after a pause."""
        state = self.agents[name]
        state.move("active" if state.status == "spawn" else "resume" if state.status == "pause" else state.status)

    def waiting(self, name: str) -> None:
        """The agent waits for evidence or for the other agents (between its turns)."""
        state = self.agents[name]
        if state.status in ("active", "resume"):
            state.move("pause")

    def terminate(self, name: str, error: str | None = None) -> None:
        state = self.agents[name]
        if state.status != "terminate":
            state.error = error or state.error
            state.move("terminate")

    def terminate_all(self) -> None:
        for name in self.agents:
            self.terminate(name)

    def to_json(self) -> list[dict[str, object]]:
        return [s.model_dump(mode="json") for s in self.agents.values()]
