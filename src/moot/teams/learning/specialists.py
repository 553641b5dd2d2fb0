"""The learning team's specialists and the single-agent baseline.

Every specialist is a :class:`~moot.runtime.SubAgent`, so the task graph runs, budgets,
records and falls back from it like any other agent. What differs is *how little* each one
asks of the model: retrieval is Python (the MemoryAgent makes no model call at all), the
temporal worksheet and conflicting values are computed before the ReasoningAgent is asked,
and every model-driven specialist gets a short prompt of its own with only the facts that
matter. That is the seed's thesis — focused prompts beat one prompt with every instruction —
and it is what makes a 0.5B model usable.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from moot.memory import KnowledgeBase
from moot.memory.passages import find_passages, find_source_sentences
from moot.memory.procedures import find_procedures
from moot.memory.search import query_terms
from moot.models.base import ModelSettings, Usage
from moot.runtime import AgentProgress, AgentResult, BudgetTracker, EventBus, EventType, SubAgent, load_prompt
from moot.runtime.events import BoundEmitter, summarize
from moot.teams.learning.procedure import read_relation
from moot.teams.learning.sources import value_kind
from moot.teams.learning.tools import (
    calculate,
    fact_record,
    memory_tools,
    render_worksheet,
    temporal_worksheet,
)

MAX_FACTS = 12
MAX_PASSAGES = 2
"""Source paragraphs shown beside the facts (see :mod:`moot.memory.passages`)."""
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
"""Facts shown to a model: a 0.5B model loses track of more, and the best ones come first."""

REASONING_FOCUS: dict[str, str] = {
    "temporal": "List the values in time order and state each change; the worksheet has the differences.",
    "mathematical": "Take the raw numbers from the facts, then compute with the calculate tool.",
    "causal": "Name the root cause that started the chain, then the contributing factors.",
    "counterfactual": "Start from what actually happened, apply the change, reason to the likely result, and hedge.",
    "contradiction": "Give every conflicting value with its source; do not dismiss any; suggest why they differ.",
    "procedural": "Give the steps in their order, one short line each.",
    "multi_source": "Combine what each source says and name the source of each point.",
}
"""One focus line per reasoning type: the agent sees only the one its question needs."""

ARITHMETIC_INTENTS = frozenset({"mathematical"})
"""Only these get the calculator: the worksheet already holds temporal differences, and a small
model calls any tool it is offered, which costs a model call."""


def render_facts(facts: list[Mapping[str, Any]]) -> str:
    lines = []
    for fact in facts[:MAX_FACTS]:
        where = ", ".join(str(p) for p in (fact.get("source"), fact.get("source_date")) if p)
        old = "" if fact.get("is_current", True) else " (older value)"
        lines.append(f"[#{fact['id']}] {fact['content']}{f' ({where})' if where else ''}{old}")
    return "\n".join(lines) or "(no facts)"


def _value_key(value: Any) -> str:
    """A value as compared for disagreement: "$1,200,000" and "1200000" are one value."""
    text = " ".join(str(value).strip().lower().split())
    return re.sub(r"(?<=\d),(?=\d{3})", "", text).replace("$", "").strip(" .")


def conflicting_values(facts: list[Mapping[str, Any]]) -> list[str]:
    """Current facts in which *different sources* give one entity/attribute different values.

    Shown, never resolved silently. Two values from the same source are not a disagreement
    between sources: with a small model that is almost always one article's two numbers filed
    under one loose attribute name ("budget": the total and the grant), and calling it a
    contradiction misleads the answer.
    """
    by_key: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = {}
    for fact in facts:
        if fact.get("entity") and fact.get("attribute") and fact.get("is_current", True) and fact.get("value"):
            key = (str(fact["entity"]).lower(), str(fact["attribute"]).lower())
            by_key.setdefault(key, {}).setdefault(_value_key(fact["value"]), fact)
    lines = []
    for values in by_key.values():
        sources = {str(f.get("source") or "").strip().lower() for f in values.values()}
        if len(values) > 1 and len(sources) > 1:
            parts = [f"{f['value']} ({f.get('source') or 'unknown source'}, #{f['id']})" for f in values.values()]
            first = next(iter(values.values()))
            lines.append(f"{first['entity']} {first['attribute']}: " + " vs ".join(parts))
    return lines


def evidence(outputs: Mapping[str, Any]) -> dict[str, Any]:
    """The team's reducer: facts from every branch merged by id (first seen wins), notes kept per task.

    Explicit so that parallel branches can never overwrite each other: memory's and research's
    facts are united, and each specialist's note stays under its own task id.
    """
    facts: dict[int, dict[str, Any]] = {}
    passages: dict[str, dict[str, Any]] = {}
    procedures: dict[tuple[int, str], dict[str, Any]] = {}
    reports: dict[int, dict[str, Any]] = {}
    notes: dict[str, str] = {}
    for task_id, output in outputs.items():
        if isinstance(output, Mapping) and "facts" in output:
            for fact in output.get("facts") or []:
                facts.setdefault(int(fact["id"]), dict(fact))
            for passage in output.get("passages") or []:
                passages.setdefault(str(passage["text"]), dict(passage))
            for procedure in output.get("procedures") or []:
                key = (int(procedure.get("episode_id") or 0), str(procedure["steps"][:1]))
                procedures.setdefault(key, dict(procedure))
            for report in output.get("reports") or []:
                reports.setdefault(int(report.get("episode_id") or 0), dict(report))
        elif output is not None and str(output).strip():
            notes[task_id] = str(output).strip()
    return {"facts": list(facts.values()), "passages": list(passages.values()), "notes": notes,
            "procedures": list(procedures.values()), "reports": list(reports.values())}


def render_passages(passages: Sequence[Mapping[str, Any]]) -> str:
    """Source passages for a prompt, each with its source and date."""
    lines = []
    for passage in passages[:MAX_PASSAGES]:
        where = ", ".join(str(p) for p in (passage.get("source"), passage.get("published")) if p)
        lines.append(f"({where}) {passage['text']}" if where else str(passage["text"]))
    return "\n".join(lines)


def _emit_tool(emitter: BoundEmitter, name: str, arguments: str, result: str, seconds: float) -> None:
    emitter.emit(EventType.TOOL_CALL, tool=name, arguments=summarize(arguments), result=summarize(result),
                 error=None, ok=True, seconds=round(seconds, 4))


# --------------------------------------------------------------------------- memory (no model call)


@dataclass
class MemoryAgent(SubAgent):
    """Retrieves the facts for a question in Python: the strategy comes from the knowledge base.

    Its tools (store, search, summary, consolidate) are listed for callers that want a
    model-driven memory agent; for answering, a deterministic retrieval is both faster and
    better than letting a small model choose search words.
    """

    kb: KnowledgeBase | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.kb is not None and not self.tools:
            self.tools = memory_tools(self.kb)
        if not self.system_prompt:
            self.system_prompt = load_prompt("memory", __package__)
        super().__post_init__()

    def recall(self, question: str) -> dict[str, Any]:
        """Retrieval plus a relevance check: ``relevant`` is False when nothing is about the question."""
        assert self.kb is not None, "MemoryAgent needs a knowledge base"
        retrieval = self.kb.retrieve(question, limit=20)
        matched = {hit.fact.id for hit in self.kb.search(question, limit=50, include_superseded=True)}
        if retrieval.strategy == "all_facts" or not retrieval.entities:
            # Small knowledge bases come back whole; keep the facts that share words with the question.
            facts = [f for f in retrieval.facts if f.id in matched] if matched else []
        else:
            facts = list(retrieval.facts)
        facts.sort(key=lambda f: 0 if f.id in matched else 1)
        facts += self._history(facts)
        terms = query_terms(question)
        missing_years = self._years_not_covered(question) or (self._names_not_covered(question) if facts else [])
        if missing_years:
            # "How much will it cost in 2027?" retrieves facts about the cost, but none of them is
            # about 2027: a small model would answer from them anyway, so say plainly it is unknown.
            facts, terms = [], missing_years
        # Passages only beside facts: when no fact is about the question, the answer is "not known".
        passages = find_passages(self.kb, question, limit=MAX_PASSAGES) if facts else []
        # A question about a step's position gets the procedures the sources write out, in order.
        procedures = find_procedures(self.kb, question) if facts and read_relation(question) else []
        # A question about one value gets what each source says about it, side by side.
        # (and a value to work out may need the one a source reports at the question's date).
        from moot.teams.learning.compute import derivation_asked

        wanted = facts and (value_kind(question) or derivation_asked(question))
        reports = find_source_sentences(self.kb, question) if wanted else []
        # A fee or a code that a documented rule gives ("how much does a 12-metre boat pay …").
        from moot.memory.rules import rule_asked
        from moot.teams.learning.rules import rules_for

        rules = rules_for(self.kb, question) if facts and rule_asked(question) else []
        return {
            "strategy": str(retrieval.strategy),
            "note": retrieval.note,
            "facts": [fact_record(f) for f in facts[: MAX_FACTS * 2]],
            "passages": [p.to_dict() for p in passages],
            "procedures": [p.to_dict() for p in procedures],
            "reports": [r.to_dict() for r in reports],
            "rules": rules,
            "relevant": bool(facts),
            "terms": terms,
        }

    def _history(self, facts: list[Any], limit: int = 6) -> list[Any]:
        """The superseded values of the retrieved facts' entity and attribute: a question about a
        change needs the old value beside the new one (rendered as "older value")."""
        assert self.kb is not None
        keys = {(str(f.entity).lower(), str(f.attribute).lower()) for f in facts[:MAX_FACTS] if f.entity and f.attribute}
        if not keys:
            return []
        have = {f.id for f in facts}
        older = [f for f in self.kb.facts(include_superseded=True)
                 if f.id not in have and (str(f.entity).lower(), str(f.attribute).lower()) in keys]
        return older[:limit]

    def _names_not_covered(self, question: str) -> list[str]:
        """Names (places, people, things) in the question that nothing learned mentions: a question
        about the Harwick reservoir must not be answered from the Tessaly reservoir's facts."""
        from moot.teams.learning.checker import names_in

        assert self.kb is not None
        names = sorted(re.sub(r"['’]s?$", "", n) for n in names_in(question))
        if not names:
            return []
        known = " ".join(f"{f.content} {f.entity} {f.value} {f.source}" for f in self.kb.facts(include_superseded=True))
        known += " " + " ".join(f"{e.text} {e.source}" for e in self.kb.episodes())
        known = known.lower()
        return [n for n in names if n and not re.search(r"(?<![a-z])" + re.escape(n.lower()), known)]

    def _years_not_covered(self, question: str) -> list[str]:
        """Years the question names that no fact of the knowledge base mentions or is dated in."""
        assert self.kb is not None
        years = sorted(set(_YEAR.findall(question)))
        if not years:
            return []
        known: set[str] = set()
        for fact in self.kb.facts(include_superseded=True):
            known.update(_YEAR.findall(f"{fact.content} {fact.value} {fact.source}"))
            if fact.source_date:
                known.add(str(fact.source_date.year))
        return [year for year in years if year not in known]

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        emitter = BoundEmitter(bus, {"run_id": run_id, "task_id": task_id, "agent": self.name})
        emitter.emit(EventType.AGENT_STARTED, role=self.role, task=summarize(task))
        started = time.perf_counter()
        output = self.recall(task)
        _emit_tool(emitter, "search_memory", task, f"{len(output['facts'])} facts ({output['strategy']})",
                   time.perf_counter() - started)
        emitter.emit(EventType.AGENT_FINISHED, stop_reason="completed", detail=None, turns=0, output=None,
                     input_tokens=0, output_tokens=0, requests=0, cost_usd=0.0)
        return AgentResult(agent=self.name, output=output, text=output["note"], usage=Usage(),
                           transcript=(), stop_reason="completed", turns=0)


