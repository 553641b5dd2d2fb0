"""What specialists share: one way to let the model choose, and the evidence's amounts and dates with ids."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, create_model

from moot.models.base import ModelSettings
from moot.runtime import SubAgent, load_prompt
from moot.runtime.budget import runs_locally
from moot.teams.learning.ask.drafts import AskContext
from moot.teams.learning.ask.frame import CHOICE_TOKENS, periods
from moot.teams.learning.ask.recall import Passage, table_row
from moot.text import phrases
from moot.text.dates import find_dates
from moot.text.numbers import find_quantities, unit_key, unit_name
from moot.text.words import stem

PROMPTS = "moot.teams.learning"
MAX_OPTIONS = 14


async def choose(ctx: AskContext, role: str, prompt: str, message: str, fields: dict[str, Any], *,
                 name: str, max_tokens: int = CHOICE_TOKENS) -> BaseModel | None:
    """The model fills ``fields`` (types: enums of options) under ``role``'s name, model and the run's
    budget; ``None`` when the call failed or the budget had no room (never raises)."""
    schema = create_model(name, **fields)
    agent = SubAgent(role, f"chooses for the {role} specialist", load_prompt(prompt, PROMPTS), model=ctx.model_for(role),
                     output_type=schema, max_turns=2, settings=ModelSettings(max_tokens=max_tokens, temperature=0.0))
    outcome = await ctx.run.step(role, agent, message)
    return outcome.output if outcome is not None and outcome.ok else None


Listed = TypeVar("Listed", bound="Choosable")


class Choosable(Protocol):
    """An item the model chooses among: a frozen dataclass whose ``id`` :func:`choose_listed` sets by
    position, rendered with it; ``text`` is what the trace quotes of it."""

    id: str
    text: str

    def render(self) -> str: ...


@dataclass(frozen=True)
class Listing:
    """What the model chose among listed items: its other fields, and the items its id fields name."""

    output: BaseModel
    picked: dict[str, Any]
    """Each id field's item (``None`` for an id that names nothing)."""


async def choose_listed(ctx: AskContext, role: str, prompt: str, heading: str, items: Sequence[Listed],
                        fields: Callable[[Any], dict[str, Any]], picks: Sequence[str], *, name: str, prefix: str,
                        ordered: Callable[[BaseModel], bool] = lambda _output: False, none: bool = False,
                        outcome: Callable[[Listing], str | None] | None = None) -> Listing | None:
    """The model chooses among ``items``, listed under ``heading`` with ids by position (``d1`` …);
    ``fields(ids)`` builds the schema from the ids' enum and ``picks`` names its id fields.

    With the order check (on for a model on this machine, which takes whichever items are listed
    first), the model is asked twice, the items listed in Python's order and reversed, ids by
    position both times; the choice stands only when both name the same items (in the same order
    when ``ordered(output)`` says the order matters) and agree on every other field. When they
    differ and the caller says what a reading works out to (``outcome``), two readings that work out
    to the same answer agree (a date or a figure written in two sentences is two items). ``None``
    when a call failed, the budget had no room, or the two answers differ. ``none``: the ids' enum
    also offers "none" (an id field answered so names no item)."""
    checked = runs_locally(ctx.model_for(role))
    listings = [list(items), list(reversed(items))] if checked else [list(items)]

    async def ask(listing: list[Listed]) -> tuple[BaseModel | None, dict[str, Listed]]:
        relabelled = [replace(item, id=f"{prefix}{i + 1}") for i, item in enumerate(listing)]
        ids = Literal[(*(item.id for item in relabelled), *(("none",) if none else ()))]  # type: ignore[valid-type]
        menu = "\n".join(item.render() for item in relabelled)
        output = await choose(ctx, role, prompt, f"{heading}:\n{menu}\n\nQuestion: {ctx.question}", fields(ids), name=name)
        return output, {r.id: original for r, original in zip(relabelled, listing)}

    answers = await asyncio.gather(*(ask(listing) for listing in listings))
    if any(output is None for output, _ in answers):
        return None
    readings = [{f: by_id.get(getattr(output, f, None)) for f in picks} for output, by_id in answers]
    first = answers[0][0]
    assert first is not None
    if len(answers) == 2:
        second = answers[1][0]
        assert second is not None
        others = {k: v for k, v in first.model_dump().items() if k not in picks}
        same = others == {k: v for k, v in second.model_dump().items() if k not in picks} and (
            [readings[0][f] for f in picks] == [readings[1][f] for f in picks] if ordered(first)
            else {id(readings[0][f]) for f in picks} == {id(readings[1][f]) for f in picks})
        if not same:
            said = lambda output, reading: ", ".join([*(str(v) for k, v in output.model_dump().items() if k not in picks),  # noqa: E731
                                                       *(item.text if item else "nothing" for item in reading.values())])
            candidates = [Listing(first, readings[0]), Listing(second, readings[1])]
            results = [outcome(c) for c in candidates] if outcome is not None else [None, None]
            if results[0] is not None and results[0] == results[1]:
                # Two readings that work out to one answer (the same two days, each written in two
                # sentences) agree on it.
                return candidates[0]
            ctx.notes.append(f"{role}: no choice: listed both ways, it chose {said(first, readings[0])} "
                             f"and then {said(second, readings[1])}")
            return None
    return Listing(first, readings[0])


