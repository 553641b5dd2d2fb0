"""The ComputeAgent: the model chooses an operation and its operands, Python computes the value.

A 0.5B model cannot add, subtract dates or apply a fee rule, but it can pick from a short menu.
So the numbers and dates of the retrieved facts (and of the question and the source passages)
are listed in Python as *quantities*, each with an id (``q1``, ``q2`` …) and the fact it came
from; the model fills :class:`ComputeChoice` under a constrained schema — an operation from a
closed set and the operand ids (an enum of the listed ids, so it cannot name a number that is
not there); :func:`evaluate` computes the value exactly and records the expression. The draft
answer is written in Python from that value, so the number the user reads is the one computed.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.models.base import ModelSettings, Usage
from moot.runtime import AgentProgress, AgentResult, EventBus, SubAgent
from moot.runtime.calculator import CalculationError, safe_calculate
from moot.teams.learning.quantities import (
    UNIT_SKIP,
    Quantity,
    collect_quantities,
    find_quantities,
    format_number,
)
from moot.teams.learning.events import between_events, read_events
from moot.teams.learning.threshold import capacity_against_demand, read_threshold

Operation = Literal["none", "sum", "difference", "product", "ratio", "percent_change", "days_between",
                    "months_between", "years_between", "convert", "formula", "minimum", "maximum", "order"]
OPERATIONS: tuple[str, ...] = Operation.__args__  # type: ignore[attr-defined]
DATE_OPERATIONS = frozenset({"days_between", "months_between", "years_between"})

CONVERSIONS: dict[tuple[str, str], float] = {
    ("km", "m"): 1000, ("m", "cm"): 100, ("kg", "g"): 1000, ("tonne", "kg"): 1000, ("hour", "minute"): 60,
    ("minute", "second"): 60, ("day", "hour"): 24, ("week", "day"): 7, ("year", "month"): 12, ("l", "ml"): 1000,
    ("mile", "km"): 1.609344, ("kilometre", "metre"): 1000, ("metre", "centimetre"): 100,
}
"""Unit conversions the ``convert`` operation knows (and their inverses)."""
_UNIT_ALIASES = {"kilometres": "km", "kilometers": "km", "kilometre": "km", "kilometer": "km", "metres": "m",
                 "meters": "m", "metre": "m", "meter": "m", "centimetres": "cm", "kilograms": "kg", "kilogram": "kg",
                 "kilos": "kg", "kilo": "kg", "grams": "g", "gram": "g", "tonnes": "tonne", "tons": "tonne",
                 "hours": "hour", "minutes": "minute", "seconds": "second", "days": "day", "weeks": "week",
                 "years": "year", "months": "month", "litres": "l", "liters": "l", "litre": "l", "miles": "mile"}

DERIVATION_CUES = re.compile(
    r"\b(how many more|how much more|how many fewer|how much less|by how (?:many|much)|difference|how far apart|"
    r"together|in total|total|combined|altogether|across|sum|average|how many (?:days|weeks|months|years|hours|minutes)|"
    r"how long (?:after|before|between|did|was|were)|for how (?:long|many)|per cent|percent|percentage|ratio|"
    r"times (?:as|more)|how much (?:does|do|did|would|will) .* (?:pay|cost|spend|need)|spend|how often|"
    r"how much .* (?:each|a|per) (?:day|week|month|year)|how many .* (?:would|will|could)|"
    r"still need|left|remaining|how (?:much|many|far) (?:\w+ ){0,8}(?:rise|rose|fall|fell|grow|grew|increase|decrease|"
    r"drop|change|go up|go down))\b", re.I)
"""Questions whose answer is usually worked out rather than stated: compute's precondition,
and the selector's reason to prefer a computed value."""


