"""The debate chamber: four rounds over one conflict, ending in a typed compromise or an open conflict.

1. **position** — the two positions as their specialists took them (no call);
2. **evidence** — each side's evidence, computed from the data by Python, strongest first (no call);
3. **compromise** — the moderator picks a compromise type from the design's set and fills its typed
   slots (which side it starts from, which option, which adjustment, which free slot, which
   condition); Python builds the plan from them (:func:`build`) and checks that it keeps each
   side's strongest evidence (:func:`check`): a side's position keeps what it stands for — the
   option it wants still happens, the option it wants reduced is shortened, moved or skipped.
   A compromise that drops a side is refused here, and the conflict stays open with the reason;
4. **validation** — each side votes −2..+2 on the compromise; it is accepted when both vote +1 or
   more, and its confidence is the sides' mean confidence adjusted by the votes (the design's rule).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from moot.teams.deliberation import agents as ag
from moot.teams.deliberation.consensus import adjusted_confidence, clamp_pct, consensus_score
from moot.teams.deliberation.evidence import with_unit
from moot.teams.deliberation.memory import Precedent, allowed_compromise_types
from moot.teams.deliberation.models import (
    AgentInsight,
    Conflict,
    Debate,
    DebateResolution,
    DebateRound,
    Evidence,
    EvidenceCheck,
)
from moot.teams.deliberation.plan import (
    Claims,
    Option,
    PlanItem,
    Position,
    TimeWindow,
    fitting_slots,
    plan_items,
    shortened,
    split_times,
)

ACCEPT_FROM = 1
"""A side accepts a compromise with a vote of +1 (agree) or +2; 0 (neutral) does not accept it."""


# --------------------------------------------------------------------------- what a side stands for


def stakes(position: Position) -> list[tuple[str, str]]:
    """What a position stands for: ``("happens", O)`` — the option is done in some form;
    ``("gives way", O)`` — it is not done in full at its planned time."""
    if position.kind == "do":
        return [("happens", position.option)]
    if position.kind == "skip":
        return [("gives way", position.option)]
    if position.kind == "split" and position.then:
        return [("happens", position.option), ("happens", position.then)]
    return [("happens", position.option), ("gives way", position.option)]


def holds(stake: tuple[str, str], items: list[PlanItem]) -> bool:
    kind, oid = stake
    item = next(i for i in items if i.option == oid)
    return item.state != "skipped" if kind == "happens" else item.state != "as planned"


def conditions(a: AgentInsight, b: AgentInsight, evidence: dict[str, Evidence]) -> dict[str, Evidence]:
    """Conditions a conditional compromise may use: each side's metrics against their weekly average."""
    out: dict[str, Evidence] = {}
    for insight in (a, b):
        for eid in insight.evidence_ids:
            e = evidence.get(eid)
            if e is not None and e.kind == "metric" and e.baseline is not None:
                label = f"{e.label} at or above its weekly average of {with_unit(e.shown_baseline, e.unit)}"
                out.setdefault(label, e)
    return out


@dataclass
class Side:
    """One side of a debate: a position (or an earlier compromise), its calendar claims and what it stands for."""

    insight: AgentInsight
    claims: Claims
    stakes: list[tuple[str, str]]


# --------------------------------------------------------------------------- building a compromise


@dataclass
class Built:
    """A compromise as Python built it from the moderator's slots."""

    claims: Claims = field(default_factory=dict)
    otherwise: Claims | None = None
    condition: str = ""
    text: str = ""
    filled: list[str] = field(default_factory=list)
    """Slots Python had to fill or ignore (said in the debate record)."""
    error: str = ""


def _move(o: Option, slot: TimeWindow | None, free: list[TimeWindow], built: Built) -> TimeWindow | None:
    if slot is not None:
        start = slot.start + timedelta(minutes=(-slot.start.minute) % 15)
        moved = TimeWindow(start=start, end=start + timedelta(minutes=o.window.minutes))
        if moved.end <= slot.end and not moved.overlaps(o.window):
            return moved
    fits = fitting_slots(o, free, limit=1)
    if fits:
        built.filled.append(f"moved {o.name()} to the first free time that fits it ({fits[0].label()})")
        return fits[0]
    return None


