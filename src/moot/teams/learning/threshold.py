"""Capacity against demand: "would the station have kept up?" answered by a comparison in Python.

A what-if question of the form "had both pumps been working, would the street have flooded?" turns
on one comparison — what could be handled (800 litres a second) against what came (700) — and a
small model gets the comparison, or its direction, wrong. Here Python ranks the amounts that
share a unit for each role — capacity by its own words ("can move", "with both pumps running") and
the question's scenario, demand by "flowed in", "peak" — and the model chooses only where a role
has no clear leader (an enum per role; on L10 it swapped the two when offered every amount for
both). Python compares them, and the question's own outcome word decides what "yes" means: for a failure
("flood", "run out", "overflow") yes means demand exceeded capacity; for a success ("keep up",
"enough", "prevent the flood") yes means it did not. A question with no such word (whether a
backup "protects" against a shared cause) is not a comparison and gets none.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from moot.memory.facts import match_terms

_HYPOTHETICAL = re.compile(r"\b(?:if|had|suppose|imagine|what if)\b", re.I)
_YES_NO = re.compile(r"\b(?:would|could|did|does|do|was|were|is|are)\b[^?]*\?", re.I)
FAILURE = re.compile(r"\b(?:flood(?:ed|s|ing)?|overflow(?:ed|s)?|run(?:s)? out|ran out|fall(?:s)? short|fell short|"
                     r"spill(?:ed)? over|run(?:s)? dry|ran dry)\b", re.I)
SUCCESS = re.compile(r"\b(?:kept up|keep up|enough|sufficient|cope[d]?|hold enough)\b", re.I)
AVERT = re.compile(r"\b(?:prevent(?:ed)?|stop(?:ped)?|avoid(?:ed)?|protect(?:ed)? against)\b", re.I)
"""Turns a failure into a success ("would pump A have prevented the flood"), and only then counts."""
MAX_OPTIONS = 8


@dataclass(frozen=True)
class Threshold:
    """A yes/no what-if question whose answer is a comparison, and what "yes" means in it."""

    yes_means_enough: bool
    """True for "would it have kept up / prevented / been enough"; False for "would it have flooded"."""


def read_threshold(question: str) -> Threshold | None:
    """A yes/no hypothetical about an outcome that capacity against demand decides, or None."""
    text = " ".join(question.split())
    if not (_HYPOTHETICAL.search(text) and _YES_NO.search(text)) or re.search(r"\b(?:what|when|which|who|how|where|why)\b",
                                                                             text, re.I):
        return None  # "at what time would the alarm have sounded" or "how many sandbags" asks for a value
    failure, success, avert = FAILURE.search(text), SUCCESS.search(text), AVERT.search(text)
    if failure and avert and avert.start() < failure.start():
        return Threshold(yes_means_enough=True)  # "would pump A alone have prevented the flood"
    if failure and not success:
        return Threshold(yes_means_enough=False)
    if success and not failure:
        return Threshold(yes_means_enough=True)
    return None


def same_unit_amounts(quantities: Sequence[Any], question: str = "") -> list[Any]:
    """The amounts of the one unit that a capacity and a demand are both measured in: the unit
    whose amounts fit both roles best (litres that "can move" and litres that "flowed in", not
    houses)."""
    amounts = [q for q in quantities if q.value is not None and q.unit]
    units = list(dict.fromkeys(q.unit.lower() for q in amounts))
    if not units:
        return []

    def fit(unit: str) -> tuple[int, int]:
        mine = [q for q in amounts if q.unit.lower() == unit]
        capacity = max(_role_scores(q, question, CAPACITY_WORDS, scenario_counts=False) for q in mine)
        demand = max(_role_scores(q, question, DEMAND_WORDS, scenario_counts=False) for q in mine)
        return (min(capacity, demand), len(mine))

    unit = max(units, key=fit)
    # A bare number of the same value beside them is the same amount said again ("… could remove
    # only 400."): it keeps its own words, which may name its role better.
    values = {q.value for q in amounts if q.unit.lower() == unit}
    amounts += [dataclasses.replace(q, unit=unit) for q in quantities
                if q.value is not None and not q.unit and q.value in values and q.origin != "question"]
    seen: set[tuple[float, bool, str]] = set()
    kept = []
    for q in amounts:
        # The question's 400 (a demand) is not the sources' 400; one sentence's repeat is one amount.
        key = (q.value, q.origin == "question", _window(q.context, q.text))
        if q.unit.lower() == unit and key not in seen:
            seen.add(key)
            kept.append(q)
    return kept[: MAX_OPTIONS * 2]


CAPACITY_WORDS = match_terms("can could move moves remove removes handle handles hold holds carry carries capacity lift "
                             "lifts")
DEMAND_WORDS = match_terms("inflow inflows flowed flow flows into came come need needed needs demand peak peaked rose "
                           "risen rise above")
"""What a capacity and a demand are said with. "Both", "alone", "working" are no role: they say which
case the question is about, and count as its scenario words."""


def _window(text: str, value: str) -> str:
    """The words around an amount: "Water flowed into the station at up to 700 litres a second, but
    pump A alone could remove only 400" makes 700 an inflow and 400 a capacity."""
    at = text.find(value)
    if at < 0:
        return text
    return text[max(0, at - 50): at + len(value) + 25]