class Computation(BaseModel):
    """What Python computed: the value, its unit, the expression and where the operands came from."""

    operation: str
    value: float | None = None
    unit: str = ""
    expression: str
    operands: list[str] = Field(default_factory=list)
    """The quantity ids used."""
    origins: list[str] = Field(default_factory=list)
    """Where each operand came from (``#12``, ``question`` …)."""

    def value_text(self) -> str:
        return format_number(self.value) if self.value is not None else ""

    def sentence(self) -> str:
        """The draft answer: the value first, then how it was computed and from which facts."""
        cites = " ".join(dict.fromkeys(f"[{o}]" for o in self.origins if o.startswith("#")))
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.value_text()}{unit} ({self.expression}{', ' + cites if cites else ''})."


class ComputeError(ValueError):
    """The chosen operation does not fit the operands (wrong count, a date where a number is needed)."""


_DURATION = re.compile(r"\bhow many (days|weeks|months|years)\b|\bfor how (long)\b|\bhow (long) (?:after|before|between|"
                       r"did|was|were|had|has)\b", re.I)
_PERCENT = re.compile(r"\b(percentage points?|per ?cent|percent|%)", re.I)
_SUM = re.compile(r"\b(together|in total|total|combined|altogether|across|sum|both)\b", re.I)
_DIFFERENCE = re.compile(r"\b(how many more|how much more|fewer|less|difference|how far apart|by how (?:many|much)|"
                         r"rise|rose|fall|fell|grow|grew|increase|decrease|drop|change|gap)\b", re.I)
_WORD = re.compile(r"[a-z][a-z-]+")
_CHOICE = re.compile(r"^\W*which\b|\bin what order\b|\bwhat order\b|\bgo(?:es)? first\b|\bshould go\b", re.I)


def narrow(question: str, quantities: Sequence[Quantity]) -> tuple[list[Quantity], tuple[str, ...], str]:
    """Python's part of the choice: the quantities and operations that can answer this question.

    A duration question ("how many days after …") gets only the dates and the date operations;
    any other gets only the numbers; "percentage points" only the percentages; when the question
    names a unit that some quantities carry ("loaves", "lifeguards"), only those. Duplicates of one
    value from one source are listed once. The reason is kept for the trace."""
    reasons: list[str] = []
    duration = _DURATION.search(question)
    if duration and any(q.date for q in quantities):
        unit = (duration.group(1) or "days").lower().rstrip("s")
        menu = [q for q in quantities if q.date is not None]
        operations: tuple[str, ...] = ({"day": ("days_between",), "week": ("days_between",),
                                        "month": ("months_between",), "year": ("years_between",)}.get(unit)
                                       or ("days_between", "months_between", "years_between"))
        reasons.append(f"a duration in {unit}s: dates only")
    else:
        menu = [q for q in quantities if q.value is not None]
        operations = tuple(o for o in OPERATIONS if o not in DATE_OPERATIONS)
        if _PERCENT.search(question) and any(q.unit == "%" for q in menu):
            menu = [q for q in menu if q.unit == "%" or q.origin == "question"]
            reasons.append("percentages only")
        else:
            asked = set(_WORD.findall(question.lower()))
            named = [q for q in menu if q.unit and (q.unit.lower() in asked or q.unit.lower().rstrip("s") in asked
                                                     or q.unit.lower() + "s" in asked)]
            if len(named) >= 2 or (named and _SUM.search(question) is None and _DIFFERENCE.search(question) is None):
                menu = named + [q for q in menu if q.origin == "question" and q not in named]
                reasons.append(f"quantities in {', '.join(sorted({q.unit for q in named}))} only")
        asked_dates = {q.date for q in quantities if q.origin == "question" and q.date is not None and q.value is None}
        at_asked = [q for q in menu if q.origin != "question" and set(q.when) & asked_dates]
        if asked_dates and len(at_asked) >= 2:
            # "between 14 March and 20 June": the values reported at the dates the question names.
            menu = at_asked + [q for q in menu if q.origin == "question" and q not in at_asked]
            reasons.append("values at the question's dates")
        if re.search(r"percentage points?", question, re.I):
            operations = ("difference", "none")
            reasons.append("a difference in percentage points")
        elif _CHOICE.search(question) and not _DIFFERENCE.search(question):
            # "Which load should go first?", "In what order?": one of the options, or their order.
            operations = ("minimum", "maximum", "order", "none")
            reasons.append("a choice among the options")
        elif _DIFFERENCE.search(question) and not _SUM.search(question):
            operations = ("difference", "percent_change", "none") if _PERCENT.search(question) else ("difference", "none")
            reasons.append("a difference")
        elif _SUM.search(question) and not _DIFFERENCE.search(question):
            named_units = {q.unit for q in menu if q.unit and q.origin != "question"}
            # "How many member-bakers … across its two bakeries?": amounts of one unit are added.
            operations = ("sum", "none") if len(named_units) == 1 and len(menu) >= 2 else ("sum", "product", "formula", "none")
            reasons.append("a total")
    # The most relevant first: a small model picks early ids, so the quantities whose sentence
    # shares the most words with the question lead (stable among equals).
    asked_words = {w for w in _WORD.findall(question.lower()) if len(w) > 3}
    menu = sorted(menu, key=lambda q: -len(asked_words & set(_WORD.findall(q.context.lower()))))
    seen: set[tuple[Any, ...]] = set()
    unique: list[Quantity] = []
    for q in menu:
        key = (q.date, q.value, q.unit)
        if key in seen:
            continue
        seen.add(key)
        unique.append(q)
    renumbered = [dataclasses.replace(q, id=f"q{i}") for i, q in enumerate(unique, 1)]
    return renumbered, operations, "; ".join(reasons)


