"""The compute specialist: the model chooses an operation and its amounts, Python works out the value.

A 0.5B model adds and divides badly but picks well from a short menu. Python lists the amounts of
the question and of the best-matching passages (``q1``, ``q2`` … each with its unit, sentence,
source and date); the model chooses an operation from a closed set and the amounts it uses
(enums of the listed ids, so it cannot name a number that is not there); Python computes the
value and writes the answer with the expression, so the number the user reads is the one computed.
It applies when the frame asks for a worked-out figure (a comparison, a change, a what-if)
and the evidence holds amounts.
"""

from __future__ import annotations

import itertools
from datetime import date
from typing import Literal

from moot.teams.learning.ask.drafts import AskContext, Draft
from moot.teams.learning.ask.frame import QuestionFrame, TimeAnchor, periods
from moot.teams.learning.ask.recall import Recall
from moot.teams.learning.specialists.common import Amount, Listing, amounts, choose, choose_listed, fmt, of_unit, same_unit
from moot.text.names import names_in

Operation = Literal["sum", "difference", "change", "product", "ratio", "percent_of", "percent_change", "average",
                    "minimum", "maximum", "none"]
KINDS = frozenset({"comparison", "change", "what_if"})
ORDERED = frozenset({"change", "ratio", "percent_of", "percent_change"})
"""Operations whose result depends on which amount comes first."""
SAME_UNIT = frozenset({"sum", "difference", "change", "percent_change", "average", "minimum", "maximum"})
"""Operations whose amounts must be of one unit (a product or a ratio may mix them)."""


class CalculationRefused(ValueError):
    """The chosen operation cannot be applied to the chosen amounts (a division by zero, one operand for a difference)."""


def evaluate(operation: str, chosen: list[Amount]) -> tuple[float, str, str]:
    """The value, its unit and the expression, for ``operation`` over ``chosen`` (in order)."""
    values = [a.value for a in chosen]
    unit = chosen[0].unit if chosen and all(same_unit(a.unit, chosen[0].unit) for a in chosen) else ""
    shown = [f"{fmt(a.value)}{'' if a.unit in ('', '%') else ' '}{a.unit}" for a in chosen]
    if not chosen:
        raise CalculationRefused("no amounts chosen")
    if operation in ("difference", "change", "ratio", "percent_of", "percent_change") and len(chosen) != 2:
        raise CalculationRefused(f"{operation} takes two amounts, {len(chosen)} chosen")
    if operation in SAME_UNIT and not all(same_unit(a.unit, chosen[0].unit) or not a.unit or not chosen[0].unit
                                          for a in chosen):
        # Adding or comparing metres with years means nothing: amounts of different units are refused.
        raise CalculationRefused(f"{operation} of {', '.join(a.text for a in chosen)}: different units")
    if operation == "sum":
        return sum(values), unit, " + ".join(shown)
    if operation == "difference":
        return abs(values[1] - values[0]), unit, f"{shown[1]} − {shown[0]}" if values[1] >= values[0] else f"{shown[0]} − {shown[1]}"
    if operation == "change":
        return values[1] - values[0], unit, f"{shown[1]} − {shown[0]}"
    if operation == "product":
        if len(chosen) > 3:
            raise CalculationRefused(f"a product of {len(chosen)} amounts")
        units = [a.unit for a in chosen if a.unit]
        if any(same_unit(x, y) for x, y in itertools.combinations(units, 2)):
            # metres times metres, nights times nights: not what a question about one figure asks
            raise CalculationRefused(f"product of {', '.join(a.text for a in chosen)}: one unit twice")
        result = 1.0
        for v in values:
            result *= v
        return result, "", " × ".join(shown)
    if operation == "ratio":
        if not values[1]:
            raise CalculationRefused("division by zero")
        return values[0] / values[1], "", f"{shown[0]} ÷ {shown[1]}"
    if operation == "percent_of":
        if not values[1]:
            raise CalculationRefused("division by zero")
        return values[0] / values[1] * 100, "%", f"{shown[0]} of {shown[1]}"
    if operation == "percent_change":
        if not values[0]:
            raise CalculationRefused("division by zero")
        return (values[1] - values[0]) / values[0] * 100, "%", f"from {shown[0]} to {shown[1]}"
    if operation == "average":
        return sum(values) / len(values), unit, f"({' + '.join(shown)}) ÷ {len(values)}"
    if operation == "minimum":
        return min(values), unit, f"the smallest of {', '.join(shown)}"
    if operation == "maximum":
        return max(values), unit, f"the largest of {', '.join(shown)}"
    raise CalculationRefused(f"no operation {operation!r}")


def reports_of_one_value(chosen: list[Amount]) -> bool:
    """Whether two of the amounts are reports of one value: the same unit, from different sources or
    dates, in sentences that name the same thing. Such amounts are not added up (a count reported in
    March and again in July is one count, twice), though they may be compared."""
    for a, b in itertools.combinations([c for c in chosen if c.where != "question"], 2):
        if not same_unit(a.unit, b.unit) or (a.source, a.published) == (b.source, b.published):
            continue
        if {n for n, _ in names_in(a.sentence)} & {n for n, _ in names_in(b.sentence)}:
            return True
    return False


