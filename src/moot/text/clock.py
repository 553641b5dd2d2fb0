"""Times of day written in text: ``07:30``, ``7:30 pm``, ``7am``, ``6 p.m.``, ``noon``, ``midnight``.

These are formats of written clock times. A bare number ("at 7") is left alone: it may be an
hour, a count or a page. :func:`next_occurrence` turns a time of day into a moment, on a day
the text names (``tomorrow``, ``2026-11-25``, read by :func:`moot.text.find_dates`) or else the
first one after an anchor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from moot.text.dates import find_dates

_MERIDIEM = r"(?P<mer>[ap])\.?\s?m\.?(?![a-z])"
_PATTERNS = (
    re.compile(rf"(?i)(?<![\d:])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?![\d]|:\d)(?:\s?{_MERIDIEM})?"),
    re.compile(rf"(?i)(?<![\d:.,])(?P<h>1[0-2]|0?[1-9])\s?{_MERIDIEM}"),
    re.compile(r"(?i)\b(?P<word>noon|midday|midnight)\b"),
)


@dataclass(frozen=True, slots=True)
class ClockTime:
    """One time of day written in a text."""

    hour: int
    minute: int
    text: str
    """As written."""
    start: int
    end: int

    @property
    def time(self) -> time:
        return time(self.hour, self.minute)


def _hour(hour: int, meridiem: str | None) -> int | None:
    if not meridiem:
        return hour
    if hour > 12 or hour == 0:
        return None  # "14:00 pm" is not a time
    if meridiem.lower() == "a":
        return 0 if hour == 12 else hour
    return 12 if hour == 12 else hour + 12


def find_clock_times(text: str) -> list[ClockTime]:
    """Every time of day written in ``text``, in order."""
    found: list[ClockTime] = []
    taken: list[tuple[int, int]] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            groups = match.groupdict()
            if groups.get("word"):
                hour, minute = (0, 0) if groups["word"].lower() == "midnight" else (12, 0)
            else:
                converted = _hour(int(groups["h"]), groups.get("mer"))
                if converted is None:
                    continue
                hour, minute = converted, int(groups.get("m") or 0)
            taken.append((start, end))
            found.append(ClockTime(hour, minute, text[start:end], start, end))
    return sorted(found, key=lambda c: c.start)


def next_occurrence(clock: ClockTime, text: str, anchor: datetime) -> datetime:
    """The moment ``clock`` means in ``text``: on the day-precise date written nearest to it
    (``tomorrow at 7am``), else its first occurrence after ``anchor``; in ``anchor``'s time zone."""
    days = [d for d in find_dates(text, anchor=anchor.date()) if d.precision == "day"]
    if days:
        nearest = min(days, key=lambda d: min(abs(d.start - clock.end), abs(clock.start - d.end)))
        return datetime.combine(nearest.day, clock.time, tzinfo=anchor.tzinfo)
    moment = datetime.combine(anchor.date(), clock.time, tzinfo=anchor.tzinfo)
    return moment if moment > anchor else moment + timedelta(days=1)


__all__ = ["ClockTime", "find_clock_times", "next_occurrence"]
