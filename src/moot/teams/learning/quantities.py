"""Quantities: the numbers and dates of a question, its facts and its sources, as the model sees them.

Python finds every number (with the word after it as its unit: "82%", "4,200 visitors",
"6.8 million crowns", "eight lifeguards") and every date ("14 March", "1 June 2023", a bare
year "2019") in a text, each with its sentence and the dates of that sentence (what a number is
*at*), and lists them with ids (``q1``, ``q2`` …) and where they came from (``#12`` for a fact,
``passage 1``, ``question``). The specialists then let the model choose among them by id; it
never writes a number itself.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime as _dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_QUANTITIES = 18
"""How many quantities a menu lists: a 0.5B model loses track of more."""

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH_RE = "|".join(sorted((m for m in _MONTHS if len(m) > 2), key=len, reverse=True))
_DATE_DMY = re.compile(rf"\b(\d{{1,2}})\s+({_MONTH_RE})\.?(?:,?\s+((?:19|20)\d{{2}}))?\b", re.I)
_DATE_MDY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+((?:19|20)\d{{2}}))?\b", re.I)
_DATE_ISO = re.compile(r"\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b")
_NUMBER = re.compile(r"(?<![\w.#-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(\s*%)?(?:\s+(million|billion|thousand))?"
                     r"(?:[\s-]+(per ?cent|percentage points?|[A-Za-z][A-Za-z-]*))?")
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_WORD_VALUES = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_WORD_NUMBER = re.compile(r"(?<![\w-])(" + "|".join(_WORD_VALUES) + r")\s+([a-z][a-z-]+)", re.I)
"""A number written as a word with its unit ("eight lifeguards", "six lifeguards")."""
UNIT_SKIP = {"a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for", "from", "with", "is", "was",
              "were", "are", "it", "its", "this", "that", "on", "per", "each", "than", "as"}
"""Words after a number that are no unit ("12 of them", "40 an hour")."""


@dataclass(frozen=True)
class Quantity:
    """A number or a date found in a fact, a passage or the question."""

    id: str
    value: float | None
    date: _dt.date | None
    unit: str
    text: str
    """The span as written (``82%``, ``12 May 2023``)."""
    origin: str
    """``#12`` (a fact id), ``passage 1`` or ``question``."""
    context: str
    """The sentence the quantity stands in."""
    when: tuple[_dt.date, ...] = ()
    """The dates in that sentence: what the number is *at* ("82% … on 14 March")."""

    def render(self) -> str:
        what = self.date.isoformat() if self.date else self.text
        return f"{self.id} = {what} ({self.origin}: {self.context})"


def format_number(value: float) -> str:
    if abs(value - round(value)) < 1e-9:
        return f"{int(round(value)):,}" if abs(value) >= 10000 else str(int(round(value)))
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _year_hint(origin_date: Any) -> int | None:
    if isinstance(origin_date, (_dt.date, _dt.datetime)):
        return origin_date.year
    if isinstance(origin_date, str) and re.match(r"\d{4}", origin_date):
        return int(origin_date[:4])
    return None


def _dates(text: str, year: int | None) -> list[tuple[tuple[int, int], _dt.date, str]]:
    found: list[tuple[tuple[int, int], _dt.date, str]] = []
    for match in _DATE_ISO.finditer(text):
        try:
            found.append((match.span(), _dt.date(int(match[1]), int(match[2]), int(match[3])), match[0]))
        except ValueError:
            pass
    for pattern, day_first in ((_DATE_DMY, True), (_DATE_MDY, False)):
        for match in pattern.finditer(text):
            day, month = (match[1], match[2]) if day_first else (match[2], match[1])
            y = int(match[3]) if match[3] else year
            if y is None:
                continue
            try:
                found.append((match.span(), _dt.date(y, _MONTHS[month.lower()], int(day)), match[0]))
            except (ValueError, KeyError):
                pass
    return found


_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+(?=\s|$)|$)")