# --------------------------------------------------------------------------- model-driven specialists


@dataclass
class FactAgent(SubAgent):
    """A model-driven agent whose task message is built from the merged evidence, not raw JSON."""

    focus: str = ""
    """Extra instruction for this question (e.g. the one reasoning type it needs)."""

    def build_task(self, question: str, facts: list[dict[str, Any]], notes: Mapping[str, str],
                   passages: Sequence[Mapping[str, Any]] = ()) -> str:
        parts = [f"Facts:\n{render_facts(facts)}"]
        if passages:
            parts.append(f"Source passages:\n{render_passages(passages)}")
        for task_id, note in notes.items():
            parts.append(f"Notes from {task_id}:\n{note[:1200]}")
        if self.focus:
            parts.append(f"Focus: {self.focus}")
        parts.append(f"Question: {question}")
        return "\n\n".join(parts)

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        merged = evidence(context) if context and "facts" not in context else dict(context or {})
        message = self.build_task(task, list(merged.get("facts") or []), dict(merged.get("notes") or {}),
                                  list(merged.get("passages") or []))
        return await SubAgent.run(self, message, None, budget=budget, bus=bus, progress=progress,
                                  run_id=run_id, task_id=task_id)


@dataclass
class ReasoningAgent(FactAgent):
    """Temporal, causal, counterfactual, mathematical and contradiction reasoning, one focus at a time."""

    def build_task(self, question: str, facts: list[dict[str, Any]], notes: Mapping[str, str],
                   passages: Sequence[Mapping[str, Any]] = ()) -> str:
        parts = [f"Facts:\n{render_facts(facts)}"]
        if passages:
            parts.append(f"Source passages:\n{render_passages(passages)}")
        worksheet = render_worksheet(temporal_worksheet(facts))
        if worksheet:
            parts.append(f"Worksheet (computed exactly):\n{worksheet}")
        conflicts = conflicting_values(facts)
        if conflicts:
            parts.append("Sources disagree:\n" + "\n".join(conflicts))
        if self.focus:
            parts.append(f"Focus: {self.focus}")
        parts.append(f"Question: {question}")
        return "\n\n".join(parts)


