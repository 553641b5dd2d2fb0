"""Dates written in text: ``2026-07-06``, ``6 July 2026``, ``July 6th, 2026``, ``July 2026``,
``6 July`` (the year from an anchor), ``in 2024``, and ``yesterday`` / ``last Tuesday`` /
``next month`` resolved against an anchor date (usually the document's publication date).

These are formats of written English dates, read with the calendar (an impossible date such
as ``31 February 2026`` is not a date). Month names count only capitalised, as English writes
them, so the verbs "may" and "march" are never dates; a bare weekday ("on Friday") is left
alone because it can point either way from the anchor.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

Precision = Literal["day", "month", "year"]

_MONTH_NAMES = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTH_ABBR = {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTH_ABBR["sept"] = 9
_MONTH = (
    r"(?P<month>(?:"
    + "|".join(sorted({n.capitalize() for n in [*_MONTH_NAMES, *_MONTH_ABBR]}, key=len, reverse=True))
    + r")\.?)"
)
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:1[6-9]|2[0-2])\d{2})"
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(rf"\b{_YEAR}-(?P<mnum>[01]\d)-(?P<day>[0-3]\d)\b")),
    ("dmy", re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}\b")),
    ("mdy", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b")),
    ("my", re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b")),
    ("dm", re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH}(?![\w])")),
    ("md", re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?![.,]?\d)")),
    ("month", re.compile(rf"(?i:\b(?:in|by|since|until|till|from|before|after|during|through|of|to|than|and|or)\s+)(?-i:{_MONTH})(?![\w.]|\s+\d)")),
    ("year", re.compile(rf"(?i:\b(?:in|since|by|until|till|from|before|after|during|through|of|to)\s+){_YEAR}\b(?![.,]?\d)")),
    ("rel-day", re.compile(r"(?i)\b(?P<word>yesterday|today|tomorrow)\b")),
    ("rel-weekday", re.compile(r"(?i)\b(?P<which>last|next|this)\s+(?P<weekday>" + "|".join(_WEEKDAYS) + r")\b")),
    ("rel-period", re.compile(r"(?i)\b(?P<which>last|next|this)\s+(?P<period>week|month|year)\b")),
]


@dataclass(frozen=True, slots=True)
class DateMention:
    """One date written in a text."""

    text: str
    """As written."""
    start: int
    end: int
    day: date
    """The date; for a month or a year, its first day."""
    precision: Precision
    relative: bool = False
    """Resolved against the anchor (``6 July`` without a year, ``last Tuesday``)."""


def _month_number(text: str) -> int:
    key = text.rstrip(".").lower()
    return _MONTH_NAMES.get(key) or _MONTH_ABBR[key]


def _safe_day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _resolve(kind: str, match: re.Match[str], anchor: date | None) -> tuple[date, Precision, bool] | None:
    groups = match.groupdict()
    if kind == "iso":
        found = _safe_day(int(groups["year"]), int(groups["mnum"]), int(groups["day"]))
        return (found, "day", False) if found else None
    if kind in ("dmy", "mdy"):
        found = _safe_day(int(groups["year"]), _month_number(groups["month"]), int(groups["day"]))
        return (found, "day", False) if found else None
    if kind == "my":
        return date(int(groups["year"]), _month_number(groups["month"]), 1), "month", False
    if kind == "year":
        return date(int(groups["year"]), 1, 1), "year", False
    if anchor is None:
        return None
    if kind == "month":
        month = _month_number(groups["month"])
        # the month's most recent occurrence not after the anchor (a report speaks of the past)
        year = anchor.year if month <= anchor.month else anchor.year - 1
        return date(year, month, 1), "month", True
    if kind in ("dm", "md"):
        found = _safe_day(anchor.year, _month_number(groups["month"]), int(groups["day"]))
        return (found, "day", True) if found else None
    if kind == "rel-day":
        offset = {"yesterday": -1, "today": 0, "tomorrow": 1}[groups["word"].lower()]
        return anchor + timedelta(days=offset), "day", True
    if kind == "rel-weekday":
        target = _WEEKDAYS[groups["weekday"].lower()]
        which = groups["which"].lower()
        if which == "last":
            back = (anchor.weekday() - target) % 7 or 7
            return anchor - timedelta(days=back), "day", True
        ahead = (target - anchor.weekday()) % 7
        if which == "next":
            ahead = ahead or 7
        return anchor + timedelta(days=ahead), "day", True
    if kind == "rel-period":
        step = {"last": -1, "this": 0, "next": 1}[groups["which"].lower()]
        period = groups["period"].lower()
        if period == "year":
            return date(anchor.year + step, 1, 1), "year", True
        if period == "month":
            month_index = anchor.year * 12 + anchor.month - 1 + step
            return date(month_index // 12, month_index % 12 + 1, 1), "month", True
        monday = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=step)
        return monday, "day", True
    return None


def find_dates(text: str, *, anchor: date | None = None) -> list[DateMention]:
    """Every date written in ``text``, in order; the longest form wins where two overlap.

    ``anchor`` (a publication date) resolves the forms that need one; without it they are skipped.
    """
    taken: list[tuple[int, int]] = []
    found: list[DateMention] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span("year") if kind == "year" else match.span("month") if kind == "month" else match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            resolved = _resolve(kind, match, anchor)
            if resolved is None:
                continue
            day, precision, relative = resolved
            taken.append((start, end))
            found.append(DateMention(text[start:end], start, end, day, precision, relative))
    return sorted(found, key=lambda m: m.start)


TIME_UNITS = frozenset({"second", "minute", "hour", "day", "night", "week", "fortnight", "month", "year", "decade", "century",
                        "summer", "autumn", "winter"})
"""The calendar's and the clock's units of time, singular (a plural is read by dropping its ``s``), and
the seasons whose names mean nothing else ("spring" and "fall" also name a source and a drop)."""


def time_unit(unit: str) -> str | None:
    """The clock's or the calendar's unit a quantity's unit names, singular (``hours`` → ``hour``,
    ``a 9-hour outage`` → ``hour``), or None: the quantity is then not a length of time. Seasons
    are not units of length."""
    low = unit.strip().lower()
    singular = low[:-1] if low.endswith("s") else low
    return singular if singular in TIME_UNITS - {"summer", "autumn", "winter"} else None


def is_time_unit(unit: str) -> bool:
    """Whether a quantity's unit is one of the clock's or the calendar's (``14 hours``, ``3 nights``)."""
    return time_unit(unit) is not None


