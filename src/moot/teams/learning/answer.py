"""The learning team's answer: what a question gets back, with its trace and confidence.

Every :class:`Answer` carries its own metacognition — the intent and who decided it, the mode
and the rule that chose it, the retrieval strategy, the facts used with their sources, the
sub-agents that ran (and any fallback), the selector's choice and the checker's verdicts, a
confidence — and says plainly when the knowledge base does not hold the answer.
(Its own module so that the coordinator and the team facade do not import each other.)
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from moot.models.base import Usage
from moot.runtime import RunResult

ROLES = ("coordinator", "single", "compute", "procedure", "rules", "sources", "bridge", "cause", "reasoning", "research",
         "selector", "teaching")
"""The answering roles a model can be given with ``models={role: model}``."""

_UNKNOWN = re.compile(r"\b(does not hold|doesn't hold|do not know|don't know|no information|not in the facts|"
                      r"cannot be determined|can't be determined|not enough information)\b", re.I)
_CITATION = re.compile(r"#(\d+)")
_NUMBER_TOKEN = re.compile(r"(?<![\w#])\d[\d,]*(?:\.\d+)?")


def _numbers(text: str) -> set[str]:
    return {m.group().replace(",", "").rstrip(".") for m in _NUMBER_TOKEN.finditer(text)}


def _transcript_text(run: RunResult, *, answering_task: str | None) -> str:
    """What the specialists said, and every tool result (a calculation grounds a number; the
    answering task's own words cannot ground themselves, but its calculator's results can)."""
    return "\n".join(
        str(getattr(message, "content", ""))
        for task_id, result in run.results.items()
        for message in (result.transcript or ())
        if getattr(message, "role", "") == "tool" or (task_id != answering_task and getattr(message, "role", "") == "assistant")
    )


def _ungrounded_numbers(answer: str, facts: list[dict[str, Any]], notes: str, question: str) -> list[str]:
    """Numbers in ``answer`` that appear in none of the facts, the notes or the question."""
    grounded = _numbers(notes) | _numbers(question)
    for fact in facts:
        grounded |= _numbers(" ".join(str(fact.get(k) or "") for k in ("content", "value", "source_date")))
    return sorted(_numbers(answer) - grounded)


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


def _fact_used(fact: dict[str, Any]) -> FactUsed:
    return FactUsed(id=int(fact["id"]), content=str(fact["content"]), source=str(fact.get("source") or ""),
                    source_date=fact.get("source_date"))


def _confidence(*, knows: bool, facts: int, steps: list[SubAgentStep], run: RunResult, conflicts: int,
                cited: bool, unsupported_numbers: bool = False) -> float:
    """A rule, not a feeling: evidence raises it; fallbacks, budget stops and conflicts lower it."""
    if not knows:
        return 0.05
    score = 0.45 + 0.08 * min(facts, 3)
    if cited:
        score += 0.1
    if any(s.fallback_agent for s in steps):
        score -= 0.15
    if run.status != "completed":
        score -= 0.2
    if conflicts:
        score -= 0.1
    if unsupported_numbers:
        score -= 0.25
    return round(min(0.95, max(0.05, score)), 2)


def build_answer(*, question: str, classification: Any, mode: str, rule: str, recalled: dict[str, Any],
                 run: RunResult, extra_usage: Usage, seconds: float, conflicts: list[str], max_facts: int) -> Answer:
    """Turn a finished run into an :class:`Answer` with its trace."""
    steps = [SubAgentStep(task=tid, agent=r.agent, status=r.status, fallback_agent=r.fallback_agent,
                          calls=r.usage.requests, error=r.error) for tid, r in run.results.items()]
    given: dict[int, dict[str, Any]] = {}
    for tid in ("memory", "research"):
        result = run.results.get(tid)
        if result is not None and isinstance(result.output, dict):
            for fact in result.output.get("facts") or []:
                given.setdefault(int(fact["id"]), fact)
    facts = list(given.values())[:max_facts]
    notes: list[str] = []
    unsupported_numbers = False
    sink = next((t for t in ("select", "teaching", "single") if t in run.results), None)
    text = ""
    selection: dict[str, Any] | None = None
    if sink is not None:
        out = run.results[sink]
        if out.status in ("completed", "fell_back", "stopped") and out.output:
            if isinstance(out.output, dict) and "answer" in out.output:
                selection = out.output
                text = str(out.output["answer"]).strip()
                notes.append(f"selector: {selection.get('rule')}")
                notes += [f"checker: {c}" for c in selection.get("checks") or []]
            elif isinstance(out.output, dict) and "draft" in out.output:
                text = str(out.output["draft"]).strip()
            else:
                text = str(out.output).strip()
    if not recalled["relevant"]:
        about = ", ".join(recalled.get("terms") or []) or "this question"
        notes.append(f"the knowledge base holds no facts about {about}")
        text = f"I don't know: the knowledge base holds no facts about {about}."
    answered = bool(text) or not recalled["relevant"]
    if not text and recalled["relevant"]:
        notes.append(f"no specialist produced an answer ({run.stop_reason}); showing the retrieved facts")
        text = "I could not complete an answer; the most relevant facts are: " + "; ".join(
            f"[#{f['id']}] {f['content']}" for f in facts[:3])
    if selection is None and recalled["relevant"] and (
        invented := _ungrounded_numbers(text, facts, _transcript_text(run, answering_task=sink), question)
    ):
        # Single mode is the baseline and keeps its answer, but the note says which numbers no
        # fact or calculation supports (multi mode's checker has already held its answer to them).
        notes.append(f"the answer states {', '.join(invented)}, found in no fact or calculation: check it")
        unsupported_numbers = True
    knows = bool(facts) and recalled["relevant"] and not _UNKNOWN.search(text)
    if recalled["relevant"] and _UNKNOWN.search(text):
        notes.append("the answer says the facts found do not settle the question")
    cited_ids = {int(i) for i in _CITATION.findall(text)} & set(given)
    used = [given[i] for i in given if i in cited_ids] if cited_ids else facts
    if cited_ids:
        notes.append("facts used = the facts the answer cites")
    notes += [f"sources disagree: {c}" for c in conflicts[:3]]
    for step in steps:
        if step.fallback_agent:
            notes.append(f"{step.agent} failed ({step.error}); {step.fallback_agent} took over")
    if run.status != "completed":
        notes.append(run.stop_reason)
    confidence = _confidence(knows=knows, facts=len(used), steps=steps, run=run, conflicts=len(conflicts),
                             cited=bool(cited_ids), unsupported_numbers=unsupported_numbers)
    sub_agents = [s.task for s in steps if s.status not in ("not_started", "skipped")]
    if classification.decided_by == "model":
        sub_agents.insert(0, "coordinator")
    sub_agents += [s.fallback_agent for s in steps if s.fallback_agent and s.fallback_agent not in sub_agents]
    facts_used = [_fact_used(f) for f in used] if knows else []
    trace = AnswerTrace(intent=classification.intent, intent_decided_by=classification.decided_by,
                        cues=classification.cues, entities=classification.entities, mode_rule=rule,
                        retrieval_strategy=recalled["strategy"], retrieval_note=recalled["note"],
                        facts=facts_used, sub_agents=steps, confidence=confidence, notes=notes)
    return Answer(question=question, answer=text, mode=mode, intent=classification.intent, sub_agents=sub_agents,
                  facts_used=facts_used, confidence=confidence, knows=knows, answered=answered, trace=trace,
                  usage=run.usage + extra_usage, seconds=seconds, run_id=run.run_id)



__all__ = ["ROLES", "Answer", "AnswerTrace", "FactUsed", "SubAgentStep", "build_answer"]