def choice_schema(ids: Sequence[str], operations: Sequence[str] = OPERATIONS) -> type[BaseModel]:
    """:class:`ComputeChoice` with the operands restricted to the listed quantity ids and the
    operation to ``operations``."""
    operand = Literal[tuple(ids)] if ids else str  # type: ignore[valid-type]
    return create_model(
        "ComputeChoice",
        operation=(Literal[tuple(operations)], Field(description="the operation that answers the question, or none")),  # type: ignore[valid-type]
        # Two operands at least when there are two to choose: the 0.5B model otherwise answered
        # "difference" with no operands at all.
        # (required: with a default, constrained decoding let the model leave the field out.)
        operands=(list[operand], Field(..., min_length=2, description="quantity ids, in order")  # type: ignore[valid-type]
                  if len(ids) >= 2 else Field(default_factory=list, description="quantity ids, in order")),
        formula=(str, Field(default="", description="only for formula: an expression over quantity ids, e.g. (q1 + q2) * 2")),
        to_unit=(str, Field(default="", description="only for convert: the unit to convert to")),
    )


def _unit_key(unit: str) -> str:
    return _UNIT_ALIASES.get(unit.lower(), unit.lower())


def _common_unit(quantities: Sequence[Quantity]) -> str:
    units = [q.unit for q in quantities if q.unit]
    return units[0] if units else ""


def _months_between(a: _dt.date, b: _dt.date) -> float:
    months = (b.year - a.year) * 12 + (b.month - a.month)
    return months + (b.day - a.day) / 30.0


def _same_units(numbers: Sequence[Quantity], what: str) -> None:
    """Amounts added or subtracted must be of one kind: "82% − 18", "30 pear − 12 varieties" and
    "2024 − 900 swimmers" were all chosen by the 0.5B model."""
    units = {_unit_key(q.unit).rstrip("s") for q in numbers if q.unit}
    if ("%" in {q.unit for q in numbers} and len({q.unit for q in numbers}) > 1) or len(units) > 1:
        raise ComputeError(f"{what} of {' and '.join(q.text for q in numbers)} mixes units")


def _label(quantity: Quantity) -> str:
    """What a number belongs to in its clause: "filling" in "…, filling 40 an hour and …"."""
    at = quantity.context.find(quantity.text)
    if at <= 0:
        return ""
    clause = re.split(r",|;|:|\band\b|\bor\b", quantity.context[:at])[-1]
    words = [w for w in clause.split() if w.lower() not in UNIT_SKIP and not w[0].isdigit()]
    return " ".join(words[-3:])


