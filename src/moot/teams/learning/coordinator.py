"""The CoordinatorAgent: classify a question, choose single or multi, plan, run, synthesize.

Classification combines a keyword pre-classifier (free, and more reliable than a 0.5B model
on the cues it knows) with the model's structured classification, which is asked only when
no cue matched; the trace says which one decided. The plan is a :class:`~moot.runtime.TaskGraph`
— memory first, then the specialists the intent needs (reasoning and research in parallel
where both help), then synthesis — with an explicit reducer on every fan-in and
``on_failure="fallback"`` to the single agent: the team degrades to one agent rather than failing.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from moot.memory import KnowledgeBase
from moot.models.base import Model, ModelSettings, Usage
from moot.runtime import Budget, BudgetTracker, EventBus, RunStore, SubAgent, SubAgentTask, TaskGraph, load_prompt
from moot.teams.learning.answer import build_answer
from moot.teams.learning.specialists import (
    ARITHMETIC_INTENTS,
    MAX_FACTS,
    build_memory,
    build_reasoning,
    build_research,
    build_single,
    build_teaching,
    conflicting_values,
    evidence,
)

Intent = Literal["recall", "multi_source", "temporal", "procedural", "contradiction", "causal",
                 "counterfactual", "mathematical", "teaching", "meta", "unknown"]
Mode = Literal["single", "multi", "auto"]
MODES = ("auto", "single", "multi")

REASONING_INTENTS = frozenset({"temporal", "mathematical", "procedural", "contradiction",
                               "causal", "counterfactual", "multi_source"})
LARGE_KB_FACTS = 500
"""The seed's line: from here on retrieval strategy and multi-step search pay for themselves."""

# First match wins, so the more specific kinds come first ("why did it change" is causal).
KEYWORD_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("teaching", ("teach", "explain to", "help me understand", "lesson", "tutor")),
    ("counterfactual", ("what if", "what would", "would have", "had not", "hadn't", "if .* had", "suppose",
                        "imagine", "without the")),
    ("causal", ("why", "cause", "caused", "because", "led to", "lead to", "root cause", "reason for", "result of")),
    ("contradiction", ("contradict", "conflict", "disagree", "discrepan", "inconsistent", "different numbers",
                       "which source", "sources say")),
    ("procedural", ("how do i", "how do you", "how to", "steps", "procedure", "in what order", "process for")),
    ("multi_source", ("compare", "comparison", "across", "according to each", "all sources", "both sources",
                      "each source", "versus", " vs ")),
    ("mathematical", ("how many more", "how much more", "difference between", "total", "sum of", "average",
                      "percent", "percentage", "ratio", "calculate", "times as", "combined", "still need",
                      "remaining", "left to", "how much .* left", "how many .* left")),
    ("temporal", ("when", "before", "after", "change", "changed", "trend", "over time", "since", "latest",
                  "first", "history", "timeline", "between day", "increase", "decrease", "grew", "growth")),
    ("meta", ("what do you know", "what topics", "what does the knowledge base", "what have you learned")),
    # Last: a plain question about one value is recall, unless a more specific cue matched above.
    ("recall", ("what is", "what was", "what are", "who is", "who was", "where is", "where was", "which",
                "how many", "how much", "name the")),
)


class Classification(BaseModel):
    """What kind of question it is, and who decided."""

    intent: Intent
    entities: list[str] = Field(default_factory=list)
    time_words: list[str] = Field(default_factory=list)
    cues: list[str] = Field(default_factory=list)
    """The keywords that matched, per intent, e.g. ``temporal: 'change'``."""
    decided_by: Literal["keywords", "model", "default"] = "keywords"


class ModelClassification(BaseModel):
    """The schema the model fills (constrained decoding makes it valid every time)."""

    intent: Intent
    entities: list[str] = Field(default_factory=list, description="names, places or things the question is about")


_TIME_WORDS = re.compile(r"\b(day \d+|\d{4}|yesterday|today|now|latest|first|last|before|after|since|"
                         r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)\b", re.I)


def _cue_matches(question: str, cue: str) -> bool:
    if ".*" in cue:
        return re.search(r"\b" + cue + r"\b", question) is not None
    return re.search(r"(?<![a-z])" + re.escape(cue.strip()), question) is not None


def keyword_classify(question: str) -> Classification | None:
    """The cheap pre-classifier: the first intent whose cue appears, with every cue that matched."""
    text = " " + question.lower() + " "
    hits: list[tuple[str, str]] = []
    for intent, cues in KEYWORD_RULES:
        for cue in cues:
            if _cue_matches(text, cue):
                hits.append((intent, cue.strip()))
                break
    if not hits:
        return None
    return Classification(intent=hits[0][0], time_words=_TIME_WORDS.findall(question),  # type: ignore[arg-type]
                          cues=[f"{i}: {c!r}" for i, c in hits], decided_by="keywords")


