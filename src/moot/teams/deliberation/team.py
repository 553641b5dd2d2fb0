"""``DeliberationTeam``: the master orchestrator.

```python
from moot.teams.deliberation import DeliberationTeam
team = DeliberationTeam("examples/deliberation/sleep-vs-deadline", mode="standard")
result = team.deliberate_sync("Should I keep working on the report tonight?", now="2026-11-24T20:00")
for insight in result.insights:
    print(insight.recommendation, insight.adjusted_confidence, insight.low_consensus)
```

One deliberation is one recorded run (``moot runs show``): coordinators are activated by the data
the folder has and the request's words (Python); their specialists run in parallel, one call each;
conflicts are found (resource competition from times in Python, the other types by a judge under a
schema); the most severe go to the four-round debate; other specialists vote; Python adjusts
confidence, flags low consensus and ranks. The mode's budget is checked before every request; when
it runs out, what was done so far is returned with the stop reason.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.models.base import Model
from moot.models.registry import RoleModels, model_for, resolve_models
from moot.runtime import Budget, EventBus, Run, RunStore
from moot.runtime.budget import LOCAL_DEADLINE_FACTOR, runs_locally
from moot.teams.deliberation import agents as ag
from moot.teams.deliberation.conflicts import by_severity, candidate_pairs, model_conflict, resource_conflicts
from moot.teams.deliberation.consensus import (
    DEBATE_CALLS,
    LOW_CONSENSUS_WARNING,
    Mode,
    apply_votes,
    clamp_pct,
    mode as get_mode,
    rank,
    specialist_slots,
)
from moot.teams.deliberation.data import DataSet, Slot, facts_for, load_folder, time_slots
from moot.teams.deliberation.memory import FeedbackMemory, Precedent, allowed_compromise_types
from moot.teams.deliberation.models import (
    AgentInsight,
    Conflict,
    ConsensusVote,
    CoordinatorResult,
    Debate,
    DebateResolution,
    DebateRound,
    DeliberationResult,
)
from moot.teams.deliberation.roster import DEFAULT_ROSTER, Roster, Specialist, activate, load_roster

EV_COORDINATOR = "deliberation.coordinator"
EV_INSIGHTS = "deliberation.insights"
EV_CONFLICT = "deliberation.conflict_detected"
EV_ROUND = "deliberation.debate_round"
EV_RESOLUTION = "deliberation.resolution"
EV_VOTES = "deliberation.votes"

_IMPACT_RANK = {"low": 0, "medium": 1, "high": 2}

EMBEDDED_DEADLINE_FACTOR = LOCAL_DEADLINE_FACTOR
"""A model on this machine gets the mode's seconds × 20 (quick 300 s, standard 600 s, deep 1200 s) unless
``deadline_s`` is given: the design's 15/30/60 s assume a hosted model (the runtime's rule for every team)."""


def parse_now(value: str | datetime | None) -> datetime:
    """The moment of the request: an ISO date-time (local time zone when none is given), default now."""
    if value is None:
        return datetime.now().astimezone()
    if isinstance(value, datetime):
        when = value
    else:
        try:
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise MootError(f"--now {value!r} is not an ISO date-time", fix="use e.g. --now 2026-11-24T20:00") from None
    return when if when.tzinfo else when.astimezone()


ROLES = ("specialist", "conflict_judge", "debater", "moderator", "validator", "voter")
"""The roles a model can be given for (``models={role: model}``); the specialists play
``specialist``, ``debater``, ``validator`` and ``voter`` under their own names."""


class DeliberationTeam:
    """Coordinators, specialists, a conflict judge, a moderator and voters over a folder of exports."""

    def __init__(self, data: str | Path | DataSet, *, model: Any = None, models: RoleModels | None = None,
                 mode: str = "standard", roster: Roster | str | Path | None = None, store: RunStore | None = None,
                 memory: FeedbackMemory | None = None, max_calls: int | None = None, deadline_s: float | None = None) -> None:
        """``model`` serves every agent; ``models`` gives single roles their own model
        (``{"moderator": "openai:gpt-4o"}``; roles: :data:`ROLES`)."""
        base = get_mode(mode)
        self.roster = load_roster(roster) if isinstance(roster, (str, Path)) else (roster or DEFAULT_ROSTER)
        self.data = data if isinstance(data, DataSet) else load_folder(data)
        self.model, self.models = resolve_models(model, models, roles=ROLES, team="deliberation")
        model = self.model
        if deadline_s is None and runs_locally(model):
            # the design's seconds are for a hosted model; one embedded call on 2 shared cores takes 10-60 s
            deadline_s = base.deadline_s * EMBEDDED_DEADLINE_FACTOR
        self.mode: Mode = base.with_limits(max_calls=max_calls, deadline_s=deadline_s)
        if self.mode.max_calls < 1:
            raise MootError("the call budget must be at least 1", fix="use --max-calls 1 or more")
        if self.mode.deadline_s <= 0:
            raise MootError("the time budget must be positive", fix="use --max-seconds 30 or more")
        self.store = store
        self.memory = memory

    def model_for(self, role: str) -> Model:
        """The model of one role: its own from ``models``, else the team's ``model``."""
        return model_for(role, self.model, self.models)

    def deliberate_sync(self, request: str, **kwargs: Any) -> DeliberationResult:
        return asyncio.run(self.deliberate(request, **kwargs))

    async def deliberate(self, request: str, *, now: str | datetime | None = None, bus: EventBus | None = None,
                         run_id: str | None = None, parent_run_id: str | None = None) -> DeliberationResult:
        request = " ".join(request.split())
        if not request:
            raise MootError("the request is empty", fix='pass what you want advice on, e.g. "Should I work late tonight?"')
        run = _Deliberation(self, request, parse_now(now), bus, run_id, parent_run_id)
        result = await run.run()
        if self.store is not None:  # the run's page shows insights, debates and votes from this
            self.store.record_output(result.run_id, "deliberation", result.to_json())
        if self.memory is not None:
            self.memory.save(result)
        return result