def _anchor(published: str | None) -> date | None:
    try:
        return date.fromisoformat(published[:10]) if published else None
    except ValueError:
        return None


def _short(text: str, limit: int = 110) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Amount:
    """A number of the evidence (or the question), with its unit and where it was written."""

    id: str
    value: float
    unit: str
    text: str
    where: str
    """``s12`` (a passage) or ``question``."""
    source: str = ""
    published: str | None = None
    sentence: str = ""
    when: date | None = None
    """What the amount is dated: the date its sentence gives, else its source's date."""
    day_stated: bool = False
    """Whether its sentence itself states the day of ``when`` (not only a month, or its source's date)."""
    year_stated: int | None = None
    """The one year its sentence names ("In 2024 the fair drew 52 stalls", "this year"), if it names one."""

    def in_period(self, anchor: Any) -> bool:
        """Whether the question's ``anchor`` (a :class:`~moot.teams.learning.ask.frame.TimeAnchor`)
        dates this amount: for a year, the year its sentence names, else the year it is dated; for a
        month or day, the month it is dated."""
        if anchor.precision == "year":
            year = self.year_stated or (self.when.year if self.when else None)
            return year == anchor.day.year
        return bool(anchor.covers(self.when))

    def render(self) -> str:
        origin = "the question" if self.where == "question" else self.source
        dated = f", {self.when.isoformat()}" if self.when else ""
        return f"{self.id}: {self.text} — “{_short(self.sentence)}” ({origin}{dated})"


@dataclass(frozen=True)
class Day:
    """A date of the evidence (or the question)."""

    id: str
    day: date
    text: str
    where: str
    sentence: str = ""
    source: str = ""
    precision: str = "day"
    """``day``, ``month`` or ``year``: how much of the date the text gives ("1987" is a year, not 1 January)."""
    relative: bool = False
    """Written against its source's date ("last week"): the words mean another day read from elsewhere."""

    def shown(self) -> str:
        """The date as far as the text gives it: ``4 July 2025``, ``July 2025``, ``1987``."""
        if self.precision == "year":
            return str(self.day.year)
        if self.precision == "month":
            return self.day.strftime("%B %Y")
        return self.day.strftime("%-d %B %Y")

    def render(self) -> str:
        origin = "the question" if self.where == "question" else self.source
        return f"{self.id}: {self.shown()} (“{self.text}”) — “{_short(self.sentence)}” ({origin})"


def ranked_passages(ctx: AskContext, limit: int = 10) -> list[Passage]:
    return sorted((p for p in ctx.recall.passages if p.score > 0), key=lambda p: -p.score)[:limit]