async def classify(question: str, *, model: Model | None, use_model: bool, budget: BudgetTracker,
                   bus: EventBus | None) -> tuple[Classification, Usage]:
    """Keywords first; the model's structured classification when no cue matched."""
    found = keyword_classify(question)
    if found is not None or not use_model or model is None:
        return found or Classification(intent="recall", decided_by="default"), Usage()
    agent = SubAgent("coordinator", "classifies the question", load_prompt("coordinator", __package__), (), model,
                     output_type=ModelClassification, max_turns=2, settings=ModelSettings(max_tokens=80))
    result = await agent.run(f"Question: {question}", budget=budget, bus=bus)
    if not result.ok:
        return Classification(intent="unknown", decided_by="default", cues=[f"model failed: {result.detail}"]), result.usage
    out: ModelClassification = result.output
    return Classification(intent=out.intent, entities=out.entities[:6], time_words=_TIME_WORDS.findall(question),
                          decided_by="model"), result.usage


def choose_mode(requested: str, intent: str, fact_count: int) -> tuple[Literal["single", "multi"], str]:
    """The design's "when multi-agent is worth it", as rules; returns the mode and the rule that fired."""
    if requested in ("single", "multi"):
        return requested, f"requested: mode={requested}"  # type: ignore[return-value]
    if intent == "teaching":
        return "multi", "teaching → a dedicated TeachingAgent (no learner/teacher role confusion)"
    if intent in REASONING_INTENTS:
        return "multi", f"{intent} reasoning → a dedicated specialist prompt avoids instruction interference"
    if fact_count >= LARGE_KB_FACTS:
        return "multi", f"large knowledge base ({fact_count} ≥ {LARGE_KB_FACTS} facts) → research plans the searches"
    return "single", f"simple {intent} on a small knowledge base ({fact_count} facts) → one agent is enough"


def plan(question: str, *, relevant: bool) -> list[SubAgentTask]:
    """Single mode (the seed's baseline): memory, then one agent with every instruction."""
    memory = SubAgentTask("memory", question, on_failure="fallback", fallback_agent="single")
    if not relevant:
        return [memory]  # nothing to reason about: the answer says so without a model call
    return [memory, SubAgentTask("single", question, depends_on=["memory"], reducer=evidence)]


STEP_WORDS = re.compile(r"\b(step|steps|first|then|next|after that|finally|last)\b|^\s*\d+[.)]\s", re.I | re.M)
ORDER_WORDS = re.compile(r"\b(first|before|after|earlier|later|order|when|which happened|how long|since|until)\b", re.I)


