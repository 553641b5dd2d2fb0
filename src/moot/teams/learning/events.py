"""Event dates: which date each event of a duration question happened on.

"How many days after work on the pipeline began did the hosepipe ban start?" names two events;
the answer is the time between their dates. Offered every date of the evidence at once, the 0.5B
model took the pipeline's *end* and answered 110 days. Here Python reads the events out of the
question — two clauses ("after A did B", "between A and B"), or one span ("for how long was X in
force": the start and the end of X) — ranks the dates whose sentence shares the most words with
each clause, and the model chooses one date per event from that event's short list (an enum per
field of one schema) — unless one date leads its list clearly, which needs no choice. Datelines
("Varnby, 20 June 2023.") date an article, not an event, and are never offered. Python then
computes the time between them (:func:`compute.evaluate`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from moot.memory.facts import match_terms

MAX_PER_EVENT = 4

_UNIT = r"(days|weeks|months|years)"
_AUX = r"(?:did|does|do|was|were|is|are|had|has|have|will|would)"
_TWO = (
    re.compile(rf"\bhow many {_UNIT} (after|before) (?P<a>.+) {_AUX} (?P<b>.+?)\W*$", re.I),
    re.compile(rf"\bhow (long) (after|before) (?P<a>.+) {_AUX} (?P<b>.+?)\W*$", re.I),
    re.compile(rf"\bhow many {_UNIT} (?:passed |went by |elapsed |were there )?(between) (?P<a>.+?) and (?P<b>.+?)\W*$", re.I),
    re.compile(rf"\bhow many {_UNIT} (?:passed |went by |elapsed )?(from) (?P<a>.+?) (?:to|until|till) (?P<b>.+?)\W*$", re.I),
)
_SPAN = (
    re.compile(rf"\bfor how (?:many {_UNIT}|(long)) {_AUX} (?P<x>.+?)\W*$", re.I),
    re.compile(rf"\bhow (?:many {_UNIT}|(long)) {_AUX} (?P<x>.+?) (?:last|in force|in place|closed|open|running|run)\W*$", re.I),
)
START_WORDS = match_terms("began begin start started starts put in place introduced imposed opened opens launched founded "
                          "came into force from since")
END_WORDS = match_terms("ended end ends finished finish lifted lift closed closes removed stopped until completed over")


@dataclass(frozen=True)
class Events:
    """The events a duration question names, and the unit it asks in."""

    unit: str
    """``days``, ``weeks``, ``months``, ``years`` (``long`` → days)."""
    clauses: tuple[str, str]
    """The two events, in the question's order; for a span, the same clause twice."""
    span: bool = False
    """True for "for how long was X …": the first is X's start, the second its end."""


def read_events(question: str) -> Events | None:
    """The two events of a duration question, or None."""
    text = " ".join(question.split())
    for pattern in _TWO:
        if match := pattern.search(text):
            unit = match.group(1).lower()
            return Events("days" if unit == "long" else unit, (match["a"].strip(), match["b"].strip()))
    for pattern in _SPAN:
        if match := pattern.search(text):
            unit = (match.group(1) or "days").lower()
            clause = match["x"].strip()
            return Events("days" if unit == "long" else unit, (clause, clause), span=True)
    return None


def cue_for(clause: str) -> frozenset[str]:
    """The start or end words a clause calls for: "the hosepipe ban start" is matched by "put …
    in place", "the pipeline was finished" by "completed"."""
    terms = match_terms(clause)
    if terms & END_WORDS and not terms & START_WORDS:
        return END_WORDS
    if terms & START_WORDS:
        return START_WORDS
    return frozenset()