def build(slots: dict[str, str], a: Side, b: Side, options: dict[str, Option], free: dict[str, TimeWindow],
          conditions_by_label: dict[str, Evidence]) -> Built:
    """The plan a compromise type and its slots make (see the module docstring); ``error`` when they make none."""
    kind = slots["compromise_type"]
    ca, cb = a.claims, b.claims
    involved = list(dict.fromkeys([*ca, *cb]))
    by_label = {o.label: oid for oid, o in options.items()}
    named = by_label.get(slots.get("option", ""), involved[0])
    if named not in involved:
        named = involved[0]
    side, other = (a, b) if slots.get("side", "A") == "A" else (b, a)
    slot = free.get(slots.get("slot", ag.NONE))
    free_list = list(free.values())
    out = Built()
    if kind == "full_merge":
        if len(involved) < 2:
            return Built(error="full_merge keeps two options in full, and this conflict is about one")
        claims: Claims = {oid: options[oid].window for oid in involved}
        moved = _move(options[named], slot, free_list, out)
        if moved is None:
            return Built(error=f"full_merge needs free time for {options[named].name()}, and there is none that fits")
        claims[named] = moved
        out.claims = claims
    elif kind == "time_split":
        if len(involved) >= 2:
            second = next(oid for oid in involved if oid != named)
            parts = split_times(options[named], options[second])
            if parts is None:
                return Built(error="time_split shares a contested time, and these options do not overlap")
            out.claims = {named: parts[0], second: parts[1]}
        elif (rival := next((oid for oid, o in options.items() if oid != named and o.window.overlaps(options[named].window)),
                            None)) is not None and (parts := split_times(options[named], options[rival])) is not None:
            # one option in dispute, but another wants the same time: share the time with it
            out.claims = {named: parts[0], rival: parts[1]}
            involved = [named, rival]
        else:
            short = shortened(options[named])
            if short is None:
                return Built(error=f"{options[named].name()} is too short to split")
            out.claims = {named: short}
    elif kind == "priority_override":
        base = dict(side.claims)
        taken = [w for w in base.values() if w is not None]
        adjustment = slots.get("adjustment", ag.NONE)
        for oid in involved:
            if oid in base:
                continue
            o = options[oid]
            if not any(o.window.overlaps(w) for w in taken):
                base[oid] = o.window
            elif adjustment == "move":
                base[oid] = _move(o, slot, free_list, out)
            elif adjustment == "shorten":
                rest = _outside(o.window, taken)
                base[oid] = rest
                if rest is None:
                    out.filled.append(f"no time of {o.name()} is left outside the other side's, so it is skipped")
            else:
                base[oid] = None
        if adjustment != ag.NONE and named in side.claims:
            out.filled.append(f"the adjustment ({adjustment}) names the winning side's own option and was left out")
        out.claims = base
    elif kind == "conditional":
        label = slots.get("condition", ag.NONE)
        if label not in conditions_by_label:
            if not conditions_by_label:
                return Built(error="conditional needs a condition from a metric, and neither side cites one")
            label = next(iter(conditions_by_label))
            out.filled.append(f"no condition was chosen: took '{label}'")
        out.claims, out.otherwise, out.condition = dict(side.claims), dict(other.claims), label
    else:
        return Built(error=f"unknown compromise type {kind!r}")
    for claims in (out.claims, out.otherwise or {}):
        timed = [(oid, w) for oid, w in claims.items() if w is not None]
        for i, (o1, w1) in enumerate(timed):
            for o2, w2 in timed[i + 1:]:
                if w1.overlaps(w2):
                    return Built(error=f"{kind} leaves {options[o1].name()} and {options[o2].name()} at the same time")
    out.text = render(kind, out, options, side, options_involved=involved)
    return out


def _outside(window: TimeWindow, taken: list[TimeWindow]) -> TimeWindow | None:
    """The longest part of ``window`` that no time in ``taken`` overlaps (at least 15 minutes)."""
    cuts = sorted([window.start, window.end, *[t for w in taken for t in (w.start, w.end) if window.start < t < window.end]])
    best = None
    for s, e in zip(cuts, cuts[1:]):
        part = TimeWindow(start=s, end=e)
        if part.minutes >= 15 and not any(part.overlaps(w) for w in taken) and (best is None or part.minutes > best.minutes):
            best = part
    return best


def render(kind: str, built: Built, options: dict[str, Option], side: Side, options_involved: list[str]) -> str:
    """The compromise in words, from its plan (Python's words, never the moderator's)."""
    def items(claims: Claims) -> str:
        shown = [i for i in plan_items(claims, options) if i.option in options_involved]
        return "; ".join(i.describe() for i in shown)

    if kind == "conditional":
        return f"conditional: if {built.condition}: {items(built.claims)}; otherwise: {items(built.otherwise or {})}"
    if kind == "priority_override":
        return f"priority to '{side.insight.recommendation}': {items(built.claims)}"
    return f"{kind.replace('_', ' ')}: {items(built.claims)}"


