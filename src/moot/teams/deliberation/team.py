"""``DeliberationTeam``: the master orchestrator.

```python
from moot.teams.deliberation import DeliberationTeam
team = DeliberationTeam("examples/deliberation/sleep-vs-deadline", mode="standard")
result = team.deliberate_sync("Should I keep working on the report tonight?", now="2026-11-24T20:00")
print(result.answer)            # what to do, why, the calendar, the confidence
```

One deliberation is one recorded run (``moot runs show``):

1. the request is read once, under a schema, into the options it names and the decision's window;
2. Python computes each specialist's evidence from the data and proposes the typed positions the
   options allow (do, skip, shorten, move, split); coordinators are activated by the data;
3. the specialists of every active coordinator take a position each, in parallel;
4. identical positions become one insight with all their supporters; Python finds the conflicts
   (contradictions and resource competition, from the positions' calendar claims);
5. the most severe conflicts are debated while the mode's calls last (quick: none);
6. other specialists vote; Python adjusts confidence (the design's rule), decides and writes the answer.

The mode's budget is checked before every request; when it runs out, what was done so far is
returned with the stop reason.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.models.base import Model, yes_margin
from moot.models.registry import RoleModels, model_for, resolve_models
from moot.runtime import Budget, EventBus, Run, RunStore
from moot.runtime.budget import LOCAL_DEADLINE_FACTOR, runs_locally
from moot.teams.deliberation import agents as ag
from moot.teams.deliberation.conflicts import find_conflicts, side
from moot.teams.deliberation.consensus import (
    DEBATE_CALLS,
    PLAIN_QUESTIONS,
    Mode,
    apply_votes,
    clamp_pct,
    mode as get_mode,
    rank,
    reading_calls,
    specialist_slots,
)
from moot.teams.deliberation.data import DataSet, load_folder
from moot.teams.deliberation.debate import Built, Side, run_debate, stakes, voice
from moot.teams.deliberation.decision import answer_text, decide, polish_ok, render
from moot.teams.deliberation.evidence import evidence_for, readiness_signal
from moot.teams.deliberation.memory import FeedbackMemory
from moot.teams.deliberation.models import (
    IMPACT_WEIGHT,
    AgentInsight,
    Conflict,
    ConsensusVote,
    CoordinatorResult,
    Debate,
    DeliberationResult,
    Evidence,
    RequestReading,
)
from moot.teams.deliberation.options import choices_for, reader_output, resolve
from moot.teams.deliberation.plain import physical_by_odds, physical_lean, rest_question, sport_question
from moot.teams.deliberation.plan import (
    PHYSICAL,
    Claims,
    Option,
    Position,
    TimeWindow,
    candidate_positions,
    clash,
    describe,
    free_slots,
    lean_positions,
    readiness_positions,
)
from moot.teams.deliberation.roster import DEFAULT_ROSTER, Roster, Specialist, activate, load_roster
from moot.text import phrases

NEITHER = "none of them"
SPORT = "Which of these is a sport or physical exercise?"
NOT_SPORT = "Which of these is not a sport or physical exercise (work, study, a chore, rest or a social event)?"
EV_COORDINATOR = "deliberation.coordinator"
EV_OPTIONS = "deliberation.options"
EV_PHYSICAL = "deliberation.physical"
EV_INSIGHTS = "deliberation.insights"
EV_CONFLICT = "deliberation.conflict_detected"
EV_ROUND = "deliberation.debate_round"
EV_RESOLUTION = "deliberation.resolution"
EV_VOTES = "deliberation.votes"
EV_DECISION = "deliberation.decision"

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


ROLES = ("reader", "specialist", "moderator", "validator", "voter", "polisher")
"""The roles a model can be given for (``models={role: model}``); the specialists play
``specialist``, ``validator`` and ``voter`` under their own names."""


class DeliberationTeam:
    """A request reader, coordinators' specialists, a moderator and voters over a folder of exports."""

    def __init__(self, data: str | Path | DataSet, *, model: Any = None, models: RoleModels | None = None,
                 mode: str = "standard", roster: Roster | str | Path | None = None, store: RunStore | None = None,
                 memory: FeedbackMemory | None = None, max_calls: int | None = None, deadline_s: float | None = None,
                 polish: bool = False, order_check: bool | None = None) -> None:
        """``model`` serves every agent; ``models`` gives single roles their own model
        (``{"moderator": "openai:gpt-4o"}``; roles: :data:`ROLES`). ``polish``: let the model reword
        the answer's first line when a call is left (Python checks the rewording). ``order_check``:
        ask every choice among listed options twice, listed both ways, and take no answer that
        changes with the order; on by default for a model that runs on this machine (the embedded
        0.5B model took the first position shown on every scenario measured), off for others."""
        base = get_mode(mode)
        self.roster = load_roster(roster) if isinstance(roster, (str, Path)) else (roster or DEFAULT_ROSTER)
        self.data = data if isinstance(data, DataSet) else load_folder(data)
        self.model, self.models = resolve_models(model, models, roles=ROLES, team="deliberation")
        if deadline_s is None and runs_locally(self.model):
            # the design's seconds are for a hosted model; one embedded call on 2 shared cores takes 10-60 s
            deadline_s = base.deadline_s * EMBEDDED_DEADLINE_FACTOR
        self.mode: Mode = base.with_limits(max_calls=max_calls, deadline_s=deadline_s)
        if self.mode.max_calls < 1:
            raise MootError("the call budget must be at least 1", fix="use --max-calls 1 or more")
        if self.mode.deadline_s <= 0:
            raise MootError("the time budget must be positive", fix="use --max-seconds 30 or more")
        self.store, self.memory, self.polish = store, memory, polish
        self.order_check = runs_locally(self.model) if order_check is None else order_check

    def model_for(self, role: str) -> Model:
        """The model of one role: its own from ``models``, else the team's ``model``."""
        return model_for(role, self.model, self.models)

    def deliberate_sync(self, request: str, **kwargs: Any) -> DeliberationResult:
        return asyncio.run(self.deliberate(request, **kwargs))

    async def deliberate(self, request: str, *, now: str | datetime | None = None, bus: EventBus | None = None,
                         run_id: str | None = None, parent_run_id: str | None = None) -> DeliberationResult:
        request = " ".join(request.split())
        if not request:
            raise MootError("the request is empty", fix='pass what you want advice on, e.g. "Should I run or prepare the slides tomorrow at 7?"')
        result = await _Deliberation(self, request, parse_now(now), bus, run_id, parent_run_id).run()
        if self.store is not None:  # the run's page shows the decision, positions, debates and votes from this
            self.store.record_output(result.run_id, "deliberation", result.to_json())
        if self.memory is not None:
            self.memory.save(result)
        return result