def rank(clause: str, dated: Sequence[Any], *, cue: frozenset[str] = frozenset(), years: bool = False) -> list[Any]:
    """The dated quantities whose sentence best matches ``clause`` (and the start or end words the
    event calls for), best first, as ``(score, quantity)``, at most :data:`MAX_PER_EVENT`; none
    that shares no word. For a question in years, a bare year ("founded in 2019") counts one more."""
    wanted = match_terms(clause)
    scored = []
    for position, quantity in enumerate(dated):
        terms = match_terms(quantity.context)
        score = (len(wanted & terms) + len(cue & terms)) * 2 + (1 if years and re.fullmatch(r"\d{4}", quantity.text) else 0)
        if wanted & terms:
            scored.append((score, position, quantity))
    scored.sort(key=lambda item: (-item[0], item[1]))
    unique: dict[Any, tuple[int, Any]] = {}
    for score, _, quantity in scored:
        unique.setdefault(quantity.date, (score, quantity))
    return list(unique.values())[:MAX_PER_EVENT]


def settled(ranked: Sequence[tuple[int, Any]]) -> list[Any]:
    """The candidates the model must choose among: the leader alone when it is ahead by two or more
    (a clear match needs no choice), else all of them."""
    if len(ranked) == 1 or (len(ranked) > 1 and ranked[0][0] >= ranked[1][0] + 2):
        return [ranked[0][1]]
    return [quantity for _, quantity in ranked]


def event_descriptions(events: Events) -> tuple[str, str]:
    """What each of the two dates is, as the schema's field descriptions say it to the model."""
    if events.span:
        return f"the date {events.clauses[0]} started", f"the date {events.clauses[0]} ended"
    return f"the date when {events.clauses[0]}", f"the date when {events.clauses[1]}"


def operation_for(events: Events) -> str:
    return {"days": "days_between", "weeks": "days_between", "months": "months_between",
            "years": "years_between"}[events.unit]


async def between_events(agent: Any, task: str, events: Events, quantities: Sequence[Any], *, budget: Any,
                         bus: Any, run_id: str | None, task_id: str | None) -> Any:
    """The ComputeAgent's draft for a duration between two events: one date per event, from that
    event's own short list (``agent``'s model chooses only where no date leads clearly); None
    when either event matches no date or the choice failed."""
    from moot.runtime import AgentResult, load_prompt
    from moot.teams.learning.choosing import choose_each
    from moot.teams.learning.compute import ComputeError, evaluate

    dated = [q for q in quantities if q.date is not None and q.origin != "question"
             and (events.unit == "years" or not re.fullmatch(r"\d{4}", q.text))]
    years = events.unit == "years"
    first = settled(rank(events.clauses[0], dated, years=years,
                         cue=START_WORDS if events.span else cue_for(events.clauses[0])))
    second = settled(rank(events.clauses[1], dated, years=years,
                          cue=END_WORDS if events.span else cue_for(events.clauses[1])))
    if not first or not second:
        return None
    what_first, what_second = event_descriptions(events)
    choice, usage, turns = await choose_each(agent, "Dates", task, {
        "first_date": (first, what_first), "second_date": (second, what_second),
    }, prompt=load_prompt("events", __package__), name="EventDates", budget=budget, bus=bus, run_id=run_id,
        task_id=task_id)
    if choice is None:
        return None
    by_id = {q.id: q for q in quantities}
    operands = [by_id[choice["first_date"]], by_id[choice["second_date"]]]
    output: dict[str, Any] = {"draft": "", "computation": None, "choice": choice,
                              "narrowed": f"events: {' / '.join(dict.fromkeys(events.clauses))}"}
    detail = None
    try:
        computation = evaluate(operation_for(events), operands)
        output.update(draft=computation.sentence(), computation=computation.model_dump())
    except ComputeError as exc:
        detail = f"no value computed: {exc}"
    return AgentResult(agent=agent.name, output=output, text=output["draft"], usage=usage, transcript=(),
                       stop_reason="completed", turns=turns, detail=detail)


__all__ = ["END_WORDS", "START_WORDS", "Events", "between_events", "cue_for", "event_descriptions", "operation_for", "rank", "read_events",
           "settled"]
