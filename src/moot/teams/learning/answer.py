"""The learning team's answer: what a question gets back, with its trace and confidence.

Every :class:`Answer` carries its own metacognition — the question frame and who read it, the
mode and the rule that chose it, the retrieval, the facts used with their sources, the tasks that
ran, every draft, the checker's verdicts and the selector's choice, a confidence — and says
plainly when the knowledge base does not hold the answer.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from moot.models.base import Usage


class FactUsed(BaseModel):
    """A fact an answer rests on, with its provenance."""

    id: int
    content: str
    source: str = ""
    source_date: str | None = None


class SubAgentStep(BaseModel):
    """One sub-agent's part in the answer, from the run's task results."""

    task: str
    agent: str
    status: str
    fallback_agent: str | None = None
    calls: int = 0
    error: str | None = None


class AnswerTrace(BaseModel):
    """How the answer came about: short enough to print under it."""

    intent: str
    intent_decided_by: str
    """``keywords`` (the pre-classifier), ``model`` (structured classification) or ``default``."""
    cues: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    mode_rule: str = ""
    """Which "when multi-agent is worth it" rule chose the mode (or that the caller chose it)."""
    retrieval_strategy: str = ""
    retrieval_note: str = ""
    facts: list[FactUsed] = Field(default_factory=list)
    sub_agents: list[SubAgentStep] = Field(default_factory=list)
    confidence: float = 0.0
    notes: list[str] = Field(default_factory=list)
    frame: dict[str, Any] | None = None
    """The question frame: the kind of answer asked, its subject and unit, and who read it."""
    drafts: list[dict[str, Any]] = Field(default_factory=list)
    """Every draft written (specialist, text, computed values, quoted passages, why it applied)."""
    chosen: str = ""
    """The draft that answered (``single`` for the plain draft, ``none`` when none did)."""

    def render(self) -> str:
        """A few plain lines for a terminal."""
        agents = ", ".join(
            s.agent + (f"→{s.fallback_agent}" if s.fallback_agent else "") + ("" if s.status in ("completed", "fell_back") else f" ({s.status})")
            for s in self.sub_agents
        )
        lines = [
            f"intent: {self.intent} (decided by {self.intent_decided_by}{'; ' + ', '.join(self.cues) if self.cues else ''})",
            f"mode rule: {self.mode_rule}",
            f"retrieval: {self.retrieval_note or self.retrieval_strategy}",
            f"sub-agents: {agents or 'none'}",
            f"confidence: {self.confidence:.2f}",
        ]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


class Answer(BaseModel):
    """The team's answer to one question."""

    question: str
    answer: str
    mode: str
    """The mode actually used (``single`` or ``multi``; ``auto`` resolves to one of them)."""
    intent: str
    sub_agents: list[str]
    facts_used: list[FactUsed]
    confidence: float
    knows: bool
    """False when the knowledge base does not hold the answer (the answer says so plainly)."""
    answered: bool = True
    """False when no agent produced an answer (the budget ran out, or every agent failed) and the
    text only lists the most relevant facts: a partial result, not an answer."""
    trace: AnswerTrace
    usage: Usage
    seconds: float
    run_id: str

    def to_json(self) -> dict[str, Any]:
        """What ``moot ask --json`` prints."""
        return {
            "answer": self.answer,
            "mode": self.mode,
            "sub_agents": self.sub_agents,
            "facts_used": [f.model_dump() for f in self.facts_used],
            "confidence": self.confidence,
            "knows": self.knows,
            "answered": self.answered,
            "intent": self.intent,
            "usage": {"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens,
                      "requests": self.usage.requests, "cost_usd": round(self.usage.cost_usd, 6)},
            "seconds": round(self.seconds, 3),
            "run_id": self.run_id,
            "trace": self.trace.model_dump(exclude={"facts"}),
        }


__all__ = ["Answer", "AnswerTrace", "FactUsed", "SubAgentStep"]
