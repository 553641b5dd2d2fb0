"""``GraphTeam``: five agents grow a noisy graph scaffold over your sources in a recursive loop.

```python
from moot.teams.graph import GraphTeam
team = GraphTeam(sources=["notes/mill.md", "notes/river.md"], model="local")
result = team.ask_sync("How does the Ostby mill affect Lake Mira?")
print(result.answer, result.noise.current, result.stop_reason)
result.scaffold.nodes, result.scaffold.edges            # typed nodes and edges
```

Each iteration: THINK (graph questions from the scaffold, in Python) → ACT (evidence from the
sources by FTS5) → OBSERVE/BUILD (mappers in parallel, one per question; checked quotes; entity
resolution; placeholders for gaps and evidence labels in parallel) → SELF-CORRECT (the skeptic
challenges confident claims; the noise budget is checked) → RECURSE, until an iteration adds
nothing and the noise budget holds (converged), the iteration limit, or the budget. Every step
is a task of one recorded run (``moot runs show``); the design's ``nlr.*`` events go on the bus.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from moot.errors import MootError
from moot.models.base import Model
from moot.models.registry import RoleModels, model_for, resolve_models
from moot.runtime import Budget, EventBus, Run, RunStore
from moot.teams.graph import agents as ag
from moot.teams.graph.answer import compose_answer, hypotheses_task, to_hypotheses
from moot.teams.graph.build import (
    apply_challenges,
    apply_labels,
    MappingReport,
    add_question_entities,
    apply_entities,
    apply_links,
    apply_merges,
    apply_placeholders,
    merge_task,
    placeholder_task,
    quantifier_task,
    render_passages,
    skeptic_targets,
    skeptic_task,
    link_choices,
    unlabelled,
)
from moot.teams.graph.evidence import Chunk, SourceIndex
from moot.teams.graph.lifecycle import Lifecycle
from moot.teams.graph.quantify import requantify
from moot.teams.graph.result import GraphResult, IterationRecord
from moot.teams.graph.scaffold import DEFAULT_NOISE_BUDGET, Gap, GraphQuestion, Scaffold, ScaffoldMeta, label_tokens

EV_SPAWNED = "nlr.subagent.spawned"
EV_QUESTIONS = "nlr.subagent.question_generated"
EV_GAP = "nlr.graph.gap_discovered"
EV_NODE = "nlr.graph.node_added"
EV_DEFICIT = "nlr.noise_budget.deficit"
EV_ITERATION = "nlr.reasoning.iteration_complete"
EV_CONVERGED = "nlr.reasoning.converged"

BUDGETS: dict[str, dict[str, Any]] = {
    "quick": {"iterations": 2, "max_calls": 12},
    "standard": {"iterations": 3, "max_calls": 24},
    "deep": {"iterations": 5, "max_calls": 48},
}
"""``--budget`` presets: iterations and model calls (a 0.5B model on two cores makes about 4 calls a minute)."""


@dataclass
class GraphConfig:
    """Limits and knobs of one run."""

    iterations: int = 3
    """The iteration limit."""
    noise_budget: float = DEFAULT_NOISE_BUDGET
    """The share of low-confidence elements the graph must keep (0.25: a quarter)."""
    max_calls: int | None = 24
    max_tokens: int | None = None
    deadline_s: float | None = None
    questions_per_iteration: int = 2
    """Mapper questions (each a parallel mapper call) per iteration."""
    passages_per_question: int = 2
    hypotheses: bool = True
    """Ask the hypothesizer for alternative structures after the loop."""

    @classmethod
    def preset(cls, name: str, **changes: Any) -> GraphConfig:
        if name not in BUDGETS:
            raise MootError(f"unknown budget {name!r}", fix="use --budget " + ", ".join(BUDGETS))
        values = {**BUDGETS[name], **{k: v for k, v in changes.items() if v is not None}}
        return cls(**values)


class GraphTeam:
    """Mapper, skeptic, placeholder generator, quantifier and hypothesizer over your sources."""

    def __init__(self, sources: Sequence[str | Path] = (), *, kb: str | Path | None = None, model: Any = None,
                 models: RoleModels | None = None, store: RunStore | None = None, config: GraphConfig | None = None,
                 index: SourceIndex | None = None, tools: Sequence[Any] = (),
                 source_root: str | Path | None = None) -> None:
        """``model`` serves every agent; ``models`` gives single roles their own model
        (``{"skeptic": "openai:gpt-4o"}``; roles: :data:`~moot.teams.graph.agents.AGENT_NAMES`).
        ``tools`` (an MCP tool server such as a reasoning scratchpad, or tools) go to the mapper,
        the skeptic and the hypothesizer, as the design has them; without any the team is as before.
        ``source_root``: a folder every source must stay in (the server's ``--repo-root``)."""
        self.sources = [Path(s) for s in sources]
        self.tools = list(tools)
        self.source_root = source_root
        self.kb = kb
        self.config = config or GraphConfig()
        self.store = store
        self._index = index
        self.model, self.models = resolve_models(model, models, roles=ag.AGENT_NAMES, team="graph")

    def model_for(self, role: str) -> Model:
        """The model of one role: its own from ``models``, else the team's ``model``."""
        return model_for(role, self.model, self.models)

    # ------------------------------------------------------------------ sources

    def index(self, progress: Any = None) -> SourceIndex:
        """The chunked, searchable sources (built on first use)."""
        if self._index is None:
            if not self.sources and self.kb is None:
                raise MootError("no sources given", fix="pass --source FILE (text or Markdown) or --kb NAME")
            index = SourceIndex()
            try:
                for path in self.sources:
                    index.add_file(path, progress, root=self.source_root)
                if self.kb is not None:
                    index.add_knowledge_base(self.kb)
            except BaseException:
                index.close()
                raise
            if index.count() == 0:
                index.close()
                raise MootError("the sources hold no text", fix="pass text or Markdown files that are not empty")
            self._index = index
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    # ------------------------------------------------------------------ asking

    def ask_sync(self, question: str, **kwargs: Any) -> GraphResult:
        return asyncio.run(self.ask(question, **kwargs))

    async def ask(self, question: str, *, bus: EventBus | None = None, run_id: str | None = None,
                  parent_run_id: str | None = None) -> GraphResult:
        question = " ".join(question.split())
        if not question:
            raise MootError("the question is empty", fix="pass a question about your sources")
        cfg = self.config
        if not 0.0 <= cfg.noise_budget <= 1.0:
            raise MootError(f"noise budget {cfg.noise_budget} is not a share", fix="use --noise-budget between 0 and 1, e.g. 0.25")
        if cfg.iterations < 1:
            raise MootError("the iteration limit must be at least 1", fix="use --iterations 1 or more")
        index = self._index if self._index is not None else await asyncio.to_thread(self.index)
        loop = _Loop(self, question, index, bus, run_id, parent_run_id)
        result = await loop.run()
        if self.store is not None:  # the run's page draws the scaffold from this
            self.store.record_output(result.run_id, "graph", result.to_json())
        return result


class _Loop:
    """One run of the recursive loop (state that lives only for the run)."""

    def __init__(self, team: GraphTeam, question: str, index: SourceIndex, bus: EventBus | None, run_id: str | None,
                 parent_run_id: str | None = None) -> None:
        cfg = team.config
        self.team, self.cfg, self.question, self.index, self.model = team, cfg, question, index, team.model
        self.rec = Run(f"graph: {question[:60]}", Budget(max_calls=cfg.max_calls, max_tokens=cfg.max_tokens,
                                                                 deadline_s=cfg.deadline_s), bus, team.store, run_id,
                               parent_run_id=parent_run_id)
        self.bus = self.rec.bus
        self.scaffold = Scaffold(question=question, meta=ScaffoldMeta(iteration_limit=cfg.iterations, noise_budget=cfg.noise_budget))
        self.life = Lifecycle(ag.AGENT_NAMES)
        self.seen_chunks: set[int] = set()
        self.chunks_found = 0
        self.labelled: set[str] = set()
        self.challenged: set[str] = set()
        self.pending_gaps: list[str] = []
        self.asked: set[str] = set()

    def emit(self, event_type: str, /, agent: str | None = None, **payload: Any) -> None:
        self.bus.emit(event_type, run_id=self.rec.run_id, agent=agent, **payload)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ the run

    async def run(self) -> GraphResult:
        started = time.perf_counter()
        self.rec.start()  # the steps are decided iteration by iteration; each appears as it starts
        # the placeholder generator listens for gaps, as in the design
        unsubscribe = self.bus.subscribe(self._on_event)
        for name in ag.AGENT_NAMES:
            self.emit(EV_SPAWNED, agent=name, agent_id=name, agent_type=name)
        records: list[IterationRecord] = []
        status, reason, converged = "completed", "", False
        try:
            while True:
                it = self.scaffold.meta.iteration + 1
                if it > self.cfg.iterations:
                    reason = f"the iteration limit ({self.cfg.iterations}) was reached before the graph converged"
                    break
                if self.rec.stopped:
                    status, reason = "stopped", f"stopped: {self.rec.tracker.run_stop}"
                    break
                record, grew = await self._iteration(it)
                records.append(record)
                self.scaffold.meta.iteration = it
                if self.rec.stopped:
                    status, reason = "stopped", f"stopped in iteration {it}: {self.rec.tracker.run_stop}; the graph so far is kept"
                    break
                if not grew and record.noise_satisfied:
                    converged = True
                    reason = (f"converged after {it} iteration{'s' if it > 1 else ''}: the last added nothing new "
                              f"and the noise budget holds ({record.noise:.2f} ≥ {self.cfg.noise_budget:.2f})")
                    break
                if not grew and record.questions == 0:
                    reason = (f"stopped after {it} iterations: nothing left to ask, but the noise budget is short "
                              f"({record.noise:.2f} < {self.cfg.noise_budget:.2f})")
                    break
            if self.cfg.hypotheses and not self.rec.stopped and len(self.scaffold.entities()) >= 2:
                await self._hypothesize()
                if self.rec.stopped and status == "completed":
                    status, reason = "stopped", f"{reason}; the hypothesizer was stopped by the budget: {self.rec.tracker.run_stop}"
        except asyncio.CancelledError:
            self.life.terminate_all()
            await self.rec.finish("cancelled", "the graph run was cancelled; the scaffold so far is kept")
            raise
        except BaseException:
            self.life.terminate_all()
            await self.rec.finish("failed", "the graph run crashed inside moot; partial results kept")
            raise
        finally:
            unsubscribe()
        self.scaffold.meta.converged, self.scaffold.meta.stop_reason = converged, reason
        self.life.terminate_all()
        for name, usage in self.rec.usage_by_agent().items():
            if name in self.life.agents:
                self.life.agents[name].calls = usage.requests
        self.emit(EV_CONVERGED, total_iterations=len(records), converged=converged, stop_reason=reason)
        recorded = await self.rec.finish(status, reason)  # type: ignore[arg-type]
        return GraphResult(
            question=self.question, answer=compose_answer(self.scaffold, self.question, chunks_found=self.chunks_found),
            scaffold=self.scaffold, noise=self.scaffold.noise(), iterations=records, agents=self.life.to_json(),
            converged=converged, usage=recorded.usage, seconds=round(time.perf_counter() - started, 3),
            run_id=self.rec.run_id, status=status, stop_reason=reason, sources=list(self.index.sources),
            chunks=self.index.count())

    def _on_event(self, event: Any) -> None:
        if event.type.value == EV_GAP:
            self.pending_gaps.append(event.payload["gap_id"])

    # ------------------------------------------------------------------ one iteration

    async def _iteration(self, it: int) -> tuple[IterationRecord, bool]:
        t0 = time.perf_counter()
        before_usage = self.rec.usage
        before_steps = dict(self.rec.step_seconds)
        size_before = self.scaffold.size()
        failed_before = len(self.rec.failures)
        rec = IterationRecord(iteration=it, nodes=0, edges=0, gaps=0, noise=0.0, noise_satisfied=False)

        # THINK: questions from the scaffold (Python templates; the mapper and skeptic ask them)
        questions = self._mapper_questions(it)
        self.emit(EV_QUESTIONS, agent="mapper", agent_id="mapper", count=len(questions), iteration=it)
        self.life.agents["mapper"].questions_generated += len(questions)
        self.scaffold.graph_questions += questions
        rec.questions = len(questions)

        # ACT: evidence for each question from the sources
        jobs: list[tuple[GraphQuestion, list[Chunk]]] = []
        for q in questions:
            chunks = self._evidence(q, first=q.text == self.question)
            if chunks:
                jobs.append((q, chunks))
                rec.passages += len(chunks)
            else:
                self.scaffold.graph_answers.append(_empty_answer(q))

        # OBSERVE + BUILD: the mapper per question, in parallel, in two rounds (entities, then the
        # links between them); each round's answers are applied in question order, so the graph does
        # not depend on which call finished first
        if jobs:
            self.life.working("mapper")
            outcomes = await asyncio.gather(*(
                self.rec.step(f"mapper-{it}-{k}", ag.mapper_agent(self.team.model_for("mapper"), self.team.tools),
                              f"Question: {q.text}\n\nPassages:\n{render_passages(chunks)}")
                for k, (q, chunks) in enumerate(jobs, 1)))
            reports: list[tuple[int, GraphQuestion, list[Chunk], MappingReport, dict[str, str]]] = []
            candidates: list[tuple[str, str]] = []
            for k, ((q, chunks), outcome) in enumerate(zip(jobs, outcomes), 1):
                if outcome is None or not isinstance(outcome.output, ag.MapperOutput):
                    self.asked.discard(q.text)  # unanswered (a bad reply, the budget): may be asked again
                    continue
                report = apply_entities(self.scaffold, outcome.output, chunks, self.index, question_id=q.id, iteration=it)
                if q.text == self.question:
                    add_question_entities(self.scaffold, report, self.question, chunks, it)
                self.scaffold.graph_answers.append(report.answer)
                self.life.agents["mapper"].answers_processed += 1
                for node in report.new_nodes:
                    self.emit(EV_NODE, agent="mapper", node_id=node.id, kind="entity", label=node.label)
                candidates += report.merge_candidates
                choices = link_choices(self.scaffold, report, chunks)
                if len(choices) >= 2:
                    reports.append((k, q, chunks, report, choices))
            links = await asyncio.gather(*(
                self.rec.step(f"mapper-{it}-{k}-links", ag.links_agent(self.team.model_for("mapper"), list(choices)),
                              f"Question: {q.text}\n\nEntities: {', '.join(choices)}\n\nPassages:\n{render_passages(chunks)}",
                              depends_on=[f"mapper-{it}-{k}"])
                for k, q, chunks, _, choices in reports))
            for (k, q, chunks, report, choices), outcome in zip(reports, links):
                if outcome is None or not outcome.ok:
                    continue
                apply_links(self.scaffold, outcome.output, chunks, self.index, report, choices, iteration=it)
                for gap in report.new_gaps:
                    self.emit(EV_GAP, agent="mapper", gap_id=gap.id, gap_description=gap.description,
                              between=gap.between, suggested_placeholder=gap.suggested_placeholder, confidence=0.3)
            asked_now = {q.id for q, _ in jobs}
            rec.added_nodes = sum(len(a.added_nodes) for a in self.scaffold.graph_answers if a.question_id in asked_now)
            rec.added_edges = sum(len(a.added_edges) for a in self.scaffold.graph_answers if a.question_id in asked_now)
            if candidates and not self.rec.stopped:
                pairs = [(a, b) for a, b in dict.fromkeys(candidates) if a in self.scaffold.nodes and b in self.scaffold.nodes][:8]
                if pairs:
                    outcome = await self.rec.step(f"merge-{it}", ag.merge_agent(self.team.model_for("mapper")), merge_task(self.scaffold, pairs))
                    if outcome is not None and outcome.ok:
                        rec.merged = len(apply_merges(self.scaffold, pairs, outcome.output))
            self.life.waiting("mapper")

        # placeholders for new gaps and evidence labels for new elements: independent, so in parallel
        await asyncio.gather(self._placeholders(it), self._quantify(it))
        requantify(self.scaffold)

        # SELF-CORRECT: the skeptic challenges confident claims; the noise budget is checked
        noise = self.scaffold.noise()
        if not noise.satisfied and (self.scaffold.nodes or self.scaffold.edges):
            self.emit(EV_DEFICIT, agent="skeptic", **noise.model_dump())
        rec.challenged = await self._challenge(it, deficit=not noise.satisfied)
        requantify(self.scaffold)

        noise = self.scaffold.noise()
        rec.nodes, rec.edges, rec.gaps = self.scaffold.size()
        rec.noise, rec.noise_satisfied = noise.current, noise.satisfied
        spent = self.rec.usage
        rec.calls = spent.requests - before_usage.requests
        rec.tokens = spent.total_tokens - before_usage.total_tokens
        rec.seconds = round(time.perf_counter() - t0, 3)
        rec.agent_seconds = round(sum(v for k, v in self.rec.step_seconds.items() if k not in before_steps), 3)
        rec.failed_steps = [f for f in self.rec.failures[failed_before:]]
        self.emit(EV_ITERATION, iteration=it, nodes=rec.nodes, edges=rec.edges, gaps=rec.gaps, noise=rec.noise,
                  noise_satisfied=rec.noise_satisfied, calls=rec.calls, seconds=rec.seconds, failed_steps=rec.failed_steps)
        return rec, self.scaffold.size() != size_before

    # ------------------------------------------------------------------ steps

    def _mapper_questions(self, it: int) -> list[GraphQuestion]:
        """The user's question first; later, the newest, least connected entities and open gaps."""
        texts: list[tuple[str, list[str]]] = []
        if self.question not in self.asked:  # the first iteration, or again after its mapper failed
            texts.append((self.question, []))
        else:
            for gap in self.scaffold.gaps.values():
                if len(gap.between) == 2:
                    a, b = (self.scaffold.label_of(x) for x in gap.between)
                    texts.append((f"What connects {a} and {b}?", list(gap.between)))
            frontier = sorted(self.scaffold.entities(), key=lambda n: (-n.iteration, self.scaffold.degree(n.id), n.id))
            for i in range(0, len(frontier) - 1, 2):
                a, b = frontier[i], frontier[i + 1]
                texts.append((f"What relationships are implied between {a.label} and {b.label}?", [a.id, b.id]))
            if len(frontier) % 2 == 1:
                texts.append((f"What is {frontier[-1].label} connected to?", [frontier[-1].id]))
        out = []
        for text, focus in texts:
            if text in self.asked:
                continue
            self.asked.add(text)
            out.append(GraphQuestion(id=f"q{it}_{len(out) + 1}", agent="mapper", text=text, focus=focus, iteration=it))
            if len(out) >= self.cfg.questions_per_iteration:
                break
        return out

    def _evidence(self, q: GraphQuestion, *, first: bool) -> list[Chunk]:
        """Passages for a question, unseen ones first; a focused question may reread a passage
        (it asks about other entities), and no question is asked twice."""
        n = self.cfg.passages_per_question + (1 if first else 0)  # the whole question deserves a wider look
        # The user's question must share two words with a passage (one when it has one), so an
        # unrelated question finds nothing instead of a passage that shares "the river".
        hits = self.index.search(q.text, limit=n * 3, min_shared=2 if first else 1)
        if q.focus:
            wanted = set().union(*(label_tokens(self.scaffold.label_of(f)) for f in q.focus))
            hits = [c for c in hits if wanted & label_tokens(c.text)]
        fresh = [c for c in hits if c.id not in self.seen_chunks]
        chosen = (fresh + [c for c in hits if c.id in self.seen_chunks])[:n]
        self.seen_chunks.update(c.id for c in chosen)
        self.chunks_found += len(chosen)
        return chosen

    async def _placeholders(self, it: int) -> None:
        gaps: list[Gap] = [self.scaffold.gaps[g] for g in dict.fromkeys(self.pending_gaps)
                           if g in self.scaffold.gaps and not self.scaffold.gaps[g].placeholder]
        self.pending_gaps.clear()
        if not gaps:
            return
        output = None
        if not self.rec.stopped:
            self.life.working("placeholder")
            outcome = await self.rec.step(f"placeholder-{it}", ag.placeholder_agent(self.team.model_for("placeholder"), [g.id for g in gaps]),
                                          placeholder_task(self.scaffold, gaps))
            output = outcome.output if outcome is not None and outcome.ok else None
            self.life.agents["placeholder"].answers_processed += 1
            self.life.waiting("placeholder")
        for node in apply_placeholders(self.scaffold, gaps, output, it):
            self.emit(EV_NODE, agent="placeholder", node_id=node.id, kind="placeholder", label=node.label,
                      confidence=node.confidence, gap=node.gap_reference)

    async def _quantify(self, it: int) -> None:
        edge_ids, entity_ids = unlabelled(self.scaffold, self.labelled)
        if not (edge_ids or entity_ids) or self.rec.stopped:
            apply_labels(self.scaffold, None, self.index)
            return
        self.life.working("quantifier")
        outcome = await self.rec.step(f"quantifier-{it}", ag.quantifier_agent(self.team.model_for("quantifier"), edge_ids, entity_ids),
                                      quantifier_task(self.scaffold, edge_ids, entity_ids))
        output = outcome.output if outcome is not None and outcome.ok else None
        self.labelled |= apply_labels(self.scaffold, output, self.index)
        # an element the model skipped is not asked again and again: it keeps the default labels
        self.labelled |= set(edge_ids) | set(entity_ids)
        self.life.agents["quantifier"].answers_processed += 1
        self.life.waiting("quantifier")

    async def _challenge(self, it: int, *, deficit: bool) -> int:
        targets = skeptic_targets(self.scaffold, self.challenged, deficit)
        self.emit(EV_QUESTIONS, agent="skeptic", agent_id="skeptic", count=len(targets), iteration=it)
        self.life.agents["skeptic"].questions_generated += len(targets)
        if not targets or self.rec.stopped:
            return 0
        self.scaffold.graph_questions += [
            GraphQuestion(id=f"s{it}_{k}", agent="skeptic", text=f"What evidence would disconfirm {t}?", focus=[t], iteration=it)
            for k, t in enumerate(targets, 1)]
        self.life.working("skeptic")
        outcome = await self.rec.step(f"skeptic-{it}", ag.skeptic_agent(self.team.model_for("skeptic"), targets, self.team.tools), skeptic_task(self.scaffold, targets))
        self.life.waiting("skeptic")
        self.challenged |= set(targets)
        if outcome is None or not outcome.ok:
            return 0
        seen, _ = apply_challenges(self.scaffold, outcome.output)
        self.life.agents["skeptic"].answers_processed += 1
        return len(seen)

    async def _hypothesize(self) -> None:
        labels = list(dict.fromkeys(n.label for n in self.scaffold.nodes.values()))[:30]
        edge_ids = list(self.scaffold.edges)[:30]
        self.life.working("hypothesizer")
        self.emit(EV_QUESTIONS, agent="hypothesizer", agent_id="hypothesizer", count=1, iteration=self.scaffold.meta.iteration)
        outcome = await self.rec.step("hypothesizer", ag.hypothesizer_agent(self.team.model_for("hypothesizer"), labels, edge_ids, self.team.tools),
                                      hypotheses_task(self.scaffold, self.question))
        if outcome is not None and outcome.ok:
            self.scaffold.hypotheses = to_hypotheses(self.scaffold, outcome.output)
            self.life.agents["hypothesizer"].answers_processed += 1
        self.life.waiting("hypothesizer")


def _empty_answer(q: GraphQuestion) -> Any:
    from moot.teams.graph.scaffold import GraphAnswer

    return GraphAnswer(question_id=q.id, note="no passage of the sources matches this question")


__all__ = ["BUDGETS", "GraphConfig", "GraphTeam"]