_FUNCTION_WORDS = frozenset({"a", "an", "the", "this", "that", "these", "those", "last", "next", "past", "every", "each",
                             "several", "few", "many", "some", "of", "in", "on", "for", "and", "or"})
"""The words around a time that leave it a time ("the past decade", "every few weeks")."""


def names_a_time(phrase: str) -> bool:
    """Whether a phrase names only a time: a month ("July"), a weekday, a unit of time ("hours",
    "two years"), a season ("summer"), or a date, with numbers and function words around them
    ("the past decade"). A time dates what a sentence says; it is not a thing the sentence is about."""
    from moot.text.numbers import parse_number  # numbers reads dates: imported here, not at the top

    content = [t for t in re.findall(r"[A-Za-z]+|\d+", phrase) if t.lower() not in _FUNCTION_WORDS]

    def unit(token: str) -> bool:
        low = token.lower()
        singular = low[:-1] if low.endswith("s") and low[:-1] in TIME_UNITS else low
        return singular in TIME_UNITS or low in _WEEKDAYS or (token[:1].isupper() and low in _MONTH_NAMES)

    return any(unit(t) for t in content) and all(unit(t) or parse_number(t) is not None for t in content)


_ISO_MONTH = re.compile(r"(\d{4})-(\d{2})")
_ISO_YEAR = re.compile(r"\d{4}")


def publication_date(text: str) -> date | datetime | None:
    """A document's date as its metadata writes it: an ISO day or moment (``2026-02-20``,
    ``2026-02-20T09:30``), or a coarser date read as its first day — an ISO month (``2026-09``, a
    monthly newsletter's), a year (``2026``), a month in words (``September 2026``) — or a day in
    words (``6 July 2026``). None when the text is no date. A coarse date is kept, not refused:
    refusing it dropped the whole document, which a reader would have read."""
    text = " ".join(str(text).split())
    try:
        return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
    except ValueError:
        pass
    if (month := _ISO_MONTH.fullmatch(text)) is not None:
        year, number = int(month.group(1)), int(month.group(2))
        return date(year, number, 1) if 1 <= number <= 12 and year >= 1 else None
    if _ISO_YEAR.fullmatch(text) and int(text) >= 1:
        return date(int(text), 1, 1)
    mentions = find_dates(text)
    if len(mentions) == 1 and mentions[0].precision in ("day", "month") and mentions[0].text == text.rstrip("."):
        return mentions[0].day
    return None


__all__ = ["DateMention", "Precision", "TIME_UNITS", "find_dates", "is_time_unit", "names_a_time", "publication_date",
           "time_unit"]
