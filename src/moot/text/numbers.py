"""Numbers and quantities written in text: ``95 tonnes``, ``3.1 million euros``, ``€450,000``,
``12%``, ``6.1 mg/L``, ``120-tonne``, ``twenty-three boats``, ``$4.50 per kg``.

The number is read by format (digits with thousands separators and decimals, a scale word,
a currency sign or a percent sign); number words are read by text2num, a maintained parser
of written numbers; the unit is the word written right after the number (and a ``per …``
that follows it). Dates are not quantities: spans that :func:`moot.text.find_dates` reads as
dates are skipped, so ``6 July 2026`` gives no 6 and no 2026.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from text_to_num import text2num

from moot.text.dates import find_dates, is_time_unit
from moot.text.words import STOPWORDS, stem

_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "bn": 1e9, "m": 1e6, "k": 1e3}
_CURRENCY = {"£": "pounds", "$": "dollars", "€": "euros", "¥": "yen"}
# English number words: a closed class of the language (text2num parses the run they form).
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million "
    "billion dozen"
).split()
_WORD_RUN = re.compile(
    r"(?i)\b(?:" + "|".join(_NUMBER_WORDS) + r")(?:(?:[\s-]+|\s+and\s+)(?:" + "|".join(_NUMBER_WORDS) + r"))*\b"
)
_DIGITS = re.compile(
    r"(?P<cur>[£$€¥])?\s?"
    r"(?<![\w.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![.,]\d)"
    r"(?:\s(?P<scale>thousand|million|billion|trillion)\b|(?P<short>bn|m|k)\b|(?P<pence>p)\b)?(?![\w])"
    r"(?P<pct>\s?%|\s(?:per\s?cent|percent)\b)?"
)
_UNIT_AFTER = re.compile(
    r"\A(?:(?:-|\s)(?!(?:per|an?)\s)(?P<unit>[°A-Za-zµ][\w°/.²³]*?)(?=[\s,;:!?)\]]|\.(?:\s|$)|$))?"
    r"(?P<per>\s+(?:per|an?)\s+[A-Za-z][\w/]*)?"
)
_ORDINAL_AFTER = re.compile(r"\A(?:st|nd|rd|th)\b")
_OFFSET_BEFORE = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s?[+\-\u2212]\Z")
"""A clock time and the sign of a time zone's offset, right before a number ("09:14:00 +0000")."""
_CLOCK = frozenset({"am", "pm", "a.m", "p.m"})
"""The marks of a time of day written after its hour ("7 pm", "9 a.m.")."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number written in a text, with the unit written after it."""

    value: float
    unit: str
    """Lower case (``tonnes``, ``euros``, ``%``, ``mg/l``, ``dollars per kg``); empty for a bare number."""
    text: str
    """As written, unit included."""
    start: int
    end: int
    amount: bool = True
    """False for a number that is no amount to add or compare, though the text writes it: a time of
    day ("7 pm"), a time zone's offset after a clock time ("09:14:00 +0000"), or a number inside a
    hyphened label ("under-16 tickets", "Covid-19"). A reader checking that a figure is written keeps
    it; a reader listing figures to work with leaves it out."""

    @property
    def is_integer(self) -> bool:
        return float(self.value).is_integer()

    @property
    def year(self) -> int | None:
        """The year this number is, when it is written as one: four digits from 1600 to 2299, with
        no separator, decimals, currency, percent, measure or unit of time ("the 2024 open day", "2031
        budget", "in 2019"). ``2,000 members``, ``£2025``, ``2000 km`` and ``1825 days`` are amounts;
        a round ``2000 members`` written without its comma reads as a year too (a reader of it that
        knows which unit is asked keeps it: :func:`moot.teams.learning.specialists.common.amounts`)."""
        digits = self.text.split()[0] if self.text else ""
        if not (len(digits) == 4 and digits.isdigit() and 1600 <= self.value <= 2299):
            return None
        if self.unit == "%" or is_measure(self.unit) or is_money(self.unit) or is_time_unit(self.unit):
            return None
        return int(self.value)

    def format(self) -> str:
        """The value in plain digits with its unit (``3100000 euros``, ``12 %``)."""
        number = f"{int(self.value)}" if self.is_integer else f"{self.value:g}"
        return f"{number} {self.unit}".strip()