_RATE_WORDS = "a an per second seconds minute minutes hour hours day days week weeks year years"


def _role_scores(quantity: Any, question: str, cue: frozenset[str], *, scenario_counts: bool = True) -> int:
    """How well an amount fits a role: the role's words around it, two points each, and the
    question's scenario words ("both pumps", "pump A alone") in its sentence, two points each. A
    number the question itself gives has the one role its own words name (or none)."""
    if quantity.origin == "question":
        terms = match_terms(_window(question, quantity.text))
        own = DEMAND_WORDS if terms & DEMAND_WORDS else CAPACITY_WORDS if terms & CAPACITY_WORDS else frozenset()
        return 8 + 2 * len(cue & terms) if own == cue else 0
    # The scenario is what the question says beyond the roles and the unit ("both", "pump A alone").
    scenario = match_terms(question) - CAPACITY_WORDS - DEMAND_WORDS - match_terms(f"{quantity.unit} {_RATE_WORDS}")
    # The scenario picks among capacities ("both pumps", "pump A alone"); a demand is said as one.
    cued = 2 * len(cue & match_terms(_window(quantity.context, quantity.text)))
    if cue is DEMAND_WORDS or not scenario_counts:
        return cued
    return cued + 2 * len(scenario & match_terms(quantity.context))


def roles(amounts: Sequence[Any], question: str) -> tuple[list[Any], list[Any]]:
    """The candidates for capacity and for demand, each ranked in Python and left to the model only
    when no candidate leads its list by two points or more (:func:`~moot.teams.learning.events.settled`)."""
    from moot.teams.learning.events import settled

    def ranked(cue: frozenset[str]) -> list[tuple[int, Any]]:
        best: dict[tuple[float, bool], tuple[int, Any]] = {}
        for q in amounts:  # each value once, in the words that fit the role best
            score = _role_scores(q, question, cue)
            key = (q.value, q.origin == "question")
            if key not in best or score > best[key][0]:
                best[key] = (score, q)
        scored = sorted(best.values(), key=lambda item: -item[0])
        fitting = [item for item in scored if item[0] > 0]  # an amount no word ties to the role is no candidate
        return (fitting or scored)[:4]

    return settled(ranked(CAPACITY_WORDS)), settled(ranked(DEMAND_WORDS))


def verdict(threshold: Threshold, capacity: Any, demand: Any) -> tuple[str, str]:
    """The answer sentence and the comparison as an expression, from the two chosen quantities."""
    from moot.teams.learning.compute import format_number

    enough = capacity.value >= demand.value
    yes = enough if threshold.yes_means_enough else not enough
    relation = "≥" if enough else "<"
    expression = f"{format_number(capacity.value)} {relation} {format_number(demand.value)}"
    if enough:
        why = f"{capacity.text} could be handled, at least the {demand.text} that came"
    else:
        why = f"only {capacity.text} could be handled, less than the {demand.text} that came"
    return f"{'Yes' if yes else 'No'}: {why} ({expression}).", expression


async def capacity_against_demand(agent: Any, task: str, threshold: Threshold, quantities: Sequence[Any], *,
                                  budget: Any, bus: Any, run_id: str | None, task_id: str | None) -> Any:
    """The ComputeAgent's draft for a what-if that capacity against demand decides: Python ranks
    each role, ``agent``'s model chooses where a role has no clear leader, Python compares. None
    when fewer than two amounts share a unit or the choice failed."""
    from moot.runtime import AgentResult, load_prompt
    from moot.teams.learning.choosing import choose_each
    from moot.teams.learning.compute import Computation

    amounts = same_unit_amounts(quantities, task)
    if len(amounts) < 2:
        return None
    listed = [dataclasses.replace(q, id=f"q{i}") for i, q in enumerate(amounts, 1)]
    capacity_list, demand_list = roles(listed, task)
    choice, usage, turns = await choose_each(agent, "Amounts", task, {
        "capacity": (capacity_list, "the amount that could be handled in the question's case"),
        "demand": (demand_list, "the amount that had to be handled in the question's case"),
    }, prompt=load_prompt("threshold", __package__), name="CapacityDemand", budget=budget, bus=bus,
        run_id=run_id, task_id=task_id)
    if choice is None:
        return None
    by_id = {q.id: q for q in listed}
    capacity, demand = by_id[choice["capacity"]], by_id[choice["demand"]]
    output: dict[str, Any] = {"draft": "", "computation": None, "choice": choice,
                              "narrowed": f"capacity against demand, in {amounts[0].unit}"}
    detail = None
    if capacity.id == demand.id:
        detail = "the same amount was chosen as capacity and demand"
    else:
        draft, expression = verdict(threshold, capacity, demand)
        computation = Computation(operation="compare", value=None, unit=capacity.unit, expression=expression,
                                  operands=[capacity.id, demand.id], origins=[capacity.origin, demand.origin])
        output.update(draft=draft, computation=computation.model_dump())
    return AgentResult(agent=agent.name, output=output, text=output["draft"], usage=usage,
                       transcript=(), stop_reason="completed", turns=turns, detail=detail)


__all__ = ["CAPACITY_WORDS", "DEMAND_WORDS", "Threshold", "capacity_against_demand", "read_threshold", "roles", "same_unit_amounts", "verdict"]