def evaluate(operation: str, operands: Sequence[Quantity], *, formula: str = "", to_unit: str = "") -> Computation:
    """Compute exactly. Raises :class:`ComputeError` when the operands do not fit the operation."""
    ids = [q.id for q in operands]
    origins = [q.origin for q in operands]

    def done(value: float | None, unit: str, expression: str) -> Computation:
        return Computation(operation=operation, value=value, unit=unit, expression=expression, operands=ids,
                           origins=origins)

    if operation in DATE_OPERATIONS:
        dated = sorted((q for q in operands if q.date is not None), key=lambda q: q.date)  # type: ignore[arg-type,return-value]
        if len(dated) != 2:
            raise ComputeError(f"{operation} needs two dates, got {len(dated)}")
        a, b = dated[0].date, dated[1].date
        assert a is not None and b is not None
        if a == b:
            raise ComputeError(f"{operation} needs two different dates")
        if operation == "days_between":
            value, unit = float((b - a).days), "days"
        elif operation == "months_between":
            value, unit = round(_months_between(a, b), 1), "months"
        else:
            value, unit = round(_months_between(a, b) / 12, 1), "years"
        def shown(q: Quantity) -> str:
            return q.text if re.fullmatch(r"\d{4}", q.text) else f"{q.date:%-d %B %Y}"

        return done(value, unit, f"from {shown(dated[0])} to {shown(dated[1])}")
    if len(set(ids)) != len(ids) and operation not in ("sum", "product", "formula"):
        raise ComputeError("the same quantity was chosen twice")
    numbers = [q for q in operands if q.value is not None]
    if len(numbers) != len(operands):
        if operation == "difference" and len(operands) == 2 and all(q.date for q in operands):
            return evaluate("days_between", operands)
        raise ComputeError(f"{operation} needs numbers, not dates")
    values = [q.value for q in numbers]
    shown = [q.text for q in numbers]
    unit = _common_unit(numbers)
    if operation == "none":
        raise ComputeError("no computation chosen")
    if operation == "formula":
        if not formula.strip():
            raise ComputeError("formula needs an expression")
        expression = formula
        for q in sorted(numbers, key=lambda q: -len(q.id)):
            expression = re.sub(rf"\b{q.id}\b", format_number(q.value).replace(",", ""), expression)  # type: ignore[arg-type]
        if re.search(r"\bq\d+\b", expression):
            raise ComputeError(f"the formula names quantities that were not chosen: {formula}")
        try:
            value = float(safe_calculate(expression))
        except CalculationError as exc:
            raise ComputeError(str(exc)) from None
        return done(value, unit, f"{expression} = {format_number(value)}")
    if not values:
        raise ComputeError(f"{operation} needs at least one number")
    if operation == "sum":
        _same_units(numbers, "a sum")
        value = sum(values)  # type: ignore[arg-type]
        return done(value, unit, " + ".join(shown) + f" = {format_number(value)}")
    if operation == "order":
        if len(numbers) < 2:
            raise ComputeError("order needs at least two numbers")
        ranked = sorted(numbers, key=lambda q: q.value)  # type: ignore[arg-type,return-value]
        first = ranked[0]
        return done(first.value, first.unit, "smallest first: " + ", ".join(q.text for q in ranked))
    if operation in ("minimum", "maximum"):
        pick = (min if operation == "minimum" else max)(numbers, key=lambda q: q.value)  # type: ignore[arg-type,return-value]
        label = _label(pick)
        return done(pick.value, pick.unit, f"{operation} of {', '.join(shown)} = {pick.text}"
                                           + (f": {label} {pick.text}" if label else ""))
    if operation == "product":
        units = [q.unit for q in numbers if q.unit and q.unit != "%"]
        if len(units) >= 2 and len(set(units)) == 1:
            raise ComputeError(f"multiplying {units[0]} by {units[0]} counts nothing; add them or take the difference")
        value = 1.0
        for v in values:
            value *= v  # type: ignore[operator]
        return done(value, "", " × ".join(shown) + f" = {format_number(value)}")
    if operation == "convert":
        source, target = _unit_key(numbers[0].unit), _unit_key(to_unit)
        if (source, target) in CONVERSIONS:
            value = values[0] * CONVERSIONS[(source, target)]  # type: ignore[operator]
        elif (target, source) in CONVERSIONS:
            value = values[0] / CONVERSIONS[(target, source)]  # type: ignore[operator]
        else:
            raise ComputeError(f"cannot convert {numbers[0].unit or 'a number'} to {to_unit or 'nothing'}")
        return done(value, to_unit, f"{shown[0]} = {format_number(value)} {to_unit}")
    if len(values) != 2:
        raise ComputeError(f"{operation} needs two numbers, got {len(values)}")
    a, b = values
    if operation == "difference":
        _same_units(numbers, "a difference")
        value = abs(a - b)  # type: ignore[operator]
        big, small = (numbers[0], numbers[1]) if a >= b else (numbers[1], numbers[0])  # type: ignore[operator]
        if unit == "%":
            unit = "percentage points"
        return done(value, unit, f"{big.text} − {small.text} = {format_number(value)}")
    if operation == "ratio":
        if b == 0:
            raise ComputeError("ratio by zero")
        value = a / b  # type: ignore[operator]
        return done(value, "", f"{shown[0]} / {shown[1]} = {format_number(value)}")
    if operation == "percent_change":
        if a == 0:
            raise ComputeError("percent change from zero")
        value = (b - a) / a * 100  # type: ignore[operator]
        return done(round(value, 1), "%", f"({shown[1]} − {shown[0]}) / {shown[0]} × 100 = {format_number(round(value, 1))}%")
    raise ComputeError(f"unknown operation {operation}")