def dated_as(mentions: Sequence[Any], anchor: date | None) -> tuple[date | None, bool]:
    """What a sentence is dated, from the dates it writes (``find_dates`` against its source's date,
    ``anchor``) — its latest full date not after its source's, else a month it names, else its
    source's date — and whether the sentence states that day itself."""
    full = [m.day for m in mentions if m.precision == "day" and (anchor is None or m.day <= anchor)]
    if full:
        return max(full), True
    months = [m.day for m in mentions if m.precision == "month" and (anchor is None or m.day <= anchor)]
    return (max(months) if months else anchor), False


def amounts(ctx: AskContext, *, passages: list[Passage] | None = None, limit: int = MAX_OPTIONS) -> list[Amount]:
    """The question's numbers, the column totals of tables a best-matching passage is a row of
    (:mod:`moot.text.tables`; not when ``passages`` are given), then the numbers of the
    best-matching passages, each with an id ``q1`` ….

    When the question names dates ("by May than by March", "in 2025"), the amounts dated in those
    months or years come first: the code proposes, the model still chooses."""
    found: list[Amount] = []
    # A year ("the 2024 open day", "2031 budget") is a time, not an amount to add or divide: the
    # frame holds the question's as anchors, and a passage's dates its sentences. A figure that
    # only looks like one ("2000 members") stays when its unit is the one asked.
    asked = ctx.frame.unit if ctx.frame is not None else ""
    # A time of day, a time zone's offset or the "16" of "under-16 tickets" is written but is no
    # amount (``Quantity.amount``): it is not listed to work with.
    amount = lambda q: q.amount and (q.year is None or bool(asked and same_unit(q.unit, asked)))  # noqa: E731
    for q in find_quantities(ctx.question, anchor=ctx.anchor):
        if amount(q):
            found.append(Amount("", q.value, q.unit, q.text, "question", sentence=ctx.question))
    ranked = passages if passages is not None else ranked_passages(ctx)
    for table in ctx.recall.tables if passages is None else []:
        # A table's column total (added up in code), when a row of that table is among the passages.
        total = table.total
        row = table_row(table, ranked)
        if row is not None:
            found.append(Amount("", total.total, total.unit, total.shown(), row.id, table.source, table.published,
                                f"the total of the column “{total.header}”: {' + '.join(total.cells)}"))
    listed: list[Amount] = []
    for p in ranked:
        anchor = _anchor(p.published)
        mentions = find_dates(p.text, anchor=anchor)
        when, stated = dated_as(mentions, anchor)
        quantities = find_quantities(p.text, anchor=anchor)
        years = {m.day.year for m in mentions if m.precision == "year"}
        years |= {q.year for q in quantities if q.year is not None and not amount(q)}
        year = next(iter(years)) if len(years) == 1 else None
        for q in quantities:
            if amount(q):
                listed.append(Amount("", q.value, q.unit, q.text, p.id, p.source, p.published, p.text, when, stated, year))
    anchors = ctx.frame.anchors if ctx.frame is not None else []
    if anchors:
        listed.sort(key=lambda a: not any(a.in_period(anchor) for anchor in anchors))
    return [replace(a, id=f"q{i + 1}") for i, a in enumerate([*found, *listed][:limit])]


DATELINE_WORDS = 8
"""The most words outside its dates a dateline has ("Alderton Parish Board notice, 3 May 2021.")."""


def dateline(text: str, mentions: Sequence[Any], published: date | None = None) -> bool:
    """Whether a sentence with dates is a dateline or a byline ("Alderton, 3 May 2021.", "Parish
    Board notice, 2 May"): no word in lower case outside its dates, or — when it states its
    source's own date — a few words and no verb (the tagger of :mod:`moot.text.phrases`). It says
    where and when a report was written, which is provenance, not an event of the world."""
    if not mentions:
        return False
    rest = text
    for m in sorted(mentions, key=lambda m: m.start, reverse=True):
        rest = rest[:m.start] + " " + rest[m.end:]
    outside = [w for w in rest.split() if any(c.isalpha() for c in w)]
    if not any(w[:1].islower() for w in outside):
        return True
    if published is None or not any(m.day == published for m in mentions) or len(outside) > DATELINE_WORDS:
        return False
    return not any(t[1].startswith("VB") for t in phrases.tag(text))