def _unit_names() -> dict[str, str]:
    names: dict[str, str] = {}
    for line in (Path(__file__).with_name("data") / "units.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            symbol, name = line.split(maxsplit=1)
            names[symbol] = name
    return names


_UNIT_NAMES = _unit_names()
_MEASURES = frozenset(stem(name) for name in _UNIT_NAMES.values())


def unit_name(unit: str) -> str:
    """The name a unit symbol or spelling stands for (``km`` → ``kilometre``, ``meters`` → ``metre``,
    ``kWh`` → ``kilowatt-hour``); any other unit as it is, lower case."""
    unit = unit.strip().lower()
    return _UNIT_NAMES.get(unit, unit)


def unit_key(unit: str) -> str:
    """What a unit's first word names, for comparing units: its name's stem (``km`` and
    ``kilometres`` alike, ``tonne`` and ``tonnes``); empty for no unit."""
    first = unit.strip().lower().split()[:1]
    return stem(unit_name(first[0])) if first else ""


def is_measure(unit: str) -> bool:
    """Whether a quantity's unit measures rather than counts: a unit of ``units.txt`` (litres,
    tonnes, kilometres …) or a currency. A percentage is neither: it is a share of a count too."""
    name = unit_key(unit)
    return bool(name) and ((name in _MEASURES and name != stem("percent")) or is_money(unit))


def is_money(unit: str) -> bool:
    """Whether a quantity's unit is a currency (``£9.80`` is read with the unit ``pounds``)."""
    first = unit.strip().lower().split()[:1]
    return bool(first) and first[0] in _CURRENCY.values()


def parse_number(text: str) -> float | None:
    """``"1,200"`` → 1200, ``"3.1 million"`` → 3100000, ``"twenty-three"`` → 23, else None."""
    text = " ".join(str(text).split()).strip()
    match = _DIGITS.fullmatch(text)
    if match:
        return _digits_value(match)
    try:
        return float(text2num(text.lower(), "en"))
    except (ValueError, TypeError):
        return None


def _digits_value(match: re.Match[str]) -> float:
    value = float(match.group("num").replace(",", ""))
    scale = match.group("scale") or match.group("short")
    return value * _SCALES[scale.lower()] if scale else value


def _unit_after(text: str, end: int) -> tuple[str, int]:
    match = _UNIT_AFTER.match(text[end:])
    if not match or not (match.group("unit") or match.group("per")):
        return "", end
    unit = (match.group("unit") or "").rstrip(".")
    if unit.lower() in STOPWORDS or unit.lower() in _NUMBER_WORDS:
        return "", end
    stop = end + (match.end("unit") - (len(match.group("unit")) - len(unit)) if unit else 0)
    if match.group("per"):
        unit = f"{unit} {' '.join(match.group('per').split())}".strip()
        stop = end + match.end("per")
    return unit, stop


def find_quantities(text: str, *, anchor: date | None = None) -> list[Quantity]:
    """Every number written in ``text`` with its unit, in order (dates, ordinals and clock times skipped).

    ``anchor`` only helps recognise dates written without a year, so their day is not a quantity.
    """
    blocked = [(m.start, m.end) for m in find_dates(text, anchor=anchor)]
    found: list[Quantity] = []

    def free(start: int, end: int) -> bool:
        return not any(start < b and a < end for a, b in blocked)

    for match in _DIGITS.finditer(text):
        start, end = match.span("num")
        if match.group("cur"):
            start = match.start("cur")
        if not free(start, end):
            continue
        if _ORDINAL_AFTER.match(text[match.end("num"):]) or text[match.end("num"):match.end("num") + 1] == ":":
            continue  # "3rd", "8:30"
        if start > 0 and text[start - 1] == ":" and text[max(0, start - 3):start - 1].strip().isdigit():
            continue
        value = _digits_value(match)
        end = match.end()
        if not match.group("cur") and _OFFSET_BEFORE.search(text, 0, start):
            # "+0000" after "09:14:00": a time zone, and the word after it is no unit of it
            blocked.append((start, match.end("num")))
            found.append(Quantity(value, "", text[start:match.end("num")], start, match.end("num"), amount=False))
            continue
        label = not match.group("cur") and start >= 2 and text[start - 1] == "-" and text[start - 2].isalpha()
        if match.group("pct"):
            unit = "%"
        else:
            unit, end = _unit_after(text, end)
            if match.group("pence") and not match.group("cur"):
                # "14p" is 14 pence, £0.14: written so, it adds to pounds.
                value /= 100
                if not unit.startswith(("per ", "a ", "an ")):
                    unit, end = "", match.end()
                unit = f"pounds {unit}".strip()
            elif match.group("cur"):
                unit = _CURRENCY[match.group("cur")] + (f" {unit}" if unit.startswith(("per ", "a ", "an ")) else "")
        blocked.append((start, end))
        clock = unit.lower().rstrip(".") in _CLOCK
        found.append(Quantity(value, unit.lower(), text[start:end], start, end, amount=not (label or clock)))

    for match in _WORD_RUN.finditer(text):
        start, end = match.span()
        if not free(start, end):
            continue
        run = match.group(0)
        try:
            value = float(text2num(run.lower().replace(" and ", " "), "en"))
        except (ValueError, TypeError):
            continue
        if run.lower() in ("one", "zero"):
            continue  # "one of them", "zero in on": too often not a count
        unit, end = _unit_after(text, end)
        blocked.append((start, end))
        found.append(Quantity(value, unit.lower(), text[start:end], start, end))
    return sorted(found, key=lambda q: q.start)


__all__ = ["Quantity", "find_quantities", "is_measure", "is_money", "parse_number", "unit_key", "unit_name"]