STRONG_DERIVATION_CUES = re.compile(
    r"\b(how many more|how much more|how many fewer|how much less|by how (?:many|much)|difference|how far apart|"
    r"together|in total|total|combined|altogether|across|sum of|average|how many (?:days|weeks|months|years)|"
    r"how long (?:after|before|between)|for how (?:long|many (?:days|weeks|months|years))|percentage points?|"
    r"per ?cent|percent|ratio|times (?:as|more)|still need|remaining|"
    r"how (?:much|many|far) (?:\w+ ){0,8}(?:rise|rose|fall|fell|increase|decrease|drop|go up|go down))\b", re.I)
"""The wording that makes a computed value *the* answer, so the selector prefers it over a draft
that passes the checker. "How much does adult entry cost?" runs the compute specialist (the
price may be a sum) but is usually a stated value: on L6 the computed "4 crowns / 16" had
replaced the single agent's right "5 crowns"."""


def derivation_asked(question: str) -> bool:
    """True when the question's wording asks for a value that is usually worked out."""
    return DERIVATION_CUES.search(question) is not None


def derivation_required(question: str) -> bool:
    """True when the question's wording says the answer is a worked-out value (see
    :data:`STRONG_DERIVATION_CUES`)."""
    return STRONG_DERIVATION_CUES.search(question) is not None


def render_menu(quantities: Sequence[Quantity]) -> str:
    return "\n".join(q.render() for q in quantities)