class QueryPlan(BaseModel):
    """The ResearchAgent's plan for one round: a few short keyword queries."""

    queries: list[str] = Field(description="3 to 5 short search queries")


class Sufficiency(BaseModel):
    """The ResearchAgent's check after a round."""

    enough: bool = Field(description="true when the facts found answer the question")
    missing: str = Field(default="", description="what is still missing, in a few words")
    next_queries: list[str] = Field(default_factory=list, description="up to 3 new short queries")


@dataclass
class ResearchAgent(SubAgent):
    """Plan → 3–5 queries → search (Python) → sufficiency check → refine, for at most ``max_rounds``.

    The model only writes queries and judges sufficiency (both structured output); the searches
    run in Python. The last round is not checked, because nothing could follow the check.
    """

    kb: KnowledgeBase | None = field(default=None, repr=False)
    max_rounds: int = 2

    def __post_init__(self) -> None:
        if not self.system_prompt:
            self.system_prompt = load_prompt("research", __package__)
        super().__post_init__()

    def _step(self, prompt: str, output_type: Any) -> SubAgent:
        return SubAgent(self.name, self.role, prompt, (), self._model or self.model, output_type=output_type,
                        max_turns=2, settings=self.settings)

    def _search(self, queries: list[str], found: dict[int, dict[str, Any]]) -> int:
        assert self.kb is not None
        before = len(found)
        for query in queries:
            for hit in self.kb.search(query, limit=5):
                found.setdefault(hit.fact.id, fact_record(hit.fact))
        return len(found) - before

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        emitter = BoundEmitter(bus, {"run_id": run_id, "task_id": task_id, "agent": self.name})
        tracker = budget if isinstance(budget, BudgetTracker) else BudgetTracker(budget)
        state = progress if progress is not None else AgentProgress()
        merged = dict(context) if context and "facts" in context else evidence(context or {})
        known = list(merged.get("facts") or [])
        found: dict[int, dict[str, Any]] = {}
        usage, turns, rounds, enough, missing = Usage(), 0, 0, False, ""
        all_queries: list[str] = []
        seen_block = f"\n\nFacts already found:\n{render_facts(known)}" if known else ""
        step = await self._step(self.system_prompt, QueryPlan).run(
            f"Question: {task}{seen_block}", budget=tracker, bus=bus, run_id=run_id, task_id=task_id)
        usage, turns = usage + step.usage, turns + step.turns
        queries = _clean_queries(step.output.queries if step.ok else [], fallback=task)
        detail = None if step.ok else step.detail
        while queries and rounds < self.max_rounds:
            rounds += 1
            all_queries += queries
            started = time.perf_counter()
            added = self._search(queries, found)
            _emit_tool(emitter, "search_memory", "; ".join(queries), f"round {rounds}: {added} new facts",
                       time.perf_counter() - started)
            if rounds >= self.max_rounds:
                break
            facts = list(found.values()) or known
            check = await self._step(load_prompt("research_check", __package__), Sufficiency).run(
                f"Question: {task}\n\nFacts found:\n{render_facts(facts)}",
                budget=tracker, bus=bus, run_id=run_id, task_id=task_id)
            usage, turns = usage + check.usage, turns + check.turns
            if not check.ok:
                detail = check.detail
                break
            enough, missing = check.output.enough, check.output.missing
            if enough:
                break
            queries = [q for q in _clean_queries(check.output.next_queries, fallback="")[:3] if q not in all_queries]
        state.usage, state.turns = usage, turns
        output = {"facts": list(found.values()), "queries": all_queries, "rounds": rounds,
                  "enough": enough, "missing": missing}
        stop = "completed" if step.ok else step.stop_reason
        return AgentResult(agent=self.name, output=output if step.ok else None,
                           text=f"{rounds} rounds, {len(found)} facts", usage=usage, transcript=(),
                           stop_reason=stop, turns=turns, detail=detail)


