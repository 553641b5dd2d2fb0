"""One run of the graph team's recursive loop (state that lives only for the run).

See :mod:`moot.teams.graph.team` for the shape of an iteration. Every model call is a step of
the run (budget checked before it, recorded, retried once on a reply that breaks its schema);
parallel calls of one round are applied in a fixed order, so the graph never depends on which
call finished first.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from moot.memory.search import query_terms
from moot.runtime import Run
from moot.teams.graph import agents as ag
from moot.teams.graph import plain
from moot.teams.graph.answer import compose_answer, hypotheses_task, to_hypotheses
from moot.teams.graph.build import (
    Entities,
    alias_proposals,
    aliases_task,
    apply_aliases,
    apply_choices,
    apply_links,
    choices_task,
    documents_json,
    join_by_rule,
    links_task,
    match_end,
    pair_options,
    unknown_gaps,
)
from moot.teams.graph.candidates import (
    Candidate,
    Mention,
    Pair,
    TextReading,
    candidates_of,
    measures_in,
    mentions_in,
    pairs_in,
    resolve,
)
from moot.teams.graph.checks import (
    apply_challenges,
    apply_labels,
    apply_placeholders,
    placeholder_task,
    quantifier_task,
    skeptic_targets,
    skeptic_task,
    unlabelled,
)
from moot.teams.graph.evidence import Sentence, SourceIndex
from moot.teams.graph.lifecycle import Lifecycle
from moot.teams.graph.paths import answer_path, component_of, runs_against_links
from moot.teams.graph.quantify import requantify
from moot.teams.graph.result import GraphResult, IterationRecord
from moot.teams.graph.scaffold import Gap, GraphAnswer, GraphQuestion, Measure, Scaffold, ScaffoldMeta, label_key, label_tokens
from moot.text import predicate
from moot.text.words import refers_back

if TYPE_CHECKING:
    from moot.teams.graph.team import GraphTeam

EV_SPAWNED = "nlr.subagent.spawned"
EV_QUESTIONS = "nlr.subagent.question_generated"
EV_GAP = "nlr.graph.gap_discovered"
EV_NODE = "nlr.graph.node_added"
EV_DEFICIT = "nlr.noise_budget.deficit"
EV_ITERATION = "nlr.reasoning.iteration_complete"
EV_CONVERGED = "nlr.reasoning.converged"
NAMED_ONCE = "named too rarely"
"""What a candidate the salience rule keeps from the model is recorded as (not an entity)."""


class Loop:
    """One run of the recursive loop."""

    def __init__(self, team: GraphTeam, question: str, index: SourceIndex, record: Run) -> None:
        cfg = team.config
        self.team, self.cfg, self.question, self.index = team, cfg, question, index
        self.vocabulary = cfg.vocabulary
        self.rec = record
        self.bus = self.rec.bus
        self.scaffold = Scaffold(question=question, vocabulary=self.vocabulary.name, documents=documents_json(index.documents),
                                 meta=ScaffoldMeta(iteration_limit=cfg.iterations, noise_budget=cfg.noise_budget))
        self.life = Lifecycle(ag.AGENT_NAMES)
        self.entities = Entities(self.vocabulary)
        self.provenance = [n for d in index.documents.values() for n in d.provenance_names()]
        self.titles = [d.title for d in index.documents.values() if d.title]
        self.read: dict[int, Sentence] = {}
        self.mentions: dict[int, list[Mention]] = {}
        self.candidates: dict[str, Candidate] = {}
        self.judged: set[tuple[str, str, tuple[int, ...]]] = set()
        self.unknown_done: set[int] = set()
        self.labelled: set[str] = set()
        self.challenged: set[str] = set()
        self.pending_gaps: list[str] = []
        self.asked: set[str] = set()
        self.focus: tuple[str, str] | None = None
        """The question's subject and object phrases, as the mapper chose them."""
        self.focus_clauses: tuple[str, str] = ("", "")
        """The clause each end of :attr:`focus` stands in, where the question has two (ties between entities)."""
        self.focus_events: tuple[str, str] = ("", "")
        """What the first clause of a question of two says happened (:func:`moot.text.predicate`): its
        end is the thing the question asks about, which a reader names by the event, not the actor."""
        self.plain = self.vocabulary.asks_plainly
        """Choices asked as plain questions and read from the model's odds (until it gives none)."""
        everything = index.all(index.count())
        self.text = TextReading.of(everything, self.provenance, self.titles)
        """The whole text tagged once: each window's candidates are made from its mentions."""
        self.min_mentions = self.vocabulary.min_mentions if len(everything) > cfg.short_sources else 1
        """Short sources offer every candidate (:attr:`GraphConfig.short_sources`)."""
        self.question_words = label_tokens(question)

    def emit(self, event_type: str, /, agent: str | None = None, **payload: Any) -> None:
        self.bus.emit(event_type, run_id=self.rec.run_id, agent=agent, **payload)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ the run

    async def run(self) -> GraphResult:
        started = time.perf_counter()
        self.rec.start()  # the steps are decided iteration by iteration; each appears as it starts
        unsubscribe = self.bus.subscribe(self._on_event)  # the placeholder generator listens for gaps
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
                    reason = (f"stopped after {it} iterations: nothing left to read, but the noise budget is short "
                              f"({record.noise:.2f} < {self.cfg.noise_budget:.2f})")
                    break
            await self._bridge()
            self._path()
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
        mentions = [{"label": m.label, "type": m.kind, "aliases": m.aliases, "evidence": [e.model_dump() for e in m.evidence[:1]]}
                    for m in self.entities.mentions()]
        return GraphResult(
            question=self.question,
            answer=compose_answer(self.scaffold, self.question, self.vocabulary, sentences_read=len(self.read)),
            scaffold=self.scaffold, noise=self.scaffold.noise(), iterations=records, agents=self.life.to_json(),
            converged=converged, usage=recorded.usage, seconds=round(time.perf_counter() - started, 3),
            run_id=self.rec.run_id, status=status, stop_reason=reason, sources=list(self.index.sources),
            chunks=self.index.count(), mentions=mentions)

    def _on_event(self, event: Any) -> None:
        if event.type.value == EV_GAP:
            self.pending_gaps.append(event.payload["gap_id"])

    # ------------------------------------------------------------------ one iteration

    async def _iteration(self, it: int) -> tuple[IterationRecord, bool]:
        t0 = time.perf_counter()
        before_usage = self.rec.usage
        before_steps = dict(self.rec.step_seconds)
        size_before = self.scaffold.size()
        nodes_before = set(self.scaffold.nodes)
        failed_before = len(self.rec.failures)
        rec = IterationRecord(iteration=it, nodes=0, edges=0, gaps=0, noise=0.0, noise_satisfied=False)

        # THINK: graph questions from the scaffold (Python templates)
        questions = self._questions(it)
        self.emit(EV_QUESTIONS, agent="mapper", agent_id="mapper", count=len(questions), iteration=it)
        self.life.agents["mapper"].questions_generated += len(questions)
        self.scaffold.graph_questions += questions
        rec.questions = len(questions)

        # ACT: sentences for the questions (a small source is read whole at once)
        window = self._window(questions, first=it == 1)
        rec.passages = len(window)
        for q in questions:
            self.scaffold.graph_answers.append(GraphAnswer(question_id=q.id, chunks=[s.id for s in window][:40],
                                                           note=f"{len(window)} new sentences" if window else
                                                           "no sentence of the sources matches it that was not read"))

        # OBSERVE: candidate phrases (Python) → which are entities (the mapper), then aliases; candidates
        # a failed call left unsorted are offered again even when no new sentence came in
        if window or self.entities.undecided(self.candidates):
            self.life.working("mapper")
            await self._choose(it, window)
            if not self.plain:  # asked plainly, no listed choice: Entities.accept's rule merged
                await self._aliases(it)
            rec.merged = len(join_by_rule(self.entities, self.scaffold, it))
            self._measures(window)
            self._focus_nodes(it)
            # BUILD: pairs of entities sharing a sentence → relation or none (the mapper, in batches)
            rec.added_edges = await self._link(it)
            self._unknowns(it, window)
            self.life.waiting("mapper")
        elif self.entities.order:
            rec.added_edges = await self._link(it)  # pairs left over from earlier iterations
        rec.added_nodes = len(set(self.scaffold.nodes) - nodes_before)
        for nid in sorted(set(self.scaffold.nodes) - nodes_before):
            node = self.scaffold.nodes[nid]
            if node.kind == "entity":
                self.emit(EV_NODE, agent="mapper", node_id=nid, kind="entity", label=node.label)

        # placeholders for new gaps and evidence labels for new elements: independent, so in parallel
        await asyncio.gather(self._placeholders(it), self._quantify(it))
        requantify(self.scaffold)

        # SELF-CORRECT: the skeptic challenges confident claims; the noise budget is checked
        noise = self.scaffold.noise()
        if not noise.satisfied and (self.scaffold.nodes or self.scaffold.edges):
            self.emit(EV_DEFICIT, agent="skeptic", **noise.model_dump())
        rec.challenged = await self._challenge(it, deficit=not noise.satisfied)
        requantify(self.scaffold)
        self._path()

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
        grew = self.scaffold.size() != size_before or bool(window)
        return rec, grew

    # ------------------------------------------------------------------ THINK and ACT

    def _questions(self, it: int) -> list[GraphQuestion]:
        """The user's question first; then what connects the subject and object while nothing does;
        then the newest, least connected entities."""
        texts: list[tuple[str, list[str]]] = []
        if self.question not in self.asked:
            texts.append((self.question, []))
        else:
            s, o = self.scaffold.subject, self.scaffold.object
            if s and o and not self.scaffold.path:
                texts.append((f"What connects {self.scaffold.label_of(s)} and {self.scaffold.label_of(o)}?", [s, o]))
            frontier = sorted(self.scaffold.entities(), key=lambda n: (self.scaffold.degree(n.id), -n.iteration, n.id))
            texts += [(f"What else is {n.label} linked to?", [n.id]) for n in frontier]
        out = []
        for text, focus in texts:
            if text in self.asked:
                continue
            self.asked.add(text)
            out.append(GraphQuestion(id=f"q{it}_{len(out) + 1}", agent="mapper", text=text, focus=focus, iteration=it))
            if len(out) >= self.cfg.questions_per_iteration:
                break
        return out

    def _window(self, questions: list[GraphQuestion], *, first: bool) -> list[Sentence]:
        """New sentences for the questions, each with the sentence after it (a statement may run
        over two); all of a source small enough to read in one iteration."""
        limit = self.cfg.sentences_per_iteration
        if first and self.index.count() <= limit:
            hits = [s for s in self.index.all(limit) if s.id not in self.read]
        else:
            hits = []
            for q in questions:
                text = q.text if not q.focus else " ".join(self.scaffold.label_of(f) for f in q.focus)
                # the user's question must share two words with a sentence (one when it has one)
                found = self.index.search(text, limit=limit, min_shared=2 if q.text == self.question else 1)
                for s in found:
                    hits.append(s)
                    if (after := self.index.neighbour(s, 1)) is not None:
                        hits.append(after)
        window: dict[int, Sentence] = {}
        for s in hits:
            if s.id not in self.read and s.id not in window:
                window[s.id] = s
            if len(window) >= limit:
                break
        chosen = sorted(window.values(), key=lambda s: (s.source, s.position))
        self.read.update((s.id, s) for s in chosen)
        return chosen

    # ------------------------------------------------------------------ OBSERVE

    async def _choose(self, it: int, window: list[Sentence]) -> None:
        """Python proposes candidate phrases; the mapper sorts them (and the question's phrases)."""
        found = candidates_of([s.id for s in window], self.text.mentions)
        self.mentions.update((s.id, self.text.mentions.get(s.id, [])) for s in window)
        for key, cand in found.items():
            known = self.candidates.setdefault(key, Candidate(key, cand.label, group=cand.group))
            known.sentences += [s for s in cand.sentences if s not in known.sentences]
            if key in self.entities.decided:
                self.entities.cite(key, [self.read[s] for s in cand.sentences if s in self.read])
        for cand in self.entities.undecided(self.candidates):  # named once, off the question: not offered
            if not self.text.salient(cand, self.min_mentions, self.question_words):
                self.entities.decided[cand.key] = NAMED_ONCE
        terms = set(query_terms(self.question))
        todo = sorted(self.entities.undecided(self.candidates),
                      key=lambda c: (not (set(query_terms(c.label)) & terms), c.sentences[0] if c.sentences else 0))
        size = self.cfg.candidates_per_call
        model = self.team.model_for("mapper")
        if self.plain:
            limit = (self.cfg.plain_questions_per_iteration if self.vocabulary.asks_in_two_steps
                     else size * self.cfg.choice_calls_per_iteration)
            try:
                await plain.sort_plainly(self.rec, model, self.entities, todo, self.read, it, limit)
            except plain.NoOdds:
                self.plain = False
                todo = [c for c in todo if c.key not in self.entities.decided]
            else:
                if self.focus is None:
                    named = {k: c.label for k, c in self.candidates.items()}
                    ends = plain.question_ends(self.question, self.vocabulary, named)
                    if ends is not None:
                        self.focus = (ends[0][0], ends[1][0])
                        self.focus_clauses = (ends[0][1], ends[1][1])
                        self.focus_events = (predicate(ends[0][1]), "")
                    else:
                        self.focus = plain.question_focus(self.question, self.vocabulary, named)
                return
        batches = [todo[i:i + size] for i in range(0, len(todo), size)][: self.cfg.choice_calls_per_iteration]
        jobs = [self.rec.step(f"mapper-{it}-{k}", ag.mapper_agent(model, [c.label for c in batch], self.vocabulary, self.team.tools),
                              choices_task(self.question, batch, self.read))
                for k, batch in enumerate(batches, 1)]
        phrases = [label for label, _ in mentions_in(self.question, [])] if self.focus is None else []
        if len(phrases) >= 2:
            jobs.append(self.rec.step(f"question-{it}", ag.question_agent(model, list(dict.fromkeys(phrases))),
                                      f"Question: {self.question}"))
        elif len(phrases) == 1:
            self.focus = (phrases[0], "")
        outcomes = await asyncio.gather(*jobs)
        for batch, outcome in zip(batches, outcomes):
            if outcome is not None and outcome.ok:
                apply_choices(self.entities, batch, outcome.output, self.read, it)
                self.life.agents["mapper"].answers_processed += 1
        if len(phrases) >= 2:
            outcome = outcomes[-1]
            if outcome is not None and outcome.ok:
                subject, obj = outcome.output.subject, outcome.output.object
                self.focus = (subject, "" if obj in (ag.NO_OBJECT, subject) else obj)
            else:  # the question's first and last phrases, in its own order
                self.focus = (phrases[0], phrases[-1])

    async def _aliases(self, it: int) -> None:
        new = [k for k in self.entities.order if self.entities.info[k].iteration == it]
        proposals = alias_proposals(self.entities, new)[:12]
        if not proposals or self.rec.stopped:
            return
        outcome = await self.rec.step(f"merge-{it}", ag.merge_agent(self.team.model_for("mapper"), [k for _, k in proposals]),
                                      aliases_task(self.entities, proposals))
        if outcome is not None and outcome.ok:
            apply_aliases(self.entities, proposals, outcome.output)

    def _measures(self, window: list[Sentence]) -> None:
        chosen = self.entities.chosen()
        for s in window:
            for key, text, value, unit in measures_in(s.text, resolve(self.mentions.get(s.id, []), chosen)):
                info = self.entities.info[key]
                info.measures.append(Measure(text=text, value=value, unit=unit, source=s.source, quote=s.text))

    def _focus_nodes(self, it: int) -> None:
        """The question's subject and object as nodes, where the sources name them."""
        if self.focus is None:
            return
        for role, phrase, clause, event in zip(("subject", "object"), self.focus, self.focus_clauses, self.focus_events):
            if not phrase or getattr(self.scaffold, role):
                continue
            key = match_end(self.entities, phrase, clause, event)
            if key is None:  # the mapper turned the phrase down, but the question names it: it is in its world
                cand = self.candidates.get(label_key(phrase)) or next(
                    (c for c in self.candidates.values() if label_tokens(phrase) and label_tokens(phrase) <= label_tokens(c.label)), None)
                if cand is not None and self.entities.decided.get(cand.key) != "publisher or author":
                    self.entities.accept(cand, self.entities.decided.get(cand.key, ""), self.read, it, force=True)
                    key = self.entities.canonical.get(cand.key)
            if key is not None:
                node = self.entities.draw(self.scaffold, key, it, why="named in the question")
                setattr(self.scaffold, role, node.id)
        if self.scaffold.subject and self.scaffold.subject == self.scaffold.object:
            self.scaffold.object = ""

    # ------------------------------------------------------------------ BUILD

    def _pairs(self) -> list[Pair]:
        """Every pair over the sentences read, judged or not, those nearest the question first."""
        chosen = self.entities.chosen()
        out: list[Pair] = []
        across = self.entities.vocabulary.links_across
        for sid, sentence in sorted(self.read.items()):
            here = resolve(self.mentions.get(sid, []), chosen)
            before = self.index.neighbour(sentence, -1)
            there: list[tuple[str, Mention]] = []
            if (before is not None and before.id in self.read and before.block == sentence.block
                    and (across or refers_back(sentence.text))):
                there = resolve(self.mentions.get(before.id, []), chosen)
            else:
                before = None
            out += pairs_in(sentence, here, before, there)
        focus = {self.entities.canonical.get(k, k) for k in self._focus_keys()}
        terms = set(query_terms(self.question))

        def priority(p: Pair) -> tuple[int, int, int]:
            ends = len({p.a, p.b} & focus)
            shared = len(set(query_terms(p.text)) & terms)
            return (-ends, -shared, p.sentences[0])

        return sorted(dict((p.key, p) for p in out).values(), key=priority)

    def _focus_keys(self) -> list[str]:
        keys = []
        for node_id in (self.scaffold.subject, self.scaffold.object):
            for k, info in self.entities.info.items():
                if node_id and info.node == node_id:
                    keys.append(k)
        return keys

    async def _link(self, it: int) -> int:
        every = self._pairs()
        pairs = [p for p in every if p.key not in self.judged]
        size = self.cfg.pairs_per_call
        batches = [pairs[i:i + size] for i in range(0, len(pairs), size)][: self.cfg.link_calls_per_iteration]
        if not batches or self.rec.stopped:
            return 0
        model = self.team.model_for("mapper")
        if self.plain:
            try:
                if self.vocabulary.asks_in_two_steps:
                    added, judged = await plain.link_in_two_steps(self.rec, model, self.scaffold, self.entities, every,
                                                                  self.read, it, self.cfg.plain_questions_per_iteration,
                                                                  self.judged)
                else:
                    added, judged = await plain.link_plainly(self.rec, model, self.scaffold, self.entities, pairs, self.read,
                                                             it, size * self.cfg.link_calls_per_iteration)
            except plain.NoOdds:
                self.plain = False
            else:
                self.judged.update(judged)
                return added
        options = [[pair_options(self.entities, p) for p in batch] for batch in batches]
        outcomes = await asyncio.gather(*(
            self.rec.step(f"links-{it}-{k}", ag.links_agent(model, [list(o) for o in opts], self.vocabulary),
                          links_task(self.question, self.entities, batch))
            for k, (batch, opts) in enumerate(zip(batches, options), 1)))
        added = 0
        for batch, opts, outcome in zip(batches, options, outcomes):
            if outcome is None or not outcome.ok:
                continue  # not judged: asked again next iteration
            report = apply_links(self.scaffold, self.entities, batch, opts, outcome.output, self.read, it)
            self.judged.update(p.key for p in batch)
            added += len(report.edges)
        return added

    def _unknowns(self, it: int, window: list[Sentence]) -> None:
        """Gaps where a sentence says something is not known or not measured."""
        chosen = self.entities.chosen()
        object_key = next((k for k, i in self.entities.info.items() if i.node and i.node == self.scaffold.object), None)
        for s in window:
            if s.id in self.unknown_done or s.id not in self.text.unknown:
                continue
            self.unknown_done.add(s.id)
            named = [node for node, _ in resolve(self.mentions.get(s.id, []), chosen)]
            for gap in unknown_gaps(self.scaffold, self.entities, s, named, object_key, it):
                self._announce(gap)

    def _announce(self, gap: Gap) -> None:
        self.emit(EV_GAP, agent="mapper", gap_id=gap.id, gap_description=gap.description, between=gap.between,
                  suggested_placeholder=gap.suggested_placeholder, confidence=0.3, reason=gap.reason)

    def _path(self) -> None:
        """The answer's path; read the way its links point (where the vocabulary says so): when more of
        its stated, directed hops run against their edges than with them, the question's object is
        where the chain starts ("why did X happen, and what links Y to it?" names the effect first),
        so the ends swap."""
        s, o = self.scaffold.subject, self.scaffold.object
        if not (s and o):
            self.scaffold.path = []
            return
        path = answer_path(self.scaffold, s, o)
        if self.vocabulary.paths_follow_links and runs_against_links(path, self.vocabulary.symmetric):
            self.scaffold.subject, self.scaffold.object = o, s
            path = answer_path(self.scaffold, o, s)
        self.scaffold.path = path

    async def _bridge(self) -> None:
        """After the loop: where the question links its subject and object and no evidence does, a
        gap between the two parts of the graph, with its placeholder."""
        s, o = self.scaffold.subject, self.scaffold.object
        if not s or not o or o in component_of(self.scaffold, s):
            return
        gap, new = self.scaffold.add_gap(
            f"the question links {self.scaffold.label_of(s)} and {self.scaffold.label_of(o)}, but no source connects them",
            [s, o], domain=self.scaffold.label_of(s), iteration=self.scaffold.meta.iteration, reason="disconnected")
        if new:
            self._announce(gap)
            await self._placeholders(self.scaffold.meta.iteration)
            requantify(self.scaffold)

    # ------------------------------------------------------------------ the checking agents

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
        for eid in edge_ids:  # the relation type says what kind of evidence a stated edge is
            edge = self.scaffold.edges[eid]
            kind = ("causal" if edge.type in self.vocabulary.causal else
                    "correlational" if edge.type in self.vocabulary.correlational else "none")
            edge.features.evidence_kind = kind  # type: ignore[assignment]
        if not self.cfg.quantify or not (edge_ids or entity_ids) or self.rec.stopped:
            apply_labels(self.scaffold, None, self.index)
            self.labelled |= set(edge_ids) | set(entity_ids)
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
        targets = skeptic_targets(self.scaffold, self.challenged, deficit) if self.cfg.challenge else []
        self.emit(EV_QUESTIONS, agent="skeptic", agent_id="skeptic", count=len(targets), iteration=it)
        self.life.agents["skeptic"].questions_generated += len(targets)
        if not targets or self.rec.stopped:
            return 0
        self.scaffold.graph_questions += [
            GraphQuestion(id=f"s{it}_{k}", agent="skeptic", text=f"What evidence would disconfirm {t}?", focus=[t], iteration=it)
            for k, t in enumerate(targets, 1)]
        self.life.working("skeptic")
        outcome = await self.rec.step(f"skeptic-{it}", ag.skeptic_agent(self.team.model_for("skeptic"), targets, self.team.tools),
                                      skeptic_task(self.scaffold, targets))
        self.life.waiting("skeptic")
        self.challenged |= set(targets)
        if outcome is None or not outcome.ok:
            return 0
        seen, _ = apply_challenges(self.scaffold, outcome.output)
        self.life.agents["skeptic"].answers_processed += 1
        return len(seen)

    async def _hypothesize(self) -> None:
        labels = list(dict.fromkeys(n.label for n in self.scaffold.nodes.values()))[:30]
        placeholders = [n.label for n in self.scaffold.placeholders()][:10]
        self.life.working("hypothesizer")
        self.emit(EV_QUESTIONS, agent="hypothesizer", agent_id="hypothesizer", count=1, iteration=self.scaffold.meta.iteration)
        outcome = await self.rec.step("hypothesizer", ag.hypothesizer_agent(self.team.model_for("hypothesizer"), labels,
                                                                            list(self.vocabulary.relations), placeholders, self.team.tools),
                                      hypotheses_task(self.scaffold, self.question, self.vocabulary))
        if outcome is not None and outcome.ok:
            self.scaffold.hypotheses = to_hypotheses(self.scaffold, outcome.output)
            self.life.agents["hypothesizer"].answers_processed += 1
        self.life.waiting("hypothesizer")


__all__ = ["Loop"]