@dataclass
class ComputeAgent(SubAgent):
    """Lists the quantities, asks the model for an operation under a schema, computes in Python.

    Its output is ``{"draft": sentence, "computation": Computation dict}``, or ``{"draft": ""}``
    when the model chose ``none`` or its choice did not fit (the reason is in ``detail``)."""

    quantities: list[Quantity] = field(default_factory=list)

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        from moot.teams.learning.specialists import evidence

        merged = dict(context) if context and "facts" in context else evidence(context or {})
        facts = list(merged.get("facts") or [])
        # Each source's sentences about the question sit beside the top passages: the value reported
        # at a date the question names may stand in neither the facts nor the two best paragraphs.
        passages = list(merged.get("passages") or []) + [
            {"text": sentence, "published": report.get("published")}
            for report in merged.get("reports") or [] for sentence in report.get("sentences") or []]
        threshold, events = read_threshold(task), read_events(task)
        if threshold is not None or events is not None:
            everything = collect_quantities(task, facts, passages, limit=80)  # the paths rank their own short lists
            if threshold is not None:
                answered = await capacity_against_demand(self, task, threshold, everything, budget=budget, bus=bus,
                                                         run_id=run_id, task_id=task_id)
                if answered is not None:
                    return answered
            if events is not None:
                answered = await between_events(self, task, events, everything, budget=budget, bus=bus,
                                                run_id=run_id, task_id=task_id)
                if answered is not None:
                    return answered
        quantities, operations, narrowed = narrow(task, collect_quantities(task, facts, passages))
        if len(quantities) < 1:
            return AgentResult(agent=self.name, output={"draft": "", "computation": None}, text="",
                               usage=Usage(), transcript=(), stop_reason="completed", turns=0,
                               detail="no numbers or dates to compute with")
        chooser = SubAgent(self.name, self.role, self.system_prompt, (), self._model or self.model,
                           output_type=choice_schema([q.id for q in quantities], operations), max_turns=2,
                           settings=self.settings)
        message = f"Quantities:\n{render_menu(quantities)}\n\nQuestion: {task}"
        if sum(q.origin == "question" for q in quantities) >= 2 and merged.get("passages"):
            # A question that brings its own numbers applies what the sources teach ("the slowest step
            # sets the output"): the best passage goes beside them, so the operation can follow it.
            message = f"What the sources say: {str(merged['passages'][0].get('text') or '')[:400]}\n\n{message}"
        try:
            result = await chooser.run(message, budget=budget, bus=bus, progress=progress, run_id=run_id, task_id=task_id)
        except Exception as exc:  # noqa: BLE001 - a failed compute draft must not sink the answer
            return AgentResult(agent=self.name, output={"draft": "", "computation": None}, text="", usage=Usage(),
                               transcript=(), stop_reason="completed", turns=0, detail=f"compute failed: {exc}")
        if not result.ok:
            stop = result.stop_reason if result.stop_reason.startswith("budget") else "completed"
            return AgentResult(agent=self.name, output={"draft": "", "computation": None}, text="", usage=result.usage,
                               transcript=result.transcript, stop_reason=stop, turns=result.turns,
                               detail=f"no choice: {result.detail or result.stop_reason}")
        choice = result.output
        by_id = {q.id: q for q in quantities}
        chosen = [by_id[i] for i in choice.operands if i in by_id]
        if choice.operation == "formula":
            named = re.findall(r"\bq\d+\b", choice.formula)
            chosen = [by_id[i] for i in dict.fromkeys(named) if i in by_id] or chosen
        output: dict[str, Any] = {"draft": "", "computation": None, "choice": choice.model_dump(), "narrowed": narrowed}
        detail = None
        try:
            computation = evaluate(choice.operation, chosen, formula=choice.formula, to_unit=choice.to_unit)
            output.update(draft=computation.sentence(), computation=computation.model_dump())
        except ComputeError as exc:
            detail = f"no value computed: {exc}"
        return AgentResult(agent=self.name, output=output, text=output["draft"], usage=result.usage,
                           transcript=result.transcript, stop_reason="completed", turns=result.turns, detail=detail)


def build_compute(model: Any) -> ComputeAgent:
    from moot.runtime import load_prompt

    return ComputeAgent("compute", "chooses an operation and operands; Python computes the value",
                        load_prompt("compute", __package__), (), model, max_turns=2, settings=ModelSettings(max_tokens=120))


__all__ = ["Computation", "ComputeAgent", "ComputeError", "OPERATIONS", "Quantity", "build_compute", "format_number",
           "choice_schema", "collect_quantities", "derivation_asked", "derivation_required", "evaluate", "find_quantities", "narrow"]
