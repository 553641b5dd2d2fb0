"""What a graph run returns: the scaffold, the answer, the iterations, the agents, usage."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from moot.models.base import Usage
from moot.teams.graph.scaffold import NoiseStatus, Scaffold


class IterationRecord(BaseModel):
    """One turn of the loop, as the live display and the benchmark see it."""

    iteration: int
    nodes: int
    edges: int
    gaps: int
    noise: float
    noise_satisfied: bool
    questions: int = 0
    passages: int = 0
    added_nodes: int = 0
    added_edges: int = 0
    merged: int = 0
    challenged: int = 0
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    """Wall time of the iteration: the critical path, with the parallel steps overlapping."""
    agent_seconds: float = 0.0
    """The sum of every step's time: what the iteration would take one step after another."""
    failed_steps: list[str] = Field(default_factory=list)


class GraphResult(BaseModel):
    """Everything a graph run produced."""

    question: str
    answer: str
    scaffold: Scaffold
    noise: NoiseStatus
    iterations: list[IterationRecord] = Field(default_factory=list)
    agents: list[dict[str, Any]] = Field(default_factory=list)
    converged: bool = False
    usage: Usage = Field(default_factory=Usage)
    seconds: float = 0.0
    run_id: str = ""
    status: str = "completed"
    stop_reason: str = ""
    sources: list[str] = Field(default_factory=list)
    chunks: int = 0
    """Sentences read from the sources (their bodies; front matter is metadata)."""
    mentions: list[dict[str, Any]] = Field(default_factory=list)
    """Entities the mapper accepted that nothing in the sources links: listed, not drawn."""

    def to_json(self) -> dict[str, Any]:
        """The CLI's ``--json`` shape: one object, nodes and edges as lists."""
        s = self.scaffold

        return {
            "question": self.question,
            "answer": self.answer,
            "subject": s.subject,
            "object": s.object,
            "path": [h.model_dump(mode="json") for h in s.path],
            "vocabulary": s.vocabulary,
            "documents": s.documents,
            "nodes": [n.model_dump(mode="json") for n in s.nodes.values()],
            "edges": [e.model_dump(mode="json") for e in s.edges.values()],
            "gaps": [g.model_dump(mode="json") for g in s.gaps.values()],
            "hypotheses": [h.model_dump(mode="json") for h in s.hypotheses],
            "noise": {"current": self.noise.current, "target": self.noise.target, "satisfied": self.noise.satisfied,
                      "node_ratio": self.noise.node_ratio, "edge_ratio": self.noise.edge_ratio},
            "iterations": [i.model_dump(mode="json") for i in self.iterations],
            "converged": self.converged,
            "agents": self.agents,
            "graph_questions": [q.model_dump(mode="json") for q in s.graph_questions],
            "graph_answers": [a.model_dump(mode="json") for a in s.graph_answers],
            "usage": self.usage.model_dump(mode="json"),
            "seconds": self.seconds,
            "run_id": self.run_id,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "sources": self.sources,
            "mentions": self.mentions,
        }
