"""The decision's types: options, typed positions on them, and the calendar claims they make.

The request names options (read by the model under a schema, :mod:`.options`); a specialist
takes one *position* on them — do an option as planned, skip it, shorten it to N minutes, move
it to a free slot, or split the contested time between two options — chosen from the positions
Python proposes here from the options and the calendar's free time. A position *claims* the
calendar: each option it speaks of gets a time or none (skipped). Whether two positions can both
hold is decided from those claims (:func:`clash`): two different claims on one option contradict
each other; claims of different options on overlapping times compete for the same time.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Literal

from pydantic import BaseModel

PHYSICAL = "physical activity"
"""An option's kind when the model named it, the same both ways round, as the sport or exercise among
the options (the team's ``_physical``); readiness evidence speaks to it. Every other option is ``other``."""
PositionKind = Literal["do", "skip", "shorten", "move", "split"]
POSITION_KINDS: tuple[str, ...] = ("do", "skip", "shorten", "move", "split")
ItemState = Literal["as planned", "shortened", "moved", "skipped"]

WAKING_HOURS = (6, 22)
"""Free time is looked for between 06:00 and 22:00 (a move never lands in the night)."""
MIN_FREE_MINUTES = 30
DEFAULT_OPTION_MINUTES = 60
"""An option the request gives a time but no length (and no calendar event) is taken to last an hour."""
STEP_MINUTES = 15


class TimeWindow(BaseModel):
    """A span of time (the calendar claims and the decision window are these)."""

    start: datetime
    end: datetime

    def overlaps(self, other: TimeWindow) -> bool:
        return self.start < other.end and other.start < self.end

    @property
    def minutes(self) -> int:
        return int((self.end - self.start).total_seconds() // 60)

    def label(self) -> str:
        same_day = self.start.date() == self.end.date() or (self.end.time() == time(0) and self.end - self.start <= timedelta(days=1))
        return f"{self.start:%a %H:%M}–{self.end:%H:%M}" if same_day else f"{self.start:%a %H:%M}–{self.end:%a %H:%M}"


class Option(BaseModel):
    """One thing the user is choosing between, in the request's words."""

    option_id: str
    """``O1``, ``O2``, … in the order the request names them."""
    label: str
    event: str | None = None
    """The calendar event the option is, when the request's option is on the calendar."""
    window: TimeWindow
    """Its planned time: the event's, the time the request gives, the time of the option it is set
    against (an alternative to a timed option competes for its slot), or the decision window."""
    time_from: Literal["calendar", "request", "alternative", "decision window"] = "decision window"
    kind: Literal["physical activity", "other"] = "other"

    def name(self) -> str:
        return f"'{self.label}'"


def with_verb(verb: str, label: str) -> str:
    """``do 'interval run'``; a label that a request worded with the same verb keeps its own
    (``'do the hill repeats'``, not ``do 'do the hill repeats'``)."""
    first = label.split(maxsplit=1)[0].lower() if label.strip() else ""
    return f"'{label}'" if first == verb else f"{verb} '{label}'"


class Position(BaseModel):
    """A typed position on the decision (the specialist picks one that Python proposed)."""

    kind: PositionKind
    option: str
    """The option it is about (for ``split``: the one that goes first)."""
    then: str | None = None
    """For ``split``: the option that goes second."""
    at: TimeWindow | None = None
    """For ``shorten``: the shorter time; ``move``: the new time; ``split``: the first part."""
    then_at: TimeWindow | None = None
    """For ``split``: the second part."""

    def key(self) -> str:
        spans = [w.start.isoformat() + "/" + w.end.isoformat() if w else "" for w in (self.at, self.then_at)]
        return "|".join([self.kind, self.option, self.then or "", *spans])

    @property
    def minutes(self) -> int | None:
        """For ``shorten``: the new length."""
        return self.at.minutes if self.kind == "shorten" and self.at else None

    def claims(self, options: dict[str, Option]) -> dict[str, TimeWindow | None]:
        """Option id → the time this position gives it, or ``None`` when it skips it."""
        if self.kind == "do":
            return {self.option: options[self.option].window}
        if self.kind == "skip":
            return {self.option: None}
        if self.kind == "split" and self.then:
            return {self.option: self.at, self.then: self.then_at}
        return {self.option: self.at}


Claims = dict[str, "TimeWindow | None"]


def describe(position: Position, options: dict[str, Option]) -> str:
    """The position in words (Python's, never a model's)."""
    o = options[position.option]
    if position.kind == "do":
        return f"{with_verb('do', o.label)} as planned ({o.window.label()})"
    if position.kind == "skip":
        return f"skip {o.name()}"
    if position.kind == "shorten" and position.at:
        return f"shorten {o.name()} to {position.at.label()}"
    if position.kind == "move" and position.at:
        return f"move {o.name()} to {position.at.label()}"
    if position.kind == "split" and position.then and position.at and position.then_at:
        return f"split the time: {o.name()} {position.at.label()}, then {options[position.then].name()} {position.then_at.label()}"
    return f"{position.kind} {o.name()}"


# --------------------------------------------------------------------------- conflicts between claims


def clash(a: Claims, b: Claims) -> tuple[Literal["contradiction", "resource_competition"], list[str]] | None:
    """Whether two sets of claims cannot both hold, and about which options.

    A contradiction: the same option gets a different time (or none) from each. Resource
    competition: different options get overlapping times — the calendar decides it."""
    same = [o for o in a if o in b and a[o] != b[o]]
    if same:
        return "contradiction", same
    for oa, wa in a.items():
        for ob, wb in b.items():
            if oa != ob and wa is not None and wb is not None and wa.overlaps(wb):
                return "resource_competition", sorted({oa, ob})
    return None


def merge_claims(*claims: Claims) -> Claims | None:
    """One set of claims from compatible ones, or ``None`` when two of them clash."""
    merged: Claims = {}
    for c in claims:
        if clash(merged, c) is not None:
            return None
        merged.update(c)
    return merged


# --------------------------------------------------------------------------- plans


class PlanItem(BaseModel):
    """What a decision (or a compromise) does to one option."""

    option: str
    label: str
    state: ItemState
    at: TimeWindow | None = None
    planned: TimeWindow | None = None

    def outcome(self) -> str:
        """What happens to the option, as a phrase (``'interval run' shortened to Wed 06:30–07:00``)."""
        name = f"'{self.label}'"
        if self.state == "skipped" or self.at is None:
            return f"{name} skipped"
        if self.state == "as planned":
            return f"{name} as planned ({self.at.label()})"
        return f"{name} {self.state} to {self.at.label()}"

    def describe(self) -> str:
        """What to do about the option, as an instruction (``do 'interval run', shortened to …``)."""
        if self.state == "skipped" or self.at is None:
            return f"skip '{self.label}'"
        done = with_verb("do", self.label)
        if self.state == "as planned":
            return f"{done} as planned ({self.at.label()})"
        if self.state == "shortened":
            return f"{done}, shortened to {self.at.label()}"
        return f"{done}, moved to {self.at.label()}"


def state_of(at: TimeWindow | None, planned: TimeWindow) -> ItemState:
    if at is None:
        return "skipped"
    if at == planned:
        return "as planned"
    if planned.start <= at.start and at.end <= planned.end:
        return "shortened"
    return "moved"


def plan_items(claims: Claims, options: dict[str, Option]) -> list[PlanItem]:
    """Every option's fate under ``claims``: claimed options as claimed; an unclaimed option gives
    way (is skipped) when it overlaps a claimed time, else stays as planned."""
    taken = [w for w in claims.values() if w is not None]
    items = []
    for oid, o in options.items():
        if oid in claims:
            at = claims[oid]
        else:
            at = None if any(o.window.overlaps(w) for w in taken) else o.window
        items.append(PlanItem(option=oid, label=o.label, state=state_of(at, o.window), at=at, planned=o.window))
    return items


# --------------------------------------------------------------------------- proposals


def _round_down(minutes: int) -> int:
    return max(STEP_MINUTES, minutes // STEP_MINUTES * STEP_MINUTES)


def free_slots(busy: list[TimeWindow], now: datetime, hours: int = 36) -> list[TimeWindow]:
    """Gaps of at least 30 minutes between ``busy`` times, in waking hours, from ``now`` for ``hours``."""
    horizon = now + timedelta(hours=hours)
    out: list[TimeWindow] = []
    day = now.date()
    while day <= horizon.date():
        lo = max(now, datetime.combine(day, time(WAKING_HOURS[0]), tzinfo=now.tzinfo))
        hi = min(horizon, datetime.combine(day, time(WAKING_HOURS[1]), tzinfo=now.tzinfo))
        cursor = lo
        for b in sorted((b for b in busy if b.end > lo and b.start < hi), key=lambda b: b.start):
            if b.start > cursor and (b.start - cursor) >= timedelta(minutes=MIN_FREE_MINUTES):
                out.append(TimeWindow(start=cursor, end=b.start))
            cursor = max(cursor, b.end)
        if hi > cursor and (hi - cursor) >= timedelta(minutes=MIN_FREE_MINUTES):
            out.append(TimeWindow(start=cursor, end=hi))
        day += timedelta(days=1)
    return out


def _aligned(moment: datetime) -> datetime:
    """Up to the next quarter hour (a free slot starting at 07:10 offers 07:15)."""
    extra = (-moment.minute) % STEP_MINUTES
    return (moment + timedelta(minutes=extra)).replace(second=0, microsecond=0)


def fitting_slots(option: Option, free: list[TimeWindow], limit: int = 2) -> list[TimeWindow]:
    """Times ``option`` could move to at full length: the free slots nearest its planned time."""
    need = timedelta(minutes=option.window.minutes)
    fits = []
    for slot in free:
        start = _aligned(slot.start)
        if start + need <= slot.end and not slot.overlaps(option.window):
            fits.append(TimeWindow(start=start, end=start + need))
    fits.sort(key=lambda w: abs((w.start - option.window.start).total_seconds()))
    return fits[:limit]


def shortened(option: Option) -> TimeWindow | None:
    """Half its time (to the quarter hour) from its start, if it is long enough to halve."""
    if option.window.minutes < 2 * STEP_MINUTES:
        return None
    return TimeWindow(start=option.window.start, end=option.window.start + timedelta(minutes=_round_down(option.window.minutes // 2)))


def split_times(first: Option, second: Option) -> tuple[TimeWindow, TimeWindow] | None:
    """The contested time (both options' span) cut in two at the quarter hour nearest its middle."""
    if not first.window.overlaps(second.window):
        return None
    start, end = min(first.window.start, second.window.start), max(first.window.end, second.window.end)
    half = _round_down(int((end - start).total_seconds() // 60) // 2)
    middle = start + timedelta(minutes=half)
    if middle <= start or middle >= end:
        return None
    return TimeWindow(start=start, end=middle), TimeWindow(start=middle, end=end)


def candidate_positions(options: dict[str, Option], free: list[TimeWindow]) -> list[Position]:
    """Every position Python offers the specialists: do, skip, shorten, move (to free time) each
    option, and split the time between two options that overlap, in both orders."""
    out: list[Position] = []
    for oid in options:
        out.append(Position(kind="do", option=oid))
    for oid in options:
        out.append(Position(kind="skip", option=oid))
    for oid, o in options.items():
        short = shortened(o)
        if short is not None:
            out.append(Position(kind="shorten", option=oid, at=short))
    for oid, o in options.items():
        for slot in fitting_slots(o, free):
            out.append(Position(kind="move", option=oid, at=slot))
    ids = list(options)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            parts = split_times(options[a], options[b])
            if parts is None:
                continue
            out.append(Position(kind="split", option=a, then=b, at=parts[0], then_at=parts[1]))
            out.append(Position(kind="split", option=b, then=a, at=parts[0], then_at=parts[1]))
    return out


def readiness_positions(direction: str, options: dict[str, Option], positions: list[Position]) -> list[Position] | None:
    """The positions that readiness evidence allows, or ``None`` when no option is a physical activity.

    ``lower`` allows skipping or moving the physical activity and doing another option as planned;
    ``higher`` allows doing the physical activity as planned; ``usual`` (nothing against either)
    allows splitting the time with it first, else shortening it."""
    physical = {oid for oid, o in options.items() if o.kind == PHYSICAL}
    if not physical:
        return None
    if direction == "lower":
        return [p for p in positions if (p.option in physical and p.kind in ("skip", "move"))
                or (p.kind == "do" and p.option not in physical)]
    if direction == "higher":
        return [p for p in positions if p.kind == "do" and p.option in physical]
    split = [p for p in positions if p.kind == "split" and p.option in physical]
    return split or [p for p in positions if p.kind == "shorten" and p.option in physical]


def lean_positions(options: dict[str, Option], positions: list[Position]) -> list[Position]:
    """The few positions a specialist is asked to choose among when a small model must choose and no
    evidence narrows them: one for each option it may favour, and one compromise.

    Favouring an option is doing it as planned, which takes the others' time where they overlap;
    an option that overlaps none of the others is favoured by skipping them instead, and a lone
    option may be skipped. The compromise is the time split with the first option first, else the
    first option shortened. Asked among ten or more positions, the 0.5B model took whichever was
    listed first; among three it still mostly does, and the order check (asking it both ways
    round) drops those choices."""
    out: list[Position] = []
    for oid, o in options.items():
        others = [k for k in options if k != oid]
        if all(o.window.overlaps(options[k].window) for k in others):
            out += [p for p in positions if p.kind == "do" and p.option == oid]
        else:
            out += [p for p in positions if p.kind == "skip" and p.option in others]
    if len(options) == 1:  # "should I keep working?": against it is not doing it
        out += [p for p in positions if p.kind == "skip"]
    split = [p for p in positions if p.kind == "split"]
    out += split[:1] or [p for p in positions if p.kind == "shorten"][:1]
    unique: list[Position] = []
    for p in out:
        if p not in unique:
            unique.append(p)
    return unique


__all__ = [
    "DEFAULT_OPTION_MINUTES", "PHYSICAL", "POSITION_KINDS", "Claims", "ItemState", "Option", "PlanItem", "Position",
    "PositionKind",
    "TimeWindow", "candidate_positions", "clash", "describe", "fitting_slots", "free_slots", "lean_positions", "merge_claims",
    "plan_items", "readiness_positions", "shortened", "split_times", "state_of",
]