class _Deliberation:
    """One deliberation (state that lives only for the run); also the debate chamber's host."""

    def __init__(self, team: DeliberationTeam, request: str, now: datetime, bus: EventBus | None, run_id: str | None,
                 parent_run_id: str | None = None) -> None:
        self.team, self.request, self.now, self.mode = team, request, now, team.mode
        self.rec = Run(f"deliberate ({self.mode.name}): {request[:60]}", Budget(max_calls=self.mode.max_calls, deadline_s=self.mode.deadline_s),
                       bus, team.store, run_id, parent_run_id=parent_run_id)
        self.result = DeliberationResult(request=request, mode=self.mode.name, now=now.isoformat(timespec="minutes"),
                                         budget={"max_calls": self.mode.max_calls, "deadline_s": self.mode.deadline_s},
                                         skipped=list(team.data.skipped), run_id=self.rec.run_id)
        self.options: dict[str, Option] = {}
        self.margins: dict[str, dict[str, float]] = {}
        """The plain questions' yes-margins per option (``sport``, ``rest``), for the run's record."""
        self.evidence: dict[str, Evidence] = {}
        self.mine: dict[str, list[str]] = {}
        """Specialist → the evidence ids it reads."""
        self.signals: dict[str, Any] = {}
        """Specialist → its readiness signal (computed once, before the slots are counted)."""
        self.cited_by: dict[str, list[str]] = {}
        self.claims_of: dict[str, Claims] = {}
        self.stakes_of: dict[str, list[tuple[str, str]]] = {}
        self.otherwise_of: dict[str, tuple[Claims, str]] = {}
        self.free: list[TimeWindow] = []
        self.window_label = ""
        self.notes: list[str] = []

    # ------------------------------------------------------------------ the chamber's host

    def emit(self, event_type: str, /, agent: str | None = None, **payload: Any) -> None:
        self.rec.bus.emit(event_type, run_id=self.rec.run_id, agent=agent, **payload)  # type: ignore[arg-type]

    async def step(self, task_id: str, agent: Any, task: str, depends_on: list[str] | None = None) -> Any:
        return await self.rec.step(task_id, agent, task, depends_on=depends_on)

    def model(self, role: str) -> Any:
        return self.team.model_for(role)

    def round_done(self, conflict_id: str, number: int, kind: str) -> None:
        self.emit(EV_ROUND, conflict_id=conflict_id, round_number=number, round_type=kind)

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
        elif not self.result.insights and self.rec.failures and not self.result.answer:
            status, reason = "failed", "no specialist gave a usable answer: " + "; ".join(self.rec.failures[:3])
        r = self.result
        if not r.answer:
            r.answer = "\n".join(self.notes) or "(no decision)"
        r.notes = self.notes
        recorded = await self.rec.finish(status, reason)  # type: ignore[arg-type]
        r.status, r.stop_reason, r.usage, r.seconds = status, reason, recorded.usage, round(time.perf_counter() - started, 3)
        return r

    async def _phases(self) -> str:
        data, mode = self.team.data, self.mode
        act = activate(self.team.roster, data, self.request, len(self.team.roster.coordinators), per_coordinator=9)
        if act.no_data_reason:
            for domain, why in act.inactive.items():
                self.result.coordinators.append(CoordinatorResult(domain=domain, activated=False, reason=why))
            self.result.answer = act.no_data_reason + ". No model was asked."
            return "no coordinator has data for this request"

        # 1. evidence (Python); the coordinators and specialists with the most of it, so that one debate keeps its calls
        ranked: list[tuple[int, str, list[Specialist]]] = []
        for coordinator, specialists in act.active:
            usable = sorted([s for s in specialists if self._gather(s, act.claimed)], key=lambda s: -len(self.mine[s.name]))
            if usable:
                ranked.append((sum(len(self.mine[s.name]) for s in usable), coordinator.domain, usable))
            else:
                act.inactive[coordinator.domain] = "no evidence in the data for its specialists"
        ranked.sort(key=lambda r: -r[0])
        for _, domain, _ in ranked[mode.max_coordinators:]:
            act.inactive[domain] = f"not needed in this mode (at most {mode.max_coordinators} coordinator{'s' if mode.max_coordinators > 1 else ''})"
        chosen = [(domain, usable) for _, domain, usable in ranked[:mode.max_coordinators]]
        for domain, why in act.inactive.items():
            self.result.coordinators.append(CoordinatorResult(domain=domain, activated=False, reason=why))
            self.emit(EV_COORDINATOR, agent=domain, domain=domain, activated=False, reason=why)
        if not chosen:
            self.result.answer = "No specialist found evidence in the data for this request. No model was asked."
            return "no evidence in the data"
        self.signals = {s.name: readiness_signal([self.evidence[e] for e in self.mine[s.name]]) for _, sp in chosen for s in sp}
        readiness = any(self.signals.values())
        slots = specialist_slots(mode, [max(1, len(s)) for _, s in chosen], reading_calls(mode, readiness, self.team.order_check))
        chosen = [(d, s[:n]) for (d, s), n in zip(chosen, slots)]
        for domain, specialists in chosen:
            self.emit(EV_COORDINATOR, agent=domain, domain=domain, activated=True,
                      specialists=[s.name for s in specialists], reason="has data")

        # 2. the request: its options and window (one call); Python proposes the positions
        if not await self._read():
            return "the request names no option to decide"
        events = [TimeWindow(start=e.start, end=e.end) for e in data.events]
        self.free = free_slots(events + [o.window for o in self.options.values()], self.now)
        positions = {describe(p, self.options): p for p in candidate_positions(self.options, self.free)}
        await self._physical([s for _, specialists in chosen for s in specialists])

        # 3. every specialist takes a position, all in parallel (Python settles those its readiness evidence decides)
        jobs = [(domain, s) for domain, specialists in chosen for s in specialists]
        stances = [self._stance(s, positions) for _, s in jobs]
        asks = [st if isinstance(st, dict) else None for st in stances]
        checks = self._order_checks(asks, positions)
        # a small model (the order check is on) chooses among a few positions, one per option and a compromise
        lean = ({describe(p, self.options): p for p in lean_positions(self.options, list(positions.values()))}
                if self.team.order_check else {})

        async def take(k: int) -> tuple[Position, Any] | None:
            st, (domain, s) = stances[k], jobs[k]
            if not isinstance(st, dict):
                return st
            if st is positions and self.team.order_check:
                if not checks[k]:
                    self.notes.append(f"{s.name}: not asked (the calls left could not ask it twice, the positions listed both ways)")
                    return None
                st = lean
            return await self._specialist(domain, s, st, checks[k])

        taken = await asyncio.gather(*(take(k) for k in range(len(jobs))))
        self._merge(jobs, [t for t in taken])
        for domain, specialists in chosen:
            self.result.coordinators.append(coordinator_result(domain, specialists, self.result.insights, jobs, taken))
        if not self.result.insights:
            if not self.rec.failures:  # every specialist answered and none took a position: say so first
                self.result.answer = "\n".join(["No decision: no specialist took a position the data supports "
                                                 "(the reasons follow).", *self.notes])
            return "no specialist gave a usable answer"

        # 4. conflicts, from the positions' calendar claims (Python)
        conflicts = await self.rec.python("conflicts", "conflict detection",
                                          lambda: find_conflicts(self.result.insights, self.claims_of, self.options))
        self.result.conflicts = conflicts
        for c in conflicts:
            self.emit(EV_CONFLICT, conflict_id=c.id, conflict_type=c.type, severity=c.severity, a=c.agent_a.name, b=c.agent_b.name)
        for cr in self.result.coordinators:
            cr.internal_conflicts = [c.id for c in conflicts if set(c.agent_a.supporters) & set(cr.specialists)
                                     and set(c.agent_b.supporters) & set(cr.specialists)]

        # 5. debates, most severe first, while the calls last
        await self._debates(conflicts)

        # 6. consensus, then the decision
        if mode.voters and not self.rec.stopped:
            await self._vote()
        elif mode.voters:
            self.notes.append("no votes: the budget was spent before consensus")
        apply_votes(self.result.insights, self.result.votes)
        self.result.insights = rank(self.result.insights)
        await self._decide()
        return ""

    # ------------------------------------------------------------------ 1. the request

    async def _read(self) -> bool:
        # The request's pieces are read by the tagger: load it off the event loop (about a second,
        # once a process), not inside the deadline-bound run's loop on first use.
        await asyncio.to_thread(phrases.warm)
        choices = choices_for(self.request, self.team.data.events, self.now)
        task = f"Now: {self.now:%a %Y-%m-%d %H:%M}\n\nThe request: {self.request}\n\n{choices.listing()}"
        outcome = await self.rec.step("read", ag.reader_agent(self.team.model_for("reader"), reader_output(choices)), task)
        reading: RequestReading = resolve(outcome.output if outcome is not None and outcome.ok else None, self.request, choices, self.now)
        if outcome is None or not outcome.ok:
            reading.note = "; ".join(x for x in ("the reader gave no usable answer", reading.note) if x)
        self.result.reading = reading
        self.options = {o.option_id: o for o in reading.options}
        self.window_label = reading.window_label
        if reading.note:
            self.notes.append(reading.note)
        self.emit(EV_OPTIONS, options=[f"{o.option_id}: {o.label} ({o.window.label()})" for o in reading.options],
                  window=reading.window_label)
        if not self.options:
            self.result.answer = ("I could not find the options in the request, nor calendar events in its time. "
                                  "Name them, e.g. \"Should I run or rehearse the talk tomorrow at 7:00?\"")
            return False
        return True

    async def _physical(self, running: list[Specialist]) -> None:
        """Which option is a sport or physical exercise. Asked only when a specialist has readiness
        evidence, which speaks to that option. With the order check (a model on this machine),
        asked plainly first (:mod:`moot.teams.deliberation.plain`): one yes/no question per option,
        read for its odds; a model that gives none is asked the listed way."""
        if not any(self.signals.get(s.name) for s in running):
            return
        labels = [o.label for o in self.options.values()]
        if len(set(labels)) < len(labels):
            return
        leans = await self._physical_odds(labels) if self.team.order_check else None
        sport = physical_by_odds(leans) if leans is not None else await self._physical_listed(labels)
        if leans:
            # the leans are the run's record (an event), not the answer's: a number there is a number of the data
            self.emit(EV_PHYSICAL, leans={label: round(lean, 3) for label, lean in leans.items()}, physical=sport, **self.margins)
            self.notes.append("asked of each option whether it means doing a sport or physical exercise, and whether it "
                              "means resting: " +
                              (f"the model leaned to sport for {sport!r} clearly more than for the others, so it is taken "
                               "for the physical activity" if sport else
                               "the model's answers were too close to call, so no option is taken for one" if len(leans) > 1
                               else "the model did not lean to yes clearly, so it is not taken for one"))
        for o in self.options.values():
            if o.label == sport:
                o.kind = PHYSICAL

    async def _physical_odds(self, labels: list[str]) -> dict[str, float] | None:
        """Each option's lean to being the physical one: its yes-margin to "is it a sport?" less its
        yes-margin to "is it resting?" (:func:`moot.teams.deliberation.plain.physical_lean`); ``None``
        when the model gives no odds (or the first question failed), ``{}`` when the calls left cannot
        ask every option. The rest question is asked only where the calls leave one more after both
        questions of every option (else the lean is the sport question's). The margins go to the run's record."""
        if self.calls_left() < len(labels):
            return {}
        # the rest question too where the calls allow both and one more (quick mode asks the sport question only)
        with_rest = self.calls_left() > PLAIN_QUESTIONS * len(labels)
        model = self.team.model_for("reader")
        sport_agent, rest_agent = ag.physical_odds_agent(model), ag.rest_odds_agent(model)

        def ask(k: int, label: str) -> Any:
            return self.rec.step(f"physical_odds.{k}", sport_agent, sport_question(label))

        def ask_rest(k: int, label: str) -> Any:
            return self.rec.step(f"rest_odds.{k}", rest_agent, rest_question(label))

        # the first question alone: a model without odds costs one call, then is asked the listed way
        first = await ask(1, labels[0])
        if first is None or not first.ok or first.top_logprobs is None:
            return None
        more = await asyncio.gather(*(ask(k, label) for k, label in enumerate(labels[1:], 2)),
                                    *(ask_rest(k, label) for k, label in enumerate(labels, 1) if with_rest))
        sport_outcomes, rest_outcomes = [first, *more[:len(labels) - 1]], list(more[len(labels) - 1:])
        if any(o is None or not o.ok or o.top_logprobs is None for o in [*sport_outcomes, *rest_outcomes]):
            return {}
        sport = {label: yes_margin(o.top_logprobs) for label, o in zip(labels, sport_outcomes)}
        resting = {label: yes_margin(o.top_logprobs) for label, o in zip(labels, rest_outcomes)}
        self.margins = {"sport": {k: round(v, 3) for k, v in sport.items()}}
        if resting:
            self.margins["rest"] = {k: round(v, 3) for k, v in resting.items()}
        return {label: physical_lean(sport[label], resting.get(label, 0.0)) for label in labels}

    async def _physical_listed(self, labels: list[str]) -> str | None:
        """Which option is a sport, listed. With the order check, asked as two questions that must
        agree: which one is, the options listed one way, and which one is not, listed the other way;
        the answer stands only when the second names another option. Measured on 18 requests, the
        0.5B model named a work task as the sport, the same whichever way the options were listed,
        in 6 of them (and the sport in 1), and answered yes to "is this a sport?" for everything;
        asked both questions it named the same option or none."""
        questions = [(SPORT, labels)] + ([(NOT_SPORT, labels[::-1])] if self.team.order_check else [])
        if self.calls_left() < len(questions):
            return None
        outcomes = await asyncio.gather(*(
            self.rec.step("physical" if k == 0 else "not_physical",
                          ag.physical_agent(self.team.model_for("reader"), [*order, NEITHER], negated=k == 1),
                          question + "\n" + "\n".join(f"- {x}" for x in [*order, NEITHER]))
            for k, (question, order) in enumerate(questions)))
        picks = [o.output.answer if o is not None and o.ok else None for o in outcomes]
        sport = picks[0] if picks[0] in labels else None
        if sport is not None and len(picks) == 2 and (picks[1] not in labels or picks[1] == sport):
            self.notes.append(f"no option is taken for a physical activity (asked which one is, the model answered "
                              f"{sport!r}; asked which one is not, {picks[1] or 'nothing'!r})")
            sport = None
        return sport

    # ------------------------------------------------------------------ 2-3. evidence and positions

    def _gather(self, s: Specialist, claimed: set[str]) -> bool:
        found = evidence_for(self.team.data, list(s.reads), self.now, claimed, readiness_signs=s.readiness)
        by_text = {e.text: k for k, e in self.evidence.items()}
        mine = []
        for f in found:
            eid = by_text.get(f.text)
            if eid is None:
                eid = f"E{len(self.evidence) + 1}"
                self.evidence[eid] = f.model_copy(update={"evidence_id": eid})
                self.result.evidence.append(self.evidence[eid])
            mine.append(eid)
        self.mine[s.name] = mine
        return bool(mine)

    def _stance(self, s: Specialist, positions: dict[str, Position]) -> tuple[Position, Any] | dict[str, Position] | None:
        """What Python settles before a specialist's call: its readiness evidence (computed) narrows the
        positions on a physical option to those it allows, and when one is left it is the position (no
        call). Returns that ``(position, stance)``, the positions the model is to choose from, or
        ``None`` when the specialist takes no position (said in the notes)."""
        signal = self.signals.get(s.name)
        narrowed = readiness_positions(signal.direction, self.options, list(positions.values())) if signal else None
        if narrowed is None:
            return positions
        allowed = {describe(p, self.options): p for p in narrowed}
        if not allowed:
            self.notes.append(f"{s.name}: no position ({signal.why}: no position the options allow follows from it)")  # type: ignore[union-attr]
            return None
        if len(allowed) == 1:
            return next(iter(allowed.values())), signal.stance()  # type: ignore[union-attr]
        return allowed

    def _order_checks(self, asks: list[dict[str, Position] | None], everything: dict[str, Position]) -> list[bool]:
        """Which specialists choosing from every position are asked: each twice, the positions listed
        in Python's order and reversed, as far as the calls left allow after the narrowed choices (one
        call each), the mode's first debate and the polish asked for. They go before the votes; a
        specialist the calls cannot check is not asked, since a choice unchecked against the listing
        order is mostly the first position shown."""
        if not self.team.order_check:
            return [False] * len(asks)
        spare = (self.calls_left() - sum(1 for a in asks if a is not None and a is not everything)
                 - (DEBATE_CALLS if self.mode.debate else 0) - (1 if self.team.polish else 0))
        checks = []
        for a in asks:
            check = a is everything and spare >= 2
            spare -= 2 * check
            checks.append(check)
        return checks

    async def _specialist(self, domain: str, s: Specialist, allowed: dict[str, Position], check: bool) -> tuple[Position, Any] | None:
        """The model's choice of a position among ``allowed``; with ``check``, asked twice, the positions
        listed one way and the other: a choice that follows the listing order is no choice (the 0.5B
        model took the first position shown on every scenario it was measured on)."""
        mine, listed = self.mine[s.name], list(allowed)
        orders = (listed, listed[::-1]) if check else (listed,)
        outcomes = await asyncio.gather(*(
            self.rec.step(f"{domain}.{s.name}" + ("" if k == 0 else ".reversed"), self._specialist_agent(s, order, mine),
                          self._specialist_task(mine, order))
            for k, order in enumerate(orders)))
        if any(o is None or not o.ok for o in outcomes):
            return None
        picks = [o.output.position for o in outcomes]  # type: ignore[union-attr]
        if len(set(picks)) > 1:
            self.notes.append(f"{s.name}: no position (it took «{picks[0]}» from the positions listed one way and "
                              f"«{picks[1]}» from them listed the other way)")
            return None
        return allowed[picks[0]], outcomes[0].output  # type: ignore[union-attr]

    def _specialist_agent(self, s: Specialist, listed: list[str], mine: list[str]) -> Any:
        return ag.specialist_agent(self.team.model_for("specialist"), s.name, s.focus, listed, mine)

    def _specialist_task(self, mine: list[str], listed: list[str]) -> str:
        options = "\n".join(f"- {o.name()}: {o.window.label()}" + (f" (on the calendar as '{o.event}')" if o.event else "")
                            for o in self.options.values())
        return (f"The decision: {self.window_label}\nOptions:\n{options}\n\nEvidence from the person's data:\n"
                + "\n".join(f"{e}: {self.evidence[e].text}" for e in mine)
                + "\n\nPositions you can take:\n" + "\n".join(f"- {p}" for p in listed))

    def _merge(self, jobs: list[tuple[str, Specialist]], taken: list[tuple[Position, Any] | None]) -> None:
        """One insight per distinct position, with every specialist that took it."""
        groups: dict[str, list[tuple[str, Specialist, Position, Any]]] = {}
        for (domain, s), t in zip(jobs, taken):
            if t is not None:
                groups.setdefault(t[0].key(), []).append((domain, s, t[0], t[1]))
        for k, members in enumerate(groups.values(), 1):
            position = members[0][2]
            counts: dict[str, int] = {}
            for _, s, _, out in members:
                for e in dict.fromkeys(out.evidence):
                    counts[e] = counts.get(e, 0) + 1
                    self.cited_by.setdefault(e, [])
                    if s.name not in self.cited_by[e]:
                        self.cited_by[e].append(s.name)
            first_seen = {e: n for n, e in enumerate(e for _, _, _, out in members for e in out.evidence)}
            cited = sorted(counts, key=lambda e: (-counts[e], first_seen[e]))
            impact = max((out.impact for *_, out in members), key=lambda x: IMPACT_WEIGHT[x])
            claims = position.claims(self.options)
            spans = [w for w in claims.values() if w is not None]
            insight = AgentInsight(
                insight_id=f"p{k}", agent=members[0][1].name, supporters=[s.name for _, s, _, _ in members],
                domain="+".join(dict.fromkeys(d for d, *_ in members)), position=position,
                recommendation=describe(position, self.options), action=position.kind, evidence_ids=cited,
                evidence=[self.evidence[e].text for e in cited], impact=impact,
                confidence=clamp_pct(sum(clamp_pct(out.confidence) for *_, out in members) / len(members)),
                time_window=TimeWindow(start=min(w.start for w in spans), end=max(w.end for w in spans)) if spans else None,
                because=self.evidence[cited[0]].text if cited else "")
            self.claims_of[insight.insight_id] = claims
            self.stakes_of[insight.insight_id] = stakes(position)
            self.result.insights.append(insight)
            self.emit(EV_INSIGHTS, agent=insight.agent, insight_id=insight.insight_id, supporters=insight.supporters,
                      position=insight.recommendation)
        rank(self.result.insights)  # sets support, which orders the conflicts

    # ------------------------------------------------------------------ 5. debates

    async def _debates(self, conflicts: list[Conflict]) -> None:
        mode = self.mode
        if conflicts and not mode.debate:
            self.notes.append(f"{len(conflicts)} conflict(s) found; {mode.name} mode does not debate, so they stay open")
        debated: set[frozenset[str]] = set()
        for c in conflicts:
            by_id = {i.insight_id: i for i in self.result.insights}
            a, b = self._standing(by_id[c.agent_a.insight_id], by_id), self._standing(by_id[c.agent_b.insight_id], by_id)
            if (a.insight_id, b.insight_id) != (c.agent_a.insight_id, c.agent_b.insight_id):
                # an earlier compromise replaced a side: debate what stands now, if it still clashes
                if a is b or clash(self.claims_of[a.insight_id], self.claims_of[b.insight_id]) is None:
                    self.notes.append(f"conflict {c.id} is settled by the compromise of {(a if a.resolution_of else b).resolution_of}")
                    continue
                c.agent_a, c.agent_b = side(a), side(b)
                c.note = f"{a.recommendation} against {b.recommendation} (what stands after an earlier compromise)"
            pair = frozenset((a.insight_id, b.insight_id))
            if pair in debated:
                self.notes.append(f"conflict {c.id} is the same as one already debated")
                continue
            if not mode.debate:
                a.unresolved = b.unresolved = True
                continue
            if self.rec.stopped:
                reason = "the run had stopped"
            elif self.calls_left() < DEBATE_CALLS:
                reason = f"a debate needs {DEBATE_CALLS} calls, {max(0, self.calls_left())} of the mode's {mode.max_calls} were left"
            else:
                reason = ""
            if reason:
                a.unresolved = b.unresolved = True
                self.notes.append(f"conflict {c.id} was not debated: {reason}")
                continue
            debated.add(pair)
            precedents = self.team.memory.precedents(c) if self.team.memory is not None else []
            sa, sb = (Side(i, self.claims_of[i.insight_id], self.stakes_of[i.insight_id]) for i in (a, b))
            debate, built = await run_debate(self, c, sa, sb, precedents)
            self.result.debates.append(debate)
            if built is None:
                a.unresolved = b.unresolved = True
                self.emit(EV_RESOLUTION, conflict_id=c.id, accepted=False, reason=debate.reason)
                continue
            self._resolved(c, debate, built, a, b)

    def _standing(self, insight: AgentInsight, by_id: dict[str, AgentInsight]) -> AgentInsight:
        """The insight, or the compromise that replaced it (and the one that replaced that, …)."""
        while insight.resolved_by:
            insight = by_id[insight.resolved_by]
        return insight

    def _resolved(self, c: Conflict, debate: Debate, built: Built, a: AgentInsight, b: AgentInsight) -> None:
        res = debate.resolution
        votes = [v["vote"] for v in res.verdicts.values()]
        merged = AgentInsight(
            insight_id=f"r-{c.id}", agent="moderator", supporters=list(dict.fromkeys([*a.supporters, *b.supporters])),
            domain="+".join(dict.fromkeys([*a.domain.split("+"), *b.domain.split("+")])), recommendation=res.resolution,
            action=res.compromise_type, evidence_ids=list(dict.fromkeys([*a.evidence_ids[:1], *b.evidence_ids[:1],
                                                                         *a.evidence_ids, *b.evidence_ids])),
            impact=max(a.impact, b.impact, key=lambda x: IMPACT_WEIGHT[x]),
            confidence=clamp_pct((a.confidence + b.confidence) / 2), resolution_of=c.id,
            because="; ".join(x.strongest_evidence for x in res.checks))
        merged.evidence = [self.evidence[e].text for e in merged.evidence_ids]
        # the two sides' round-4 votes are votes on the compromise (the design's rule adjusts its confidence)
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        for (key, insight), vote in zip((("agent_a", a), ("agent_b", b)), votes):
            self.result.votes.append(ConsensusVote(insight_id=merged.insight_id, voting_agent=voice(insight), vote=vote,  # type: ignore[arg-type]
                                                   reasoning=str(res.verdicts[key].get("reason", "")), timestamp=stamp))
        self.claims_of[merged.insight_id] = built.claims
        self.stakes_of[merged.insight_id] = list(dict.fromkeys([*self.stakes_of[a.insight_id], *self.stakes_of[b.insight_id]]))
        if built.otherwise is not None:
            self.otherwise_of[merged.insight_id] = (built.otherwise, built.condition)
        a.resolved_by = b.resolved_by = merged.insight_id
        a.unresolved = b.unresolved = False
        self.result.insights.append(merged)
        self.emit(EV_RESOLUTION, conflict_id=c.id, accepted=True, compromise_type=res.compromise_type)

    # ------------------------------------------------------------------ 6. consensus and the decision

    async def _vote(self) -> None:
        mode = self.mode
        insights = [i for i in self.result.insights if i.resolved_by is None and i.position is not None]
        if mode.consensus == "light":
            insights = [i for i in insights if i.impact == "high"]
        if not insights:
            return
        voters = [n for n in self.mine if any(n in i.supporters for i in self.result.insights)]
        plan = [(n, [i for i in insights if n not in i.supporters]) for n in voters]
        plan = sorted([(n, items) for n, items in plan if items], key=lambda p: -len(p[1]))
        plan = plan[:max(0, min(mode.voters, self.calls_left()))]
        if not plan:
            self.notes.append(f"no votes: {'no other specialist to vote' if self.calls_left() > 0 else 'no calls left in the budget'}")
            return
        roster = self.team.roster

        async def ballot(name: str, items: list[AgentInsight]) -> list[ConsensusVote]:
            listing = "\n".join(f"{i.insight_id}: {i.recommendation} (because {i.because})" for i in items)
            task = (f"The decision: {self.window_label}\n\nYour evidence:\n" + "\n".join(self.evidence[e].text for e in self.mine[name])
                    + f"\n\nPositions to vote on:\n{listing}")
            agent = ag.voter_agent(self.team.model_for("voter"), name, roster.specialist(name).focus, [i.insight_id for i in items])
            outcome = await self.rec.step(f"vote.{name}", agent, task)
            if outcome is None or not outcome.ok:
                return []
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            seen: dict[str, ConsensusVote] = {}
            for v in outcome.output.votes:
                seen.setdefault(v.insight, ConsensusVote(insight_id=v.insight, voting_agent=name, vote=v.vote,
                                                         reasoning=v.reasoning.strip(), timestamp=stamp))
            return list(seen.values())

        for votes in await asyncio.gather(*(ballot(n, items) for n, items in plan)):
            self.result.votes += votes
        self.emit(EV_VOTES, votes=len(self.result.votes), voters=[n for n, _ in plan])

    async def _decide(self) -> None:
        r = self.result

        def work() -> Any:
            d = decide(r.insights, self.claims_of, self.options, r.conflicts, r.debates, self.evidence, self.otherwise_of)
            votes = [v.vote for v in r.votes if v.insight_id == d.insight_id]
            return render(d, self.options, self.evidence, self.cited_by, votes)

        decision = await self.rec.python("decision", "decision", work)
        for i in r.insights:
            if i.insight_id in decision.open_conflicts:
                i.unresolved = True
        if self.team.polish and decision.what and self.calls_left() >= 1 and not self.rec.stopped:
            outcome = await self.rec.step("polish", ag.polisher_agent(self.team.model_for("polisher")), decision.what)
            if outcome is not None and outcome.ok:
                why_not = polish_ok(decision.what, outcome.output.sentence, [o.label for o in self.options.values()])
                if why_not:
                    self.notes.append(f"the reworded first line was not used: {why_not}")
                else:
                    decision.what, decision.polished = outcome.output.sentence.strip(), True
        r.decision = decision
        r.answer = answer_text(decision, self.notes)
        self.emit(EV_DECISION, insight_id=decision.insight_id, what=decision.what, confidence=decision.confidence)


def coordinator_result(domain: str, specialists: list[Specialist], insights: list[AgentInsight],
                       jobs: list[tuple[str, Specialist]], taken: list[Any]) -> CoordinatorResult:
    """A coordinator's synthesis, in Python: its specialists' positions, confidence level and data quality."""
    names = {s.name for s in specialists}
    answered = {s.name for (d, s), t in zip(jobs, taken) if d == domain and t is not None}
    mine = [i for i in insights if names & set(i.supporters)]
    quality = "high" if specialists and answered == names else "medium" if answered else "low"
    confidences = [float(t[1].confidence) for (d, _), t in zip(jobs, taken) if d == domain and t is not None]
    level = round(sum(clamp_pct(c) for c in confidences) / len(confidences), 2) if confidences else 0.0
    flags = [f"{i.agent}: {i.recommendation}" for i in mine if i.impact == "high" and len(set(i.domain.split("+"))) == 1]
    return CoordinatorResult(domain=domain, insights=mine, cross_domain_flags=flags, confidence_level=level,
                             data_quality=quality, specialists=sorted(names), activated=True, reason="has data")  # type: ignore[arg-type]


__all__ = ["ROLES", "DeliberationTeam", "parse_now"]
