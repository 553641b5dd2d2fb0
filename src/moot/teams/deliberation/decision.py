"""The decision and the answer, both made by Python.

**Deciding.** The candidates are the positions still standing (an accepted compromise stands for
the two it resolved). Each weighs impact × adjusted confidence × its number of supporters
(:func:`~moot.teams.deliberation.consensus.rank_score`); the decision rests on the candidate whose
*coalition* — itself and every candidate whose calendar claims are compatible with it — weighs the
most, and folds in the compatible candidates, heaviest first. So "skip the run" and "rehearse at
06:30" count together against "run at 06:30".

**Answering.** The answer is rendered from the decision, in this order: what to do; why, from the
computed evidence and who cited it; what changes in the calendar; the confidence; what would change
the advice (a metric crossing its weekly average, the strongest position not taken, a conflict
still open). The model may reword the first line (:func:`polish_ok` checks it keeps every name,
time and number and adds none); it writes nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable

from moot.teams.deliberation.consensus import rank_score
from moot.teams.deliberation.evidence import with_unit
from moot.teams.deliberation.models import AgentInsight, Conflict, Debate, Decision, Evidence
from moot.teams.deliberation.plan import Claims, Option, PlanItem, clash, merge_claims, plan_items
from moot.text import find_quantities
from moot.text.clock import find_clock_times


def decide(candidates: list[AgentInsight], claims_of: dict[str, Claims], options: dict[str, Option],
           conflicts: list[Conflict], debates: list[Debate], evidence: dict[str, Evidence],
           otherwise_of: dict[str, tuple[Claims, str]] | None = None) -> Decision:
    """The decision from the standing positions (see the module docstring)."""
    standing = [c for c in candidates if c.resolved_by is None and c.insight_id in claims_of]
    if not standing:
        return Decision()
    weight = {c.insight_id: rank_score(c) for c in standing}

    def compatible(x: AgentInsight, y: AgentInsight) -> bool:
        return clash(claims_of[x.insight_id], claims_of[y.insight_id]) is None

    coalition = {c.insight_id: weight[c.insight_id] + sum(weight[o.insight_id] for o in standing if o is not c and compatible(c, o))
                 for c in standing}
    anchor = max(standing, key=lambda c: (coalition[c.insight_id], weight[c.insight_id]))
    taken, claims = [anchor], dict(claims_of[anchor.insight_id])
    for c in sorted(standing, key=lambda c: -weight[c.insight_id]):
        if c is anchor:
            continue
        merged = merge_claims(claims, claims_of[c.insight_id])
        if merged is not None:
            claims, taken = merged, [*taken, c]
    d = Decision(insight_id=anchor.insight_id, plan=plan_items(claims, options),
                 supporters=list(dict.fromkeys(s for c in taken for s in c.supporters)),
                 also=[c.insight_id for c in taken[1:]], confidence=anchor.final_confidence())
    if anchor.resolution_of:
        debate = next((x for x in debates if x.conflict_id == anchor.resolution_of), None)
        if debate is not None:
            d.compromise_type = debate.resolution.compromise_type
    if otherwise_of and anchor.insight_id in otherwise_of:
        other, d.condition = otherwise_of[anchor.insight_id]
        d.otherwise = plan_items({**claims, **other}, options)
    d.evidence_ids = list(dict.fromkeys(e for c in taken for e in c.evidence_ids))[:4]
    ids = {c.insight_id for c in taken}
    d.open_conflicts = [c.id for c in conflicts if {c.agent_a.insight_id, c.agent_b.insight_id} & ids
                        and not _settled(c, debates, candidates)]
    left_out = [c for c in standing if c not in taken]
    d.would_change = would_change(d, evidence, max(left_out, key=lambda c: weight[c.insight_id]) if left_out else None,
                                  conflicts, debates)
    return d


def _settled(conflict: Conflict, debates: list[Debate], insights: list[AgentInsight]) -> bool:
    debate = next((x for x in debates if x.conflict_id == conflict.id), None)
    if debate is not None and debate.status == "resolved":
        return True
    by_id = {i.insight_id: i for i in insights}
    a, b = by_id.get(conflict.agent_a.insight_id), by_id.get(conflict.agent_b.insight_id)
    return bool(a and b and a.resolved_by and a.resolved_by == b.resolved_by)


def would_change(d: Decision, evidence: dict[str, Evidence], runner_up: AgentInsight | None,
                 conflicts: list[Conflict], debates: list[Debate]) -> list[str]:
    """What in the data would change the advice."""
    out = []
    for eid in d.evidence_ids:
        e = evidence.get(eid)
        if e is None or e.kind != "metric" or e.baseline is None or e.value is None:
            continue
        average = with_unit(e.shown_baseline, e.unit)
        out.append(f"{e.label} fell below its weekly average of {average}" if e.value >= e.baseline
                   else f"{e.label} were back at or above its weekly average of {average}")
    if d.condition:
        out.insert(0, f"the condition turns out otherwise ({d.condition})")
    if runner_up is not None:
        out.append(f"you weigh {', '.join(runner_up.supporters)}'s position higher: {runner_up.recommendation}"
                   + (f" (because {runner_up.because})" if runner_up.because else ""))
    for cid in d.open_conflicts:
        debate = next((x for x in debates if x.conflict_id == cid), None)
        why = debate.reason if debate is not None else "not debated"
        out.append(f"conflict {cid} were settled the other way (still open: {why})")
    return out[:5]


# --------------------------------------------------------------------------- the answer


def _what(items: Iterable[PlanItem]) -> str:
    items = list(items)
    done = [i for i in items if i.state != "skipped"]
    skipped = [i for i in items if i.state == "skipped"]
    parts = [i.describe() for i in sorted(done, key=lambda i: i.at.start if i.at else i.option)]
    parts += [i.describe() for i in skipped]
    text = "; ".join(parts) or "nothing of the options"
    return text[0].upper() + text[1:]


def _calendar(items: list[PlanItem], options: dict[str, Option]) -> str:
    changes = []
    for i in items:
        o = options[i.option]
        title = f"'{o.event}'" if o.event else f"'{o.label}'"
        planned = i.planned.label() if i.planned else ""
        if i.state == "as planned":
            if not o.event:
                changes.append(f"add {title} {i.at.label() if i.at else ''}".strip())
        elif i.state == "skipped":
            if o.event:
                changes.append(f"remove {title} {planned}")
        elif o.event and i.at is not None:
            changes.append(f"{title} {planned} → {i.at.label()}")
        elif i.at is not None:
            changes.append(f"add {title} {i.at.label()}")
    return "; ".join(changes) or "no change"


def render(d: Decision, options: dict[str, Option], evidence: dict[str, Evidence], cited_by: dict[str, list[str]],
           votes: list[int]) -> Decision:
    """Fill the decision's four parts (what, why, calendar, confidence) from its typed content."""
    if d.condition:
        d.what = (f"If {d.condition}: {_what(d.plan)[0].lower() + _what(d.plan)[1:]}. "
                  f"Otherwise: {_what(d.otherwise)[0].lower() + _what(d.otherwise)[1:]}.")
    else:
        d.what = _what(d.plan) + "."
    why = [f"{evidence[e].text} ({', '.join(cited_by.get(e, []))})" if cited_by.get(e) else evidence[e].text
           for e in d.evidence_ids if e in evidence]
    d.why = "; ".join(why) or "no evidence was cited"
    d.calendar = _calendar(d.plan, options)
    if d.condition:
        d.calendar += f" (otherwise: {_calendar(d.otherwise, options)})"
    tally = f"after {len(votes)} vote(s): {', '.join(f'{v:+d}' for v in votes)}" if votes else "no votes"
    d.confidence_line = f"{d.confidence:.0f} % ({tally}; taken by {', '.join(d.supporters)})"
    return d