def specialists_for(question: str, intent: str, recalled: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The drafting specialists whose preconditions hold, and why (one line each).

    Preconditions are about the evidence, not only the classification, so a misread question
    still gets the specialist its facts call for: compute when the facts (or the question) hold
    numbers or dates and the question asks for a worked-out value; temporal ordering when they
    hold several dates; procedure when they hold steps; contradiction when sources disagree.
    """
    from moot.teams.learning.compute import collect_quantities, derivation_asked
    from moot.teams.learning.threshold import read_threshold
    from moot.teams.learning.tools import temporal_worksheet

    facts, passages = list(recalled.get("facts") or [])[:MAX_FACTS], list(recalled.get("passages") or [])
    quantities = collect_quantities(question, facts, passages)
    dates = [q for q in quantities if q.date is not None]
    chosen: list[str] = []
    why: list[str] = []
    # "between day 7 and day 10" names days, it gives no amounts: labels are not the question's data.
    in_question = [q for q in quantities if q.origin == "question" and q.value is not None
                   and not re.search(rf"\b(?:day|step|berth|page|no\.?|number|pier|gate|round|level|stage)\s+{re.escape(q.text)}\b",
                                     question, re.I)]
    if quantities and (derivation_asked(question) or intent == "mathematical"):
        chosen.append("compute")
        why.append(f"compute: {len(quantities)} quantities and the question asks for a worked-out value")
    elif len(in_question) >= 2:
        chosen.append("compute")
        why.append(f"compute: the question itself gives {len(in_question)} numbers")
    elif quantities and read_threshold(question) is not None:
        chosen.append("compute")
        why.append("compute: a what-if that capacity against demand decides")
    if recalled.get("procedures"):
        from moot.teams.learning.procedure import read_relation

        relation = read_relation(question)
        if relation is not None:
            chosen.append("procedure")
            why.append(f"procedure: {len(recalled['procedures'])} written-out procedure(s) and a question about "
                       f"{'the steps' if relation.kind == 'all' else 'a step’s position'} ({relation.kind})")
    if recalled.get("rules"):
        found = recalled["rules"][0]
        chosen.append("rules")
        why.append(f"rules: a documented {found['kind']} rule (“{found['title']}”"
                   f"{', checked against its own example' if found.get('verified') else ''}) applies to the question's case")
    from moot.teams.learning.bridge import read_hop
    from moot.teams.learning.cause import read_cause

    if (cause := read_cause(question)) is not None:
        chosen.append("cause")
        why.append("cause: the question asks for a cause" + (" and puts one forward to check" if cause.claimed else ""))

    if (hop := read_hop(question)) is not None:
        chosen.append("bridge")
        why.append(f"bridge: the question names its subject by a clause (the {hop.kind} that …): two hops")
    if len(recalled.get("reports") or []) >= 2:
        from moot.teams.learning.sources import value_kind

        kind = value_kind(question)
        if kind is not None:
            chosen.append("sources")
            why.append(f"sources: {len(recalled['reports'])} sources write about the {kind} asked; Python compares "
                       "what each says")
    evidence_text = " ".join(str(f.get("content") or "") for f in facts) + " " + " ".join(
        str(p.get("text") or "") for p in passages)
    if conflicting_values(facts):
        chosen.append("reasoning:contradiction")
        why.append("contradiction: different sources give different values")
    elif (series := temporal_worksheet(facts)) and (intent == "temporal" or ORDER_WORDS.search(question)):
        chosen.append("reasoning:temporal")
        why.append(f"temporal ordering: {len(series)} value(s) reported at several dates")
    elif len({q.date for q in dates}) >= 2 and (intent == "temporal" or ORDER_WORDS.search(question)):
        chosen.append("reasoning:temporal")
        why.append(f"temporal ordering: {len({q.date for q in dates})} dates in the evidence")
    elif intent == "procedural" and "procedure" not in chosen and len(STEP_WORDS.findall(evidence_text)) >= 2:
        chosen.append("reasoning:procedural")
        why.append("procedure: the evidence holds steps")
    return chosen, why


def plan_multi(question: str, intent: str, recalled: dict[str, Any], *,
               fact_count: int = 0) -> tuple[list[SubAgentTask], list[str]]:
    """Multi mode: the single agent's draft beside every specialist whose preconditions hold, in
    parallel, then the selector (the checker first, the model second). On a knowledge base of
    ``LARGE_KB_FACTS`` or more, the ResearchAgent's searches come first and every draft sees them."""
    from moot.teams.learning.selector import drafts

    memory = SubAgentTask("memory", question, on_failure="fallback", fallback_agent="single")
    if not recalled["relevant"]:
        return [memory], []
    if intent == "teaching":
        return [memory, SubAgentTask("teaching", question, depends_on=["memory"], reducer=evidence,
                                     on_failure="fallback", fallback_agent="single")], ["teaching: a teaching request"]
    chosen, why = specialists_for(question, intent, recalled)
    tasks = [memory]
    sources = ["memory"]
    if fact_count >= LARGE_KB_FACTS:
        tasks.append(SubAgentTask("research", question, depends_on=["memory"], reducer=evidence))
        sources.append("research")
        why.insert(0, f"research: a large knowledge base ({fact_count} ≥ {LARGE_KB_FACTS} facts)")
    tasks.append(SubAgentTask("single", question, depends_on=list(sources), reducer=evidence))
    for name in chosen:
        agent = name.split(":")[0]
        tasks.append(SubAgentTask(agent, question, depends_on=list(sources), reducer=evidence))
    tasks.append(SubAgentTask("select", question, depends_on=[t.id or t.agent for t in tasks], reducer=drafts))
    return tasks, why


PhaseCallback = Callable[[str], None]


async def answer_question(kb: KnowledgeBase, question: str, *, model: Model, mode: str = "auto",
                          budget: Budget | BudgetTracker, store: RunStore | None, bus: EventBus | None = None,
                          on_phase: PhaseCallback | None = None, models: Mapping[str, Model] | None = None,
                          parent_run_id: str | None = None) -> Any:
    """Answer one question with the team; returns a :class:`~moot.teams.learning.answer.Answer`.

    ``models`` maps a role (``single``, ``compute``, ``procedure``, ``rules``, ``sources``, ``bridge``, ``cause``, ``reasoning``, ``selector``, ``teaching``,
    ``research``, ``synthesize``, ``coordinator``) to the model that plays it; other roles use
    ``model``."""
    if mode not in MODES:
        from moot.errors import MootError

        raise MootError(f"unknown mode {mode!r}", fix="use mode='auto', 'single' or 'multi'")
    phase = on_phase or (lambda _name: None)
    role_models = dict(models or {})

    def model_for(role: str) -> Model:
        return role_models.get(role, model)

    started = time.perf_counter()
    bus = bus or EventBus()
    phase("retrieve")
    memory = build_memory(kb)
    recalled = memory.recall(question)  # first: when nothing is relevant, no model call is needed at all
    phase("classify")
    # One tracker for the whole question: classification and the graph spend from the same limits.
    tracker = budget if isinstance(budget, BudgetTracker) else BudgetTracker(budget)
    limits = tracker.budget
    classification, class_usage = await classify(
        question, model=model_for("coordinator"), budget=tracker, bus=bus,
        # with one call in the budget, it goes to the answer, not to classifying the question
        use_model=mode == "auto" and recalled["relevant"] and (limits.max_calls is None or limits.max_calls > 1),
    )
    fact_count = kb.count(include_superseded=False)
    used_mode, rule = choose_mode(mode, classification.intent, fact_count)
    # The baseline gets the calculator on the same rule as the reasoning specialist: offered it on
    # every question, the small model "calculates" recall questions and answers with the result.
    single = build_single(model_for("single"), tools=classification.intent in ARITHMETIC_INTENTS)
    agents: dict[str, Any] = {"memory": memory, "single": single}
    if used_mode == "multi":
        from moot.teams.learning.compute import build_compute
        from moot.teams.learning.selector import DraftAgent, SelectorAgent

        tasks, why = plan_multi(question, classification.intent, recalled, fact_count=fact_count)
        rule += "; specialists: " + ("; ".join(why) or "none whose preconditions hold")
        drafting = {t.agent for t in tasks}
        if "teaching" in drafting:
            agents["teaching"] = build_teaching(model_for("teaching"))
        else:
            agents["single"] = DraftAgent("single", single.role, "", (), single.model, inner=single)
            if "research" in drafting:
                agents["research"] = build_research(model_for("research"), kb)
            if "compute" in drafting:
                agents["compute"] = build_compute(model_for("compute"))
            if "cause" in drafting:
                from moot.teams.learning.cause import build_cause

                agents["cause"] = build_cause(model_for("cause"), kb)
            if "bridge" in drafting:
                from moot.teams.learning.bridge import build_bridge

                agents["bridge"] = build_bridge(model_for("bridge"), kb)
            if "rules" in drafting:
                from moot.teams.learning.rules import build_rules

                agents["rules"] = build_rules(model_for("rules"), kb)
            if "sources" in drafting:
                from moot.teams.learning.sources import build_sources

                agents["sources"] = build_sources(model_for("sources"))
            if "procedure" in drafting:
                from moot.teams.learning.procedure import build_procedure

                agents["procedure"] = build_procedure(model_for("procedure"))
            focus = next((n.split(":")[1] for n in specialists_for(question, classification.intent, recalled)[0]
                          if n.startswith("reasoning:")), None)
            if "reasoning" in drafting and focus:
                inner = build_reasoning(model_for("reasoning"), focus)
                agents["reasoning"] = DraftAgent("reasoning", inner.role, "", (), inner.model, inner=inner)
            agents["select"] = SelectorAgent(
                "select", "checks every draft and chooses the answer", load_prompt("selector", __package__), (),
                model_for("selector"), reviser=build_single(model_for("single"), tools=False),
                conflicts=conflicting_values(recalled["facts"]))
    else:
        tasks = plan(question, relevant=recalled["relevant"])
    phase("specialists")
    graph = TaskGraph(list(agents.values()), tasks)
    run = await graph.run(budget=tracker, store=store, bus=bus, name=f"ask: {question[:70]}", parent_run_id=parent_run_id)
    counted = sum((r.usage for r in run.results.values()), Usage())
    if run.usage.requests > counted.requests:  # the run's usage came from the shared tracker: classification is in it
        class_usage = Usage()
    return build_answer(question=question, classification=classification, mode=used_mode, rule=rule,
                        recalled=recalled, run=run, extra_usage=class_usage,
                        seconds=time.perf_counter() - started, conflicts=conflicting_values(recalled["facts"]),
                        max_facts=MAX_FACTS)


__all__ = [
    "KEYWORD_RULES",
    "MODES",
    "Classification",
    "ModelClassification",
    "answer_question",
    "choose_mode",
    "classify",
    "keyword_classify",
    "plan",
]