def find_quantities(text: str, *, origin: str, year: int | None = None, start: int = 1) -> list[Quantity]:
    """Numbers (with the word after them as the unit) and dates in ``text``, each with its sentence
    and the dates of that sentence."""
    sentences = [(m.start(), m.end(), " ".join(m.group().split())) for m in _SENTENCE.finditer(text)] or [(0, len(text), text)]
    found_dates = _dates(text, year)

    def where(position: int) -> tuple[str, tuple[_dt.date, ...]]:
        a, b, sentence = next(((a, b, t) for a, b, t in sentences if a <= position < b), sentences[-1])
        return sentence[:200], tuple(d for span, d, _ in found_dates if a <= span[0] < b)

    quantities: list[Quantity] = []
    taken: list[tuple[int, int]] = []

    def add(value: float | None, date: _dt.date | None, unit: str, written: str, position: int) -> None:
        context, when = where(position)
        quantities.append(Quantity(f"q{start + len(quantities)}", value, date, unit, written, origin, context, when))

    for span, date, written in found_dates:
        if any(a <= span[0] < b for a, b in taken):
            continue
        taken.append(span)
        add(None, date, "", written, span[0])
    for match in _WORD_NUMBER.finditer(text if origin != "question" else ""):  # "its two bakeries" is no amount
        word = match[2].lower()
        if word in UNIT_SKIP or word in _WORD_VALUES:
            continue
        add(float(_WORD_VALUES[match[1].lower()]), None, word, match[0], match.start())
    for match in _NUMBER.finditer(text):
        if any(a <= match.start() < b for a, b in taken):
            continue
        number = float(match[1].replace(",", "") + (match[2] or ""))
        if re.fullmatch(r"(?:19|20)\d{2}", match[1]) and not match[2] and not match[3] and not match[4]:
            # A bare year ("founded in 2019") is a date for years_between, never an amount: on L6 a
            # "2024 − 900 swimmers" answered how many more lifeguards there were.
            add(None, _dt.date(int(match[1]), 1, 1), "", match[1], match.start())
            continue
        if match[4]:
            number *= _SCALE[match[4].lower()]
        word = (match[5] or "").lower()
        unit = "%" if match[3] else ("" if word in UNIT_SKIP else word)
        if unit in ("per cent", "percent"):
            unit = "%"
        written = match[0].strip()
        if match[5] and (match[3] or word in UNIT_SKIP):
            written = text[match.start(): match.start(5)].strip(" -")
        add(number, None, unit, written, match.start())
    return _shared_units(text, quantities)


_RATE = re.compile(r"\s*(?:a|an|per|each)\s+(second|minute|hour|day|week|month|year)\b", re.I)
_LIST_GAP = re.compile(r"^[\s,]*(?:and|or|to)?[\s,]*$", re.I)


def _shared_units(text: str, quantities: list[Quantity]) -> list[Quantity]:
    """A bare number takes the unit a list or a parallel phrase gives it: "40, 20 and 60 minutes"
    are all minutes; in "slicing 90 sandwiches an hour, filling 40 an hour" the 40 is sandwiches
    too; "from 1.2 to 1.5 metres" are both metres."""
    at = {id(q): text.find(q.text) for q in quantities if q.value is not None}
    amounts = sorted((q for q in quantities if q.value is not None), key=lambda q: at[id(q)])
    units: dict[int, str] = {}
    for later, earlier in zip(reversed(amounts), list(reversed(amounts))[1:]):
        # right to left, so a unit written once at the end of a list reaches every number in it
        gap = text[at[id(earlier)] + len(earlier.text): at[id(later)]]
        unit = units.get(id(later), later.unit)
        if not earlier.unit and unit and _LIST_GAP.match(gap) and earlier.context == later.context:
            units[id(earlier)] = unit
    rates = {id(q): _RATE.match(text[at[id(q)] + len(q.text):]) for q in amounts}
    for q in amounts:
        if q.unit or id(q) in units:
            continue
        after = rates[id(q)]
        sibling = next((o for o in amounts if o is not q and o.unit and o.context == q.context and after
                        and (r := rates[id(o)]) and r.group(1) == after.group(1)),
                       None)
        if sibling is not None:
            units[id(q)] = sibling.unit
    return [dataclasses.replace(q, unit=units[id(q)]) if id(q) in units else q for q in quantities]


def collect_quantities(question: str, facts: Sequence[Mapping[str, Any]],
                       passages: Sequence[Mapping[str, Any]] = (), *, limit: int = MAX_QUANTITIES) -> list[Quantity]:
    """The menu the model chooses from: the question's numbers, then the facts', then the passages'."""
    quantities: list[Quantity] = []
    seen: set[tuple[str, str]] = set()

    def add(found: list[Quantity], *, always: bool = False) -> None:
        for q in found:
            key = (q.origin, q.text)
            if key in seen or (len(quantities) >= limit and not always) or _dateline(q):
                continue
            seen.add(key)
            quantities.append(dataclasses.replace(q, id=f"q{len(quantities) + 1}"))

    years = [y for y in (_year_hint(f.get("source_date")) for f in facts) if y]
    # The question's own numbers first (a far-transfer question brings its data), then the
    # facts', then the passages'; the question's dates last — they name the period, and a small
    # model picks the first ids it sees.
    asked = find_quantities(question, origin="question", year=years[0] if years else None)
    add([q for q in asked if q.date is None])
    for fact in facts:
        add(find_quantities(str(fact.get("content") or ""), origin=f"#{fact['id']}", year=_year_hint(fact.get("source_date"))))
    for n, passage in enumerate(passages, 1):
        add(find_quantities(str(passage.get("text") or ""), origin=f"passage {n}", year=_year_hint(passage.get("published"))))
    add([q for q in asked if q.date is not None], always=True)  # the period asked about is never cut off
    return quantities


def _dateline(quantity: Quantity) -> bool:
    """A report's dateline ("Brackwater, 10 February 2024.") dates the article, not an event."""
    from moot.memory.passages import is_dateline

    if quantity.date is None or quantity.origin == "question":
        return False
    rest = quantity.context.replace(quantity.text, " ")
    return is_dateline(quantity.context) or len(re.findall(r"[A-Za-z]{2,}", rest)) <= 2


__all__ = ["MAX_QUANTITIES", "UNIT_SKIP", "Quantity", "collect_quantities", "find_quantities", "format_number"]
