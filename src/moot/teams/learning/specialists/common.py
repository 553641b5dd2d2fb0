"""What specialists share: one way to let the model choose, and the evidence's amounts and dates with ids."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from pydantic import BaseModel, create_model

from moot.models.base import ModelSettings
from moot.runtime import SubAgent, load_prompt
from moot.teams.learning.ask.drafts import AskContext
from moot.teams.learning.ask.frame import CHOICE_TOKENS
from moot.teams.learning.ask.recall import Passage
from moot.text.dates import find_dates
from moot.text.numbers import find_quantities, unit_name
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


def dated(text: str, published: str | None) -> date | None:
    """What a sentence is dated: its latest full date not after its source's, else a month it names,
    else its source's date."""
    anchor = _anchor(published)
    mentions = find_dates(text, anchor=anchor)
    full = [m.day for m in mentions if m.precision == "day" and (anchor is None or m.day <= anchor)]
    if full:
        return max(full)
    months = [m.day for m in mentions if m.precision == "month" and (anchor is None or m.day <= anchor)]
    return max(months) if months else anchor


def amounts(ctx: AskContext, *, passages: list[Passage] | None = None, limit: int = MAX_OPTIONS) -> list[Amount]:
    """The question's numbers, then those of the best-matching passages, each with an id ``q1`` ….

    When the question names dates ("by May than by March"), the amounts dated in those months come
    first: Python proposes, the model still chooses."""
    found: list[Amount] = []
    for q in find_quantities(ctx.question, anchor=ctx.anchor):
        found.append(Amount("", q.value, q.unit, q.text, "question", sentence=ctx.question))
    listed: list[Amount] = []
    for p in passages if passages is not None else ranked_passages(ctx):
        when = dated(p.text, p.published)
        for q in find_quantities(p.text, anchor=_anchor(p.published)):
            listed.append(Amount("", q.value, q.unit, q.text, p.id, p.source, p.published, p.text, when))
    asked = {(d.year, d.month) for d in ctx.frame.dates} if ctx.frame is not None else set()
    if asked:
        listed.sort(key=lambda a: not (a.when is not None and (a.when.year, a.when.month) in asked))
    return [replace(a, id=f"q{i + 1}") for i, a in enumerate([*found, *listed][:limit])]


def days(ctx: AskContext, *, limit: int = MAX_OPTIONS) -> list[Day]:
    """The question's dates, then those of the best-matching passages, each with an id ``d1`` …"""
    found: list[Day] = []
    for m in find_dates(ctx.question, anchor=ctx.anchor):
        found.append(Day(f"d{len(found) + 1}", m.day, m.text, "question", ctx.question, precision=m.precision,
                         relative=m.relative))
    for p in ranked_passages(ctx, limit=12):
        for m in find_dates(p.text, anchor=_anchor(p.published)):
            if m.precision != "year" or not any(d.day == m.day for d in found):
                found.append(Day(f"d{len(found) + 1}", m.day, m.text, p.id, p.text, p.source, m.precision, m.relative))
    return found[:limit]


def same_unit(a: str, b: str) -> bool:
    """Units that name one unit (``tonnes`` and ``tonne``, ``km`` and ``kilometres``; both empty)."""
    aw, bw = a.split(), b.split()
    return bool(aw) == bool(bw) and (not aw or stem(unit_name(aw[0])) == stem(unit_name(bw[0])))


def fmt(value: float) -> str:
    """A number as a person writes it: ``1,200``, ``3.5``, ``0.25``."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


__all__ = ["Amount", "Day", "amounts", "choose", "days", "fmt", "ranked_passages", "same_unit"]