def answer_text(d: Decision, notes: list[str]) -> str:
    """The decision first: what, why, calendar, confidence, what would change it; then notes."""
    lines = [d.what, f"Why: {d.why}", f"Calendar: {d.calendar}", f"Confidence: {d.confidence_line}"]
    if d.would_change:
        lines.append("It would change if " + "; or if ".join(d.would_change) + ".")
    lines += [f"Note: {n}" for n in notes]
    return "\n".join(lines)


def polish_ok(original: str, polished: str, labels: list[str]) -> str:
    """Why a reworded first line is refused ("" when it keeps every number, time and option name and adds none)."""
    if not polished.strip():
        return "it is empty"
    if len(polished) > 2 * len(original) + 40:
        return "it is much longer than the sentence"

    def numbers(text: str) -> list[float]:
        return sorted(q.value for q in find_quantities(text))

    def times(text: str) -> list[tuple[int, int]]:
        return sorted((c.hour, c.minute) for c in find_clock_times(text))

    if numbers(original) != numbers(polished):
        return "its numbers differ from the sentence's"
    if times(original) != times(polished):
        return "its times differ from the sentence's"
    missing = [label for label in labels if label.lower() in original.lower() and label.lower() not in polished.lower()]
    if missing:
        return f"it leaves out {missing[0]!r}"
    return ""


__all__ = ["answer_text", "decide", "polish_ok", "render", "would_change"]