class _Deliberation:
    """One deliberation (state that lives only for the run)."""

    def __init__(self, team: DeliberationTeam, request: str, now: datetime, bus: EventBus | None, run_id: str | None,
                 parent_run_id: str | None = None) -> None:
        self.team, self.request, self.now, self.model, self.mode = team, request, now, team.model, team.mode
        self.rec = Run(f"deliberate ({self.mode.name}): {request[:60]}",
                               Budget(max_calls=self.mode.max_calls, deadline_s=self.mode.deadline_s), bus, team.store, run_id,
                               parent_run_id=parent_run_id)
        self.result = DeliberationResult(request=request, mode=self.mode.name, now=now.isoformat(timespec="minutes"),
                                         budget={"max_calls": self.mode.max_calls, "deadline_s": self.mode.deadline_s},
                                         skipped=list(team.data.skipped), run_id=self.rec.run_id)
        self.slots: list[Slot] = time_slots(team.data, now)
        self.facts: dict[str, list[str]] = {}
        self.notes: list[str] = []

    def emit(self, event_type: str, /, agent: str | None = None, **payload: Any) -> None:
        self.rec.bus.emit(event_type, run_id=self.rec.run_id, agent=agent, **payload)  # type: ignore[arg-type]

    def calls_left(self) -> int:
        return self.mode.max_calls - self.rec.usage.requests

    # ------------------------------------------------------------------ the run

    async def run(self) -> DeliberationResult:
        started = time.perf_counter()
        self.rec.start()
        status, reason = "completed", ""
        try:
            reason = await self._phases()
        except asyncio.CancelledError:
            await self.rec.finish("cancelled", "the deliberation was cancelled; what was done so far is kept")
            raise
        except BaseException:
            await self.rec.finish("failed", "the deliberation crashed inside moot")
            raise
        if self.rec.stopped:
            status = "stopped"
            reason = f"stopped: {self.rec.tracker.run_stop}; {reason}" if reason else f"stopped: {self.rec.tracker.run_stop}"
        elif self.result.insights == [] and self.rec.failures and not self.result.answer:
            status, reason = "failed", "no specialist gave a usable answer: " + "; ".join(self.rec.failures[:3])
        recorded = await self.rec.finish(status, reason)  # type: ignore[arg-type]
        r = self.result
        r.status, r.stop_reason, r.usage, r.seconds = status, reason, recorded.usage, round(time.perf_counter() - started, 3)
        r.insights = rank(r.insights)
        if not r.answer:
            r.answer = compose_answer(r, self.notes)
        return r

    async def _phases(self) -> str:
        data, mode = self.team.data, self.mode
        act = activate(self.team.roster, data, self.request, mode.max_coordinators, per_coordinator=9)
        for domain, why in act.inactive.items():
            self.result.coordinators.append(CoordinatorResult(domain=domain, activated=False, reason=why))
            self.emit(EV_COORDINATOR, agent=domain, domain=domain, activated=False, reason=why)
        if act.no_data_reason:
            self.result.answer = act.no_data_reason + ". No model was asked."
            return "no coordinator has data for this request"
        # specialists with facts, trimmed so the later phases keep their calls
        chosen: list[tuple[str, list[Specialist]]] = []
        for coordinator, specialists in act.active:
            usable = []
            for s in specialists:
                facts = facts_for(data, list(s.reads), self.now)
                if facts:
                    self.facts[s.name] = facts
                    usable.append(s)
            chosen.append((coordinator.domain, usable))
        slots = specialist_slots(mode, [max(1, len(s)) for _, s in chosen])
        chosen = [(d, s[:n]) for (d, s), n in zip(chosen, slots)]
        for domain, specialists in chosen:
            self.emit(EV_COORDINATOR, agent=domain, domain=domain, activated=True,
                      specialists=[s.name for s in specialists], reason="has data")

        # specialists of every coordinator, all in parallel
        jobs = [(domain, s) for domain, specialists in chosen for s in specialists]
        outcomes = await asyncio.gather(*(self._specialist(domain, s) for domain, s in jobs))
        for domain, specialists in chosen:
            mine = [i for (d, _), found in zip(jobs, outcomes) if d == domain for i in found]
            self.result.coordinators.append(coordinator_result(domain, specialists, mine, self.facts))
            self.result.insights += mine
        insights = self.result.insights
        if not insights:
            return "no specialist gave a usable answer"

        # conflicts
        conflicts = resource_conflicts(insights)
        if mode.debate and not self.rec.stopped:
            conflicts += await self._judge(insights, conflicts)
        conflicts = by_severity(conflicts, {i.agent: i.domain for i in insights})
        for k, c in enumerate(conflicts, 1):
            c.id = f"c{k}"
            self.emit(EV_CONFLICT, conflict_id=c.id, conflict_type=c.type, severity=c.severity, a=c.agent_a.name, b=c.agent_b.name)
        self.result.conflicts = conflicts
        for cr in self.result.coordinators:
            cr.internal_conflicts = [c.id for c in conflicts if c.agent_a.name in cr.specialists
                                     and c.agent_b.name in cr.specialists]

        # debates, most severe first
        if conflicts and not mode.debate:
            self.notes.append(f"{len(conflicts)} conflict(s) found; {mode.name} mode does not debate, so they stay unresolved")
            for c in conflicts:
                self._mark_unresolved(c)
        debated = 0
        for c in conflicts if mode.debate else []:
            if debated >= mode.max_debates:
                self._mark_unresolved(c)
                self.notes.append(f"conflict {c.id} was not debated ({mode.name} mode debates at most {mode.max_debates})")
                continue
            if self.rec.stopped:
                self._mark_unresolved(c)
                self.notes.append(f"conflict {c.id} was not debated: the run had stopped")
                continue
            if self.calls_left() < DEBATE_CALLS:
                self._mark_unresolved(c)
                self.notes.append(f"conflict {c.id} was not debated: a debate needs {DEBATE_CALLS} calls, "
                                  f"{max(0, self.calls_left())} of the mode's {mode.max_calls} were left")
                continue
            debated += 1
            self.result.debates.append(await self._debate(c))

        # consensus
        if mode.voters and not self.rec.stopped:
            await self._vote()
        elif mode.voters:
            self.notes.append("no votes: the budget was spent before consensus")
        apply_votes(self.result.insights, self.result.votes)
        return ""

    def _mark_unresolved(self, c: Conflict) -> None:
        for i in self.result.insights:
            if i.insight_id in (c.agent_a.insight_id, c.agent_b.insight_id) and i.resolved_by is None:
                i.unresolved = True

    # ------------------------------------------------------------------ specialists

    async def _specialist(self, domain: str, s: Specialist) -> list[AgentInsight]:
        facts = self.facts[s.name]
        labels = [sl.label for sl in self.slots]
        agent = ag.specialist_agent(self.team.model_for("specialist"), s.name, s.focus, len(facts), labels)
        # the request chose who speaks (activation); the data decides what they say: on the embedded
        # model every specialist that saw the request copied it ("keep working tonight") as its finding
        task = (f"Your focus: {s.focus}\nNow: {self.now:%a %Y-%m-%d %H:%M}\n\n"
                f"Facts from the user's data:\n{ag.numbered(facts)}\n\nTimes: {', '.join(labels) or 'none'}")
        outcome = await self.rec.step(f"{domain}.{s.name}", agent, task)
        if outcome is None or not outcome.ok:
            return []
        found: list[AgentInsight] = []
        said: set[str] = set()
        for item in outcome.output.insights:
            detail = " ".join(item.detail.split()).rstrip(".")
            recommendation = item.action[0].upper() + item.action[1:] + (f": {detail}" if detail else "")
            key = " ".join(recommendation.lower().split())
            if key in said:  # the small model sometimes writes the same insight twice
                continue
            said.add(key)
            k = len(found) + 1
            slot = next((sl for sl in self.slots if sl.label == item.when), None)
            found.append(AgentInsight(
                insight_id=f"{s.name}-{k}", agent=s.name, domain=domain, recommendation=recommendation, action=item.action,
                because=item.finding.strip(), evidence=[facts[int(e[1:]) - 1] for e in dict.fromkeys(item.evidence)],
                impact=item.impact, confidence=clamp_pct(item.confidence),
                time_window=slot.window if slot is not None else None))
        self.emit(EV_INSIGHTS, agent=s.name, domain=domain, insights=[i.insight_id for i in found])
        return found

    # ------------------------------------------------------------------ conflict judge

    async def _judge(self, insights: list[AgentInsight], found: list[Conflict]) -> list[Conflict]:
        pairs = candidate_pairs(insights, found)
        if not pairs or self.calls_left() < 1:
            return []
        text = "\n".join(f"P{k}: (1) {a.recommendation} | (2) {b.recommendation}" for k, (a, b) in enumerate(pairs, 1))
        outcome = await self.rec.step("conflicts", ag.judge_agent(self.team.model_for("conflict_judge"), len(pairs)),
                                      f"The user's request: {self.request}\n\nPairs:\n{text}")
        if outcome is None or not outcome.ok:
            self.notes.append("the conflict judge gave no usable answer; only time conflicts were checked")
            return []
        out: list[Conflict] = []
        seen: set[str] = set()
        for j in outcome.output.pairs:
            if j.conflict == "none" or j.pair in seen:
                continue
            seen.add(j.pair)
            a, b = pairs[int(j.pair[1:]) - 1]
            out.append(model_conflict(len(found) + len(out) + 1, a, b, j.conflict, j.severity))
        return out

    # ------------------------------------------------------------------ debate

    async def _debate(self, c: Conflict) -> Debate:
        by_id = {i.insight_id: i for i in self.result.insights}
        a, b = by_id[c.agent_a.insight_id], by_id[c.agent_b.insight_id]
        precedents: list[Precedent] = self.team.memory.precedents(c) if self.team.memory is not None else []
        debate = Debate(conflict_id=c.id, resolution=DebateResolution(
            conflict_id=c.id, original_positions={"agent_a": a.recommendation, "agent_b": b.recommendation}),
            memory_used=[f"{p.decision}: {p.resolution} ({p.compromise_type})" for p in precedents])

        def position(i: AgentInsight) -> str:
            return i.recommendation + (f" Because: {i.because}" if i.because else "")

        # round 1: the positions are the two insights as their specialists wrote them
        debate.rounds.append(DebateRound(round_number=1, round_type="position", agent_a_response=position(a),
                                         agent_b_response=position(b),
                                         moderator_note=f"{c.type.replace('_', ' ')} ({c.severity})"))
        self.emit(EV_ROUND, conflict_id=c.id, round_number=1, round_type="position")

        # round 2: evidence, each side answering the other's position without knowing who holds it
        fa, fb = self.facts.get(a.agent, []), self.facts.get(b.agent, [])

        def evidence_task(me: AgentInsight, other: AgentInsight, facts: list[str]) -> str:
            # no request here either: shown it, both embedded debaters argued "keep working tonight"
            return (f"Your position: {position(me)}\n"
                    f"The other side's position: {position(other)}\n\nFacts from your data:\n{ag.numbered(facts)}")

        ra, rb = await asyncio.gather(
            self.rec.step(f"{c.id}.r2.a", ag.debater_agent(self.team.model_for("debater"), a.agent, len(fa)), evidence_task(a, b, fa)),
            self.rec.step(f"{c.id}.r2.b", ag.debater_agent(self.team.model_for("debater"), b.agent, len(fb)), evidence_task(b, a, fb)))
        if not (ra and ra.ok and rb and rb.ok):
            return self._unresolved(debate, "round 2 (evidence)", [ra, rb])
        ev_a = [fa[int(e[1:]) - 1] for e in dict.fromkeys(ra.output.evidence)]
        ev_b = [fb[int(e[1:]) - 1] for e in dict.fromkeys(rb.output.evidence)]
        debate.rounds.append(DebateRound(round_number=2, round_type="evidence",
                                         agent_a_response=f"{ra.output.argument} Evidence: " + "; ".join(ev_a),
                                         agent_b_response=f"{rb.output.argument} Evidence: " + "; ".join(ev_b)))
        self.emit(EV_ROUND, conflict_id=c.id, round_number=2, round_type="evidence")

        # round 3: the moderator's compromise, which must keep evidence of both sides
        types = allowed_compromise_types(precedents)
        labels = [sl.label for sl in self.slots]
        memory_text = ""
        if precedents:
            memory_text = "\n\nWhat this user decided about similar conflicts before:\n" + "\n".join(
                f"- {p.decision}: {p.resolution} ({p.compromise_type})" for p in precedents)
        task = (f"The user's request: {self.request}\nNow: {self.now:%a %H:%M}\n\n"
                f"Side A: {position(a)}\nSide A's argument: {ra.output.argument}\nSide A's evidence:\n{ag.numbered(ev_a, 'A')}\n\n"
                f"Side B: {position(b)}\nSide B's argument: {rb.output.argument}\nSide B's evidence:\n{ag.numbered(ev_b, 'B')}"
                f"{memory_text}\n\nTimes: {', '.join(labels) or 'none'}")
        rm = await self.rec.step(f"{c.id}.r3", ag.moderator_agent(self.team.model_for("moderator"), len(ev_a), len(ev_b), types, labels), task,
                                 depends_on=[f"{c.id}.r2.a", f"{c.id}.r2.b"])
        if not (rm and rm.ok):
            return self._unresolved(debate, "round 3 (compromise)", [rm])
        m = rm.output
        kept_a = [ev_a[int(e[1:]) - 1] for e in dict.fromkeys(m.keep_from_a)]
        kept_b = [ev_b[int(e[1:]) - 1] for e in dict.fromkeys(m.keep_from_b)]
        res = debate.resolution
        res.resolution, res.compromise_type, res.reasoning = m.resolution.strip(), m.compromise_type, m.reasoning.strip()
        res.winning_perspective = {"side_a": a.agent, "side_b": b.agent}.get(m.winning_perspective)
        debate.rounds.append(DebateRound(round_number=3, round_type="compromise", moderator_note=res.resolution))
        self.emit(EV_ROUND, conflict_id=c.id, round_number=3, round_type="compromise")

        # round 4: both sides accept or reject, each on its own
        def verdict_task(me: AgentInsight, kept: list[str]) -> str:
            return (f"Your position: {position(me)}\nThe moderator's compromise: {res.resolution}\n"
                    f"Of your evidence it keeps: {'; '.join(kept)}")

        va, vb = await asyncio.gather(
            self.rec.step(f"{c.id}.r4.a", ag.validator_agent(self.team.model_for("validator"), a.agent), verdict_task(a, kept_a), depends_on=[f"{c.id}.r3"]),
            self.rec.step(f"{c.id}.r4.b", ag.validator_agent(self.team.model_for("validator"), b.agent), verdict_task(b, kept_b), depends_on=[f"{c.id}.r3"]))
        if not (va and va.ok and vb and vb.ok):
            return self._unresolved(debate, "round 4 (validation)", [va, vb])
        res.verdicts = {"agent_a": {"accept": va.output.accept, "reason": va.output.reason},
                        "agent_b": {"accept": vb.output.accept, "reason": vb.output.reason}}
        debate.rounds.append(DebateRound(
            round_number=4, round_type="validation",
            agent_a_response=f"{'accept' if va.output.accept else 'reject'}: {va.output.reason}",
            agent_b_response=f"{'accept' if vb.output.accept else 'reject'}: {vb.output.reason}"))
        self.emit(EV_ROUND, conflict_id=c.id, round_number=4, round_type="validation")
        if not (va.output.accept and vb.output.accept):
            who = [n for n, v in ((a.agent, va), (b.agent, vb)) if not v.output.accept]
            debate.reason = f"{' and '.join(who)} rejected the compromise"
            res.confidence_in_resolution = 0.0
            self._mark_unresolved(c)
            self.emit(EV_RESOLUTION, conflict_id=c.id, accepted=False, reason=debate.reason)
            return debate
        res.accepted = True
        res.confidence_in_resolution = clamp_pct((a.confidence + b.confidence) / 2)
        debate.status = "resolved"
        slot = next((sl for sl in self.slots if sl.label == m.when), None)
        merged = AgentInsight(
            insight_id=f"r-{c.id}", agent="moderator", domain=a.domain if a.domain == b.domain else f"{a.domain}+{b.domain}",
            recommendation=res.resolution, because=res.reasoning, evidence=kept_a + kept_b,
            impact=max(a.impact, b.impact, key=lambda x: _IMPACT_RANK[x]), confidence=res.confidence_in_resolution,
            time_window=slot.window if slot else None, resolution_of=c.id)
        a.resolved_by = b.resolved_by = merged.insight_id
        a.unresolved = b.unresolved = False
        self.result.insights.append(merged)
        self.emit(EV_RESOLUTION, conflict_id=c.id, accepted=True, compromise_type=res.compromise_type)
        return debate

    def _unresolved(self, debate: Debate, where: str, outcomes: list[Any]) -> Debate:
        problems = []
        for o in outcomes:
            if o is None:
                problems.append("the budget stopped the debate")
            elif o.stop_reason.startswith("budget:"):
                problems.append(f"the budget stopped {o.agent}'s reply ({o.detail or o.stop_reason})")
            elif not o.ok:
                problems.append(f"{o.agent}'s reply was unusable ({o.detail or o.stop_reason})")
        debate.reason = f"unresolved in {where}: " + "; ".join(dict.fromkeys(problems))
        conflict = next(c for c in self.result.conflicts if c.id == debate.conflict_id)
        self._mark_unresolved(conflict)
        self.emit(EV_RESOLUTION, conflict_id=debate.conflict_id, accepted=False, reason=debate.reason)
        return debate

    # ------------------------------------------------------------------ consensus

    async def _vote(self) -> None:
        mode = self.mode
        insights = [i for i in self.result.insights if i.resolved_by is None]
        if mode.consensus == "light":
            insights = [i for i in insights if i.impact == "high"]
        if not insights:
            return
        authors = {i.agent for i in self.result.insights}
        voters = [n for n in self.facts if n in authors]
        # each voter votes on the insights that are not its own; most insights to judge first
        plan = [(n, [i for i in insights if i.agent != n]) for n in voters]
        plan = [(n, items) for n, items in plan if items]
        plan.sort(key=lambda p: -len(p[1]))
        plan = plan[:max(0, min(mode.voters, self.calls_left()))]
        if not plan:
            self.notes.append(f"no votes: {'no other agent to vote' if self.calls_left() > 0 else 'no calls left in the budget'}")
            return
        roster = self.team.roster

        async def ballot(name: str, items: list[AgentInsight]) -> list[ConsensusVote]:
            ids = [i.insight_id for i in items]
            listing = "\n".join(f"{i.insight_id}: {i.recommendation}" + (f" ({i.because})" if i.because else "") for i in items)
            facts = self.facts.get(name, [])
            task = (f"The user's request: {self.request}\n\nWhat your data shows:\n{ag.numbered(facts)}\n\n"
                    f"Recommendations to vote on:\n{listing}")
            outcome = await self.rec.step(f"vote.{name}", ag.voter_agent(self.team.model_for("voter"), name, roster.specialist(name).focus, ids), task)
            if outcome is None or not outcome.ok:
                return []
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            seen: dict[str, ConsensusVote] = {}
            for v in outcome.output.votes:
                seen.setdefault(v.insight, ConsensusVote(insight_id=v.insight, voting_agent=name, vote=v.vote,
                                                         reasoning=v.reasoning.strip(), timestamp=stamp))
            return list(seen.values())

        results = await asyncio.gather(*(ballot(n, items) for n, items in plan))
        for votes in results:
            self.result.votes += votes
        self.emit(EV_VOTES, votes=len(self.result.votes), voters=[n for n, _ in plan])