def check(built: Built, a: Side, b: Side, options: dict[str, Option], evidence: dict[str, Evidence]) -> list[EvidenceCheck]:
    """Whether the compromise keeps each side's strongest evidence: what the side's position stands
    for holds in the plan (for a conditional: in one of its two branches)."""
    branches = [plan_items(built.claims, options)]
    if built.otherwise is not None:
        branches.append(plan_items(built.otherwise, options))
    out = []
    for name, sd in (("agent_a", a), ("agent_b", b)):
        insight, wanted = sd.insight, sd.stakes
        strongest = evidence[insight.evidence_ids[0]].text if insight.evidence_ids else "(no evidence)"
        ok = next((items for items in branches if all(holds(s, items) for s in wanted)), None)
        if ok is not None:
            how = "keeps " + "; ".join(i.outcome() for i in ok if i.option in {o for _, o in wanted})
        else:
            lost = [(k, o) for k, o in wanted if not holds((k, o), branches[0])]
            how = "drops: " + "; ".join(f"{options[o].name()} is skipped" if k == "happens" else f"{options[o].name()} stays as planned"
                                        for k, o in lost)
        out.append(EvidenceCheck(side=name, strongest_evidence=strongest, kept=ok is not None, how=how))
    return out


# --------------------------------------------------------------------------- the four rounds


class Chamber(Protocol):
    """What a debate needs from the running deliberation."""

    options: dict[str, Option]
    evidence: dict[str, Evidence]
    free: list[TimeWindow]
    window_label: str

    async def step(self, task_id: str, agent: Any, task: str, depends_on: list[str] | None = None) -> Any: ...

    def model(self, role: str) -> Any: ...

    def round_done(self, conflict_id: str, number: int, kind: str) -> None: ...


def voice(insight: AgentInsight) -> str:
    """Who speaks for a side in round 4: its first supporter (a compromise's too, never the moderator)."""
    return insight.supporters[0] if insight.supporters else insight.agent


def side_text(insight: AgentInsight, evidence: dict[str, Evidence]) -> str:
    lines = [f"Position: {insight.recommendation} (taken by {len(insight.supporters)} adviser(s))", "Evidence, strongest first:"]
    lines += [f"- {evidence[e].text}" for e in insight.evidence_ids if e in evidence] or ["- (none)"]
    return "\n".join(lines)


