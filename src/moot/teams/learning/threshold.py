"""Capacity against demand: "would the station have kept up?" answered by a comparison in Python.

A what-if question of the form "had both pumps been working, would the street have flooded?" turns
on one comparison — what could be handled (800 litres a second) against what came (700) — and a
small model gets the comparison, or its direction, wrong. Here the model only chooses which
quantity is the capacity and which the demand (an enum of the amounts that share a unit), Python
compares them, and the question's own outcome word decides what "yes" means: for a failure
("flood", "run out", "overflow") yes means demand exceeded capacity; for a success ("keep up",
"enough", "prevent the flood") yes means it did not. A question with no such word (whether a
backup "protects" against a shared cause) is not a comparison and gets none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, create_model

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
    if not (_HYPOTHETICAL.search(text) and _YES_NO.search(text)) or re.search(r"\bhow (?:many|much)\b", text, re.I):
        return None  # "how many sandbags would that need, and was it enough" asks for a number first
    failure, success, avert = FAILURE.search(text), SUCCESS.search(text), AVERT.search(text)
    if failure and avert and avert.start() < failure.start():
        return Threshold(yes_means_enough=True)  # "would pump A alone have prevented the flood"
    if failure and not success:
        return Threshold(yes_means_enough=False)
    if success and not failure:
        return Threshold(yes_means_enough=True)
    return None


def threshold_schema(ids: Sequence[str]) -> type:
    return create_model(
        "CapacityDemand",
        capacity=(Literal[tuple(ids)], Field(description="the amount that could be handled in the question's case")),  # type: ignore[valid-type]
        demand=(Literal[tuple(ids)], Field(description="the amount that had to be handled in the question's case")),  # type: ignore[valid-type]
    )


def same_unit_amounts(quantities: Sequence[Any]) -> list[Any]:
    """The amounts whose unit is the most common one among amounts with a unit (litres, houses …):
    a capacity and a demand are measured alike."""
    amounts = [q for q in quantities if q.value is not None and q.unit]
    counts: dict[str, int] = {}
    for q in amounts:
        counts[q.unit.lower()] = counts.get(q.unit.lower(), 0) + 1
    if not counts:
        return []
    unit = max(counts, key=lambda u: (counts[u], -[q.unit.lower() for q in amounts].index(u)))
    seen: set[float] = set()
    kept = []
    for q in amounts:
        if q.unit.lower() == unit and q.value not in seen:
            seen.add(q.value)
            kept.append(q)
    return kept[:MAX_OPTIONS]


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


__all__ = ["Threshold", "read_threshold", "same_unit_amounts", "threshold_schema", "verdict"]