def coordinator_result(domain: str, specialists: list[Specialist], insights: list[AgentInsight],
                       facts: dict[str, list[str]]) -> CoordinatorResult:
    """A coordinator's synthesis, in Python: confidence level, data quality and flags for other domains."""
    answered = {i.agent for i in insights}
    n_facts = sum(len(facts.get(s.name, [])) for s in specialists)
    quality = "high" if specialists and answered == {s.name for s in specialists} and n_facts >= 2 * len(specialists) \
        else "medium" if answered else "low"
    level = round(sum(i.confidence for i in insights) / len(insights), 2) if insights else 0.0
    flags = [f"{i.agent}: {i.recommendation}" for i in insights if i.impact == "high"]
    return CoordinatorResult(domain=domain, insights=insights, cross_domain_flags=flags, confidence_level=level,
                             data_quality=quality, specialists=[s.name for s in specialists], activated=True,
                             reason="has data")  # type: ignore[arg-type]


def compose_answer(r: DeliberationResult, notes: list[str]) -> str:
    """The final output as text: ranked insights, conflicts with their resolution, and what was not done."""
    lines: list[str] = []
    shown = [i for i in r.insights if i.resolved_by is None]
    for k, i in enumerate(shown, 1):
        conf = i.final_confidence()
        tag = f"{conf:.0f}%"
        if i.adjusted_confidence is not None and i.consensus_score is not None:
            tag = f"{i.confidence:.0f}% → {conf:.0f}%"
        extra = " [unresolved conflict]" if i.unresolved else ""
        lines.append(f"{k}. {i.recommendation} ({i.agent}, {i.impact} impact, {tag}){extra}")
        if i.low_consensus:
            lines.append(f"   ⚠ {LOW_CONSENSUS_WARNING}")
    for d in r.debates:
        res = d.resolution
        state = "agreed" if res.accepted else "unresolved"
        lines.append(f"Conflict {d.conflict_id}: {state}" + (f" — {res.resolution}" if res.accepted else f" ({d.reason})"))
    for n in notes:
        lines.append(f"Note: {n}")
    return "\n".join(lines) if lines else "(no insights)"


__all__ = ["DeliberationTeam", "compose_answer", "parse_now"]