async def run_debate(chamber: Chamber, conflict: Conflict, sa: Side, sb: Side,
                     precedents: list[Precedent]) -> tuple[Debate, Built | None]:
    """The four rounds; the built compromise when both sides accepted it, else ``None``."""
    a, b = sa.insight, sb.insight
    ev, options = chamber.evidence, chamber.options
    debate = Debate(conflict_id=conflict.id, resolution=DebateResolution(
        conflict_id=conflict.id, original_positions={"agent_a": a.recommendation, "agent_b": b.recommendation}),
        memory_used=[f"{p.decision}: {p.resolution} ({p.compromise_type})" for p in precedents])
    debate.rounds.append(DebateRound(round_number=1, round_type="position",
                                     agent_a_response=f"{a.recommendation} ({', '.join(a.supporters)})",
                                     agent_b_response=f"{b.recommendation} ({', '.join(b.supporters)})",
                                     moderator_note=f"{conflict.type.replace('_', ' ')} ({conflict.severity}): {conflict.note}"))
    chamber.round_done(conflict.id, 1, "position")
    debate.rounds.append(DebateRound(round_number=2, round_type="evidence",
                                     agent_a_response="; ".join(ev[e].text for e in a.evidence_ids if e in ev),
                                     agent_b_response="; ".join(ev[e].text for e in b.evidence_ids if e in ev),
                                     moderator_note="computed from the data by Python, strongest first"))
    chamber.round_done(conflict.id, 2, "evidence")

    # round 3: the moderator's typed compromise, built and checked by Python
    types = allowed_compromise_types(precedents)
    conds = conditions(a, b, ev)
    if not conds:
        types = [t for t in types if t != "conditional"] or types
    free = {w.label(): w for w in chamber.free[:6]}
    involved = list(dict.fromkeys([*sa.claims, *sb.claims]))
    memory_text = ""
    if precedents:
        memory_text = "\n\nWhat this person decided about similar conflicts before:\n" + "\n".join(
            f"- {p.decision}: {p.resolution} ({p.compromise_type})" for p in precedents)
    task = (f"The decision: {chamber.window_label}\nOptions:\n"
            + "\n".join(f"- {options[o].name()}: {options[o].window.label()}" for o in involved)
            + f"\n\nSide A\n{side_text(a, ev)}\n\nSide B\n{side_text(b, ev)}\n\nFree time: {', '.join(free) or 'none'}"
            + (f"\nConditions: {'; '.join(conds)}" if conds else "") + memory_text)
    agent = ag.moderator_agent(chamber.model("moderator"), types, [options[o].label for o in involved], list(free), list(conds))
    rm = await chamber.step(f"{conflict.id}.r3", agent, task)
    if not (rm and rm.ok):
        return unresolved(debate, "round 3 (compromise)", [rm]), None
    slots = {k: str(v) for k, v in rm.output.model_dump().items()}
    built = build(slots, sa, sb, options, free, conds)
    res = debate.resolution
    res.compromise_type, res.slots = slots["compromise_type"], slots  # type: ignore[assignment]
    if built.error:
        debate.rounds.append(DebateRound(round_number=3, round_type="compromise", moderator_note=f"refused: {built.error}"))
        debate.reason = f"the moderator's {slots['compromise_type']} could not be built: {built.error}"
        chamber.round_done(conflict.id, 3, "compromise")
        return debate, None
    res.resolution, res.condition = built.text, built.condition
    res.plan = plan_items(built.claims, options)
    res.otherwise = plan_items(built.otherwise, options) if built.otherwise is not None else []
    res.checks = check(built, sa, sb, options, ev)
    res.reasoning = "; ".join(built.filled)
    winner = a if slots.get("side") == "A" else b
    res.winning_perspective = voice(winner) if slots["compromise_type"] == "priority_override" else None
    note = built.text + (f" [{res.reasoning}]" if res.reasoning else "")
    debate.rounds.append(DebateRound(round_number=3, round_type="compromise", moderator_note=note,
                                     agent_a_response=res.checks[0].how, agent_b_response=res.checks[1].how))
    chamber.round_done(conflict.id, 3, "compromise")
    dropped = [c for c in res.checks if not c.kept]
    if dropped:
        who = {"agent_a": a, "agent_b": b}
        debate.reason = "; ".join(f"the compromise drops {voice(who[c.side])}'s strongest evidence (“{c.strongest_evidence}”): "
                                  f"{c.how.removeprefix('drops: ')}" for c in dropped)
        return debate, None

    # round 4: each side votes on it
    def verdict_task(me: AgentInsight, mine: EvidenceCheck) -> str:
        return (f"{side_text(me, ev)}\n\nThe moderator's compromise: {built.text}\n"
                f"What it does with your position: {mine.how}")

    va, vb = await asyncio.gather(
        chamber.step(f"{conflict.id}.r4.a", ag.validator_agent(chamber.model("validator"), voice(a)), verdict_task(a, res.checks[0]),
                     depends_on=[f"{conflict.id}.r3"]),
        chamber.step(f"{conflict.id}.r4.b", ag.validator_agent(chamber.model("validator"), voice(b)), verdict_task(b, res.checks[1]),
                     depends_on=[f"{conflict.id}.r3"]))
    if not (va and va.ok and vb and vb.ok):
        return unresolved(debate, "round 4 (validation)", [va, vb]), None
    votes = {"agent_a": int(va.output.vote), "agent_b": int(vb.output.vote)}
    res.verdicts = {"agent_a": {"accept": votes["agent_a"] >= ACCEPT_FROM, "vote": votes["agent_a"], "reason": va.output.reason},
                    "agent_b": {"accept": votes["agent_b"] >= ACCEPT_FROM, "vote": votes["agent_b"], "reason": vb.output.reason}}
    debate.rounds.append(DebateRound(
        round_number=4, round_type="validation",
        agent_a_response=f"{'accept' if votes['agent_a'] >= ACCEPT_FROM else 'reject'} ({votes['agent_a']:+d}): {va.output.reason}",
        agent_b_response=f"{'accept' if votes['agent_b'] >= ACCEPT_FROM else 'reject'} ({votes['agent_b']:+d}): {vb.output.reason}"))
    chamber.round_done(conflict.id, 4, "validation")
    base = clamp_pct((a.confidence + b.confidence) / 2)
    res.confidence_in_resolution = adjusted_confidence(base, consensus_score(votes.values()))
    if min(votes.values()) < ACCEPT_FROM:
        who = [voice(i) for k, i in (("agent_a", a), ("agent_b", b)) if votes[k] < ACCEPT_FROM]
        debate.reason = f"{' and '.join(who)} rejected the compromise (vote " + ", ".join(
            f"{votes[k]:+d}" for k in ("agent_a", "agent_b") if votes[k] < ACCEPT_FROM) + ")"
        return debate, None
    res.accepted = True
    debate.status = "resolved"
    return debate, built


def unresolved(debate: Debate, where: str, outcomes: list[Any]) -> Debate:
    problems = []
    for o in outcomes:
        if o is None:
            problems.append("the budget stopped the debate")
        elif o.stop_reason.startswith("budget:"):
            problems.append(f"the budget stopped {o.agent}'s reply ({o.detail or o.stop_reason})")
        elif not o.ok:
            problems.append(f"{o.agent}'s reply was unusable ({o.detail or o.stop_reason})")
    debate.reason = f"unresolved in {where}: " + "; ".join(dict.fromkeys(problems))
    return debate


__all__ = ["ACCEPT_FROM", "Built", "Chamber", "Side", "build", "check", "conditions", "holds", "render", "run_debate", "stakes",
           "unresolved"]
