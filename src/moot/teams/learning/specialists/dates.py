"""The dates specialist: the model chooses the two dates a duration question spans, Python counts the time.

Python lists the dates of the question and of the best-matching passages (``d1`` …, each with its
sentence), read by :mod:`moot.text` (relative ones, "last Tuesday", against the source's date);
the model chooses the start, the end and the unit asked; Python counts the days, weeks, months or
years between them. On a model on this machine the choice is made twice, the dates listed both
ways, and stands only when both name the same two dates and unit (the 0.5B model took the first
two listed).

It applies when the frame asks how long and the question states no length of time itself (a
question that says "returned 7 days late" asks a fee or an outcome, not a span). Its span does not
replace a plain draft that states a length of time as the sources write it (:mod:`..ask.select`).
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from moot.teams.learning.ask.drafts import AskContext, Draft
from moot.teams.learning.ask.frame import QuestionFrame
from moot.teams.learning.ask.recall import Recall
from moot.teams.learning.specialists.common import PRECISION, Day, Listing, choose_listed, days, fmt, tagger_ready
from moot.text.words import stem

Unit = Literal["days", "weeks", "months", "years"]
FINEST = {"days": 0, "weeks": 0, "months": 1, "years": 2}
"""The coarsest date precision each unit can be counted from (in :data:`PRECISION`'s ranks)."""


def between(start: date, end: date, unit: str) -> float:
    """The time from ``start`` to ``end`` in ``unit`` (whole months and years as the calendar counts them)."""
    if unit == "days":
        return float((end - start).days)
    if unit == "weeks":
        return round((end - start).days / 7, 1)
    months = (end.year - start.year) * 12 + end.month - start.month - (1 if end.day < start.day else 0)
    return float(months) if unit == "months" else float(months // 12)


class Dates:
    name = "dates"
    authority = 4
    stands_by = False

    def applies(self, frame: QuestionFrame, recall: Recall) -> str | None:
        if frame.kind != "duration" or frame.times:
            # A question that states a length of time ("returned 7 days late") asks something else about it.
            return None
        return "dates: the question asks how long, or the time between two dates"

    async def draft(self, ctx: AskContext) -> Draft | None:
        await tagger_ready()
        listed = days(ctx)
        asked = asked_unit(ctx.frame.unit)
        if asked is not None:
            # Asked for days, a date the text gives only as a month or a year cannot be counted from:
            # it is not offered, so neither listing can choose it.
            listed = [d for d in listed if PRECISION.get(d.precision, 0) <= FINEST[asked]]
        if len(listed) < 2:
            return None
        choice = await choose_listed(ctx, self.name, "choose_dates", "Dates", listed,
                                     lambda ids: {"start": (ids, ...), "end": (ids, ...), "unit": (Unit, ...)},
                                     ("start", "end"), name="Span", prefix="d",
                                     outcome=lambda reading: _said(span(reading)))
        counted = span(choice) if choice is not None else None
        if counted is None:
            return None
        value, unit, start, end = counted
        # The source's words beside each date, unless they are relative ("last week" means another day here).
        said = lambda d: "" if d.relative else f" (“{d.text}”)"  # noqa: E731
        text = f"{fmt(value)} {unit}: from {start.shown()}{said(start)} to {end.shown()}{said(end)}."
        return Draft(specialist=self.name, text=text, computed=[f"{value}"],
                     quotes=[d.where for d in (start, end) if d.where != "question"], replaces=True, measures="time",
                     why=self.applies(ctx.frame, ctx.recall) or "")


def asked_unit(word: str) -> str | None:
    """The unit of time the frame's unit word names ("days", "Week", "months"), if it names one."""
    wanted = stem(word) if word.strip() else ""
    return next((unit for unit in FINEST if stem(unit) == wanted), None)


def span(reading: Listing) -> tuple[float, str, Day, Day] | None:
    """The time a chosen start and end span, in the chosen unit, with the two dates in order; ``None``
    for one date named twice, or a unit finer than the dates give."""
    start, end = reading.picked.get("start"), reading.picked.get("end")
    if start is None or end is None or start is end:
        return None
    start, end = sorted([start, end], key=lambda d: d.day)
    if start.day == end.day:
        return None  # one day, written twice: no span
    unit_asked = reading.output.unit  # type: ignore[attr-defined]
    if max(PRECISION.get(d.precision, 0) for d in (start, end)) > FINEST[unit_asked]:
        return None  # weeks from "2018", days from "July 2025": a precision the sources do not give
    value = between(start.day, end.day, unit_asked)
    if not value:
        return None  # "0 years" between two days of one spring: not a count of the unit chosen
    return value, unit_asked if value != 1 else unit_asked.rstrip("s"), start, end


def _said(counted: tuple[float, str, Day, Day] | None) -> str | None:
    if counted is None:
        return None
    value, unit, start, end = counted
    return f"{fmt(value)} {unit}, from {start.shown()} to {end.shown()}"


SPECIALIST = Dates()