def sentence(operation: str, value: float, unit: str, expression: str, chosen: list[Amount]) -> str:
    number = f"{fmt(round(value, 2))}{'%' if unit == '%' else (' ' + unit if unit else '')}"
    if operation == "change" and len(chosen) == 2:
        direction = "up" if value > 0 else "down" if value < 0 else "unchanged"
        first, second = chosen
        when = lambda a: f" ({a.source}, {a.published})" if a.published else ""  # noqa: E731
        return (f"It went from {first.text}{when(first)} to {second.text}{when(second)}: "
                f"{direction} {fmt(abs(round(value, 2)))}{' ' + unit if unit and unit != '%' else ''} ({expression}).")
    return f"{number} ({expression})."


def of_asked_unit(listed: list[Amount], asked: str) -> list[Amount]:
    """When the frame's unit word is the unit of two or more of the evidence's amounts ("percentage"
    and ``61%``, "tonnes" and ``95 tonnes``): the question's amounts and those. Otherwise all of them."""
    matching = of_unit([a for a in listed if a.where != "question"], asked)
    if len(matching) < 2:
        return listed
    return [a for a in listed if a.where == "question" or a in matching]


def by_asked_dates(listed: list[Amount], anchors: list[TimeAnchor]) -> list[Amount]:
    """When the question names two or more months, days or years and each is the date of exactly
    one listed amount, all of one unit: those amounts, oldest first. An amount whose sentence states
    the asked day itself is taken before others of its month; a year takes the amounts dated in it.
    Otherwise nothing (the model chooses)."""
    named = periods(anchors)
    if len(named) < 2:
        return []
    picked: list[Amount] = []
    evidence = [a for a in listed if a.where != "question" and (a.when is not None or a.year_stated)]
    for anchor in named:
        matching = [a for a in evidence if anchor.precision == "day" and a.day_stated and a.when == anchor.day]
        if not matching:
            matching = [a for a in evidence if a.in_period(anchor)]
        if len({a.value for a in matching}) != 1:
            return []
        picked.append(matching[0])
    if not all(same_unit(a.unit, picked[0].unit) for a in picked) or len({id(a) for a in picked}) < len(picked):
        return []
    return sorted(picked, key=lambda a: (a.year_stated or (a.when.year if a.when else 0), a.when or date.min))


def calculate(operation: str, chosen: list[Amount]) -> tuple[float, str, str] | None:
    """:func:`evaluate`, or ``None`` for no operation, amounts it refuses, or reports of one value added up."""
    if operation == "none" or (operation in ("sum", "average") and reports_of_one_value(chosen)):
        return None
    try:
        return evaluate(operation, chosen)
    except CalculationRefused:
        return None


def _worked_out(reading: Listing) -> str | None:
    """What a reading works out to, with its expression: two readings that give the same agree."""
    chosen = _items(reading)
    calculated = calculate(getattr(reading.output, "operation", "none"), chosen)
    if calculated is None:
        return None
    # each figure with the date it is of: "52 → 61" from 2022 and from 2024 are two different changes
    dated = "; ".join(f"{a.value} {a.unit} of {a.when}" for a in chosen)
    return f"{calculated[2]} = {calculated[0]!r} ({dated})"


def _items(reading: Listing) -> list[Amount]:
    """The amounts a reading names, each once, in field order."""
    return list({id(a): a for a in reading.picked.values() if a is not None}.values())


class Compute:
    name = "compute"
    authority = 3
    stands_by = False

    def applies(self, frame: QuestionFrame, recall: Recall) -> str | None:
        if frame.kind in KINDS:
            return f"compute: the question asks for a worked-out figure ({frame.kind})"
        if len(frame.numbers) >= 2:
            return f"compute: the question itself gives {len(frame.numbers)} numbers"
        return None

    async def draft(self, ctx: AskContext) -> Draft | None:
        listed = amounts(ctx)
        if not listed:
            return None
        listed = of_asked_unit(listed, ctx.frame.unit)
        dated = by_asked_dates(listed, ctx.frame.anchors)
        if dated:
            # The question's dates pick one amount each (same unit): the model chooses the operation only.
            menu = "\n".join(a.render() for a in dated)
            picked = await choose(ctx, self.name, "choose_amounts", f"Amounts:\n{menu}\n\nQuestion: {ctx.question}",
                                  {"operation": (Operation, ...)}, name="Operation")
            chosen = dated
        else:
            # Two amounts, each chosen on its own (an enum of the listed ids): asked for a list, the 0.5B
            # model listed every id offered, which no operation of two amounts can use.
            choice = await choose_listed(ctx, self.name, "choose_amounts", "Amounts", listed,
                                         lambda ids: {"operation": (Operation, ...), "first": (ids, ...), "second": (ids, ...)},
                                         ("first", "second"), name="Calculation", prefix="q",
                                         ordered=lambda output: getattr(output, "operation", "") in ORDERED,
                                         outcome=_worked_out)
            picked = choice.output if choice is not None else None
            chosen = _items(choice) if choice is not None else []
        if picked is None:
            return None
        calculated = calculate(picked.operation, chosen)
        if calculated is None:
            return None
        value, unit, expression = calculated
        text = sentence(picked.operation, value, unit, expression, chosen)
        return Draft(specialist=self.name, text=text, computed=[f"{value}", f"{round(value, 2)}"],
                     quotes=[a.where for a in chosen if a.where != "question"],
                     replaces=ctx.frame.kind in KINDS, why=self.applies(ctx.frame, ctx.recall) or "")


SPECIALIST = Compute()