def _clean_queries(queries: list[str], *, fallback: str) -> list[str]:
    cleaned: list[str] = []
    for query in queries:
        text = " ".join(str(query).split())[:100]
        if text and text.lower() not in (c.lower() for c in cleaned):
            cleaned.append(text)
    return cleaned[:5] or ([fallback] if fallback else [])


# --------------------------------------------------------------------------- builders


def _settings(max_tokens: int) -> ModelSettings:
    return ModelSettings(max_tokens=max_tokens)


def build_memory(kb: KnowledgeBase) -> MemoryAgent:
    return MemoryAgent("memory", "retrieves facts from the knowledge base", kb=kb)


def build_reasoning(model: Any, intent: str) -> ReasoningAgent:
    tools = (calculate,) if intent in ARITHMETIC_INTENTS else ()
    return ReasoningAgent("reasoning", "analyses the retrieved facts", load_prompt("reasoning", __package__), tools,
                          model, max_turns=3, settings=_settings(200), focus=REASONING_FOCUS.get(intent, ""))


def build_research(model: Any, kb: KnowledgeBase, *, max_rounds: int = 2) -> ResearchAgent:
    return ResearchAgent("research", "plans and runs searches until the evidence is enough", "", (), model,
                         settings=_settings(160), kb=kb, max_rounds=max_rounds)


def build_teaching(model: Any) -> FactAgent:
    return FactAgent("teaching", "teaches the topic from the facts", load_prompt("teaching", __package__), (), model,
                     max_turns=2, settings=_settings(350))


def build_single(model: Any, *, tools: bool = True) -> FactAgent:
    """The seed's baseline: one agent, every instruction in one prompt."""
    return FactAgent("single", "answers alone with every instruction", load_prompt("single", __package__),
                     (calculate,) if tools else (), model, max_turns=3, settings=_settings(300))


__all__ = [
    "FactAgent",
    "MemoryAgent",
    "QueryPlan",
    "ReasoningAgent",
    "ResearchAgent",
    "Sufficiency",
    "build_memory",
    "build_reasoning",
    "build_research",
    "build_single",
    "build_teaching",
    "conflicting_values",
    "evidence",
    "render_facts",
    "render_passages",
]