async def tagger_ready() -> None:
    """Load the tagger off the event loop (about a second, once a process) before :func:`days`."""
    await asyncio.to_thread(phrases.warm)


def days(ctx: AskContext, *, limit: int = MAX_OPTIONS) -> list[Day]:
    """The question's dates, then those of the best-matching passages, each with an id ``d1`` …

    A passage's date is listed once however often it is written ("on 14 March … said today"), and
    datelines are not listed: each listed date is an event's, so the model chooses among fewer."""
    found: list[Day] = []
    for m in find_dates(ctx.question, anchor=ctx.anchor):
        found.append(Day(f"d{len(found) + 1}", m.day, m.text, "question", ctx.question, precision=m.precision,
                         relative=m.relative))
    for p in ranked_passages(ctx, limit=12):
        anchor = _anchor(p.published)
        mentions = find_dates(p.text, anchor=anchor)
        if dateline(p.text, mentions, anchor):
            continue
        seen: set[date] = set()
        for m in mentions:
            if m.day in seen:
                continue
            seen.add(m.day)
            if m.precision != "year" or not any(d.day == m.day for d in found):
                found.append(Day(f"d{len(found) + 1}", m.day, m.text, p.id, p.text, p.source, m.precision, m.relative))
    return [replace(d, id=f"d{i + 1}") for i, d in enumerate(within_anchors(found, ctx.frame.anchors if ctx.frame else []))][:limit]


PRECISION = {"day": 0, "month": 1, "year": 2}
"""How coarse a date's precision is."""


def finer(a: Day, b: Day) -> bool:
    """Whether ``a`` is a more exact date within ``b``'s month or year (11 March 2025 within "March")."""
    if PRECISION.get(a.precision, 0) >= PRECISION.get(b.precision, 0):
        return False
    return a.day.year == b.day.year and (b.precision == "year" or a.day.month == b.day.month)


def within_anchors(found: list[Day], anchors: Sequence[Any]) -> list[Day]:
    """The dates a span can run between, as the question's own dates place them.

    When the question names two or more periods ("between the 2024 open day and the 2025 one", "from
    March to May") and each holds a date of the sources, the span runs between those: only the
    sources' dates within them are listed, and not the question's own year or month, which the
    sources' date says more exactly. With one period named (a span may run past it) the dates in
    it come first. Otherwise the list as found."""
    named = periods(list(anchors))
    if not named:
        return found
    evidence = [d for d in found if d.where != "question"]
    inside = [d for d in evidence if any(a.covers(d.day, d.precision) for a in named)]
    if len(named) >= 2 and all(any(a.covers(d.day, d.precision) for d in inside) for a in named):
        # A bare year or month ("this year", "in March") beside a day within it says less than the day.
        exact = [d for d in inside if not any(finer(o, d) for o in inside)]
        return [*(d for d in found if d.where == "question" and d.precision == "day"), *exact]
    return sorted(found, key=lambda d: d.where != "question" and d not in inside)


def same_unit(a: str, b: str) -> bool:
    """Units that name one unit (``tonnes`` and ``tonne``, ``km`` and ``kilometres``; both empty). A
    rate is its own unit: ``°C per hour`` is not ``°C``."""
    aw, bw = a.lower().split(), b.lower().split()

    def per(words: list[str]) -> list[str]:
        return [stem(unit_name(w)) for w in words[words.index("per") + 1:]] if "per" in words else []

    return unit_key(a) == unit_key(b) and per(aw) == per(bw)


def of_unit(found: Sequence[Amount], unit: str) -> list[Amount]:
    """The amounts of ``unit`` (none when ``unit`` is empty)."""
    return [a for a in found if unit and same_unit(a.unit, unit)]


def fmt(value: float) -> str:
    """A number as a person writes it: ``1,200``, ``3.5``, ``0.25``."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


__all__ = ["Amount", "Day", "Listing", "PRECISION", "amounts", "choose", "choose_listed", "dateline", "tagger_ready", "days", "finer", "fmt", "of_unit", "within_anchors", "ranked_passages", "same_unit"]
