"""The checker: every number and date a draft states must come from the evidence or be worked out from it.

Runs in Python on every draft. Grounded are: the numbers and dates of the passages, the facts
and the question (read by :mod:`moot.text`, so "1,200", "1200" and "twelve hundred" are one
number, and "3.1 million" is 3,100,000 as well as 3.1); the values a specialist computed; any
sum, difference, product or ratio of two evidence numbers (a draft that did the arithmetic right
is not refused for it); the days, weeks, months and years between two evidence dates; and small
counts (up to ten: "two sources", "step 3"). A draft stating anything else states what the
sources do not give: it fails. The checker compares values, never wording: it does not refuse a
right figure because the question says "people" and the source "visitors".

One comparison of kinds is made, by the units' closed set: a question that counts things ("how
many chairs") is not answered by a measure ("300 kilograms", "450 euros"). A draft whose every
figure (apart from those the question itself states) is a measure, where the question counts,
fails: a small model given no count reports the nearest figure it has.
"""

from __future__ import annotations

import itertools
from datetime import date

from moot.teams.learning.ask.drafts import Draft, Verdict
from moot.teams.learning.ask.frame import COMPARATIVES
from moot.teams.learning.ask.recall import Recall
from moot.text.dates import find_dates, time_unit
from moot.text.numbers import find_quantities, is_measure, is_money, unit_key
from moot.text.words import STOPWORDS, words

SMALL_COUNT = 10
MAX_PAIRED = 48
"""Evidence numbers combined pairwise (the most relevant first)."""


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= max(0.011, 0.005 * max(abs(a), abs(b)))


_BEFORE_THE_NOUN = COMPARATIVES | {"extra"}
"""Words that may stand between "how many" and what it counts ("how many more chairs", "how many extra kilograms")."""


def counted(question: str) -> str:
    """The word a "how many" question counts when it counts things, not a measure ("how many
    chairs" → ``chairs``; "how many kilograms", "how many of the 12 rooms" → ``""``)."""
    tokens = words(question)
    for i in range(len(tokens) - 2):
        if tokens[i] == "how" and tokens[i + 1] == "many":
            rest = [w for w in tokens[i + 2:i + 4] if w not in _BEFORE_THE_NOUN]
            noun = rest[0] if rest else ""
            return noun if noun.isalpha() and noun not in STOPWORDS and not is_measure(noun) else ""
    return ""


def _anchor(published: str | None) -> date | None:
    try:
        return date.fromisoformat(published[:10]) if published else None
    except ValueError:
        return None


def length_unit(unit: str) -> str | None:
    """What a quantity is a length of, for comparing lengths: the clock's or the calendar's unit
    (``hour``), another measure's name (``kilometre`` for ``km``), or None (a count, a sum of money)."""
    if (unit_of_time := time_unit(unit)) is not None:
        return unit_of_time
    return unit_key(unit) if is_measure(unit) and not is_money(unit) else None


class Evidence:
    """The numbers and dates a draft may state, built once per question."""

    def __init__(self, texts: list[tuple[str, date | None]], *, dated: list[date] = (), computed: list[str] = (),  # type: ignore[assignment]
                 question: str = "") -> None:
        """``texts`` with the date each was written (for "6 July" without a year), most relevant first;
        ``dated``: the sources' own dates; ``computed``: values worked out for the answer;
        ``question``: what a count is checked against (:func:`counted`)."""
        self.counted = counted(question) if question else ""
        self.question_numbers = [q.value for q in find_quantities(question)] if question else []
        self.numbers: list[float] = []
        self.days: set[date] = set()
        self.months: set[tuple[int, int]] = set()
        self.lengths: set[tuple[float, str]] = set()
        """Lengths the sources write, of time ("14 hours") or of another measure ("12 km"): value and unit."""
        for day in dated:
            self._add_day(day)
        for text, anchor in texts:
            self._read(text, anchor, sources=text != question)
        for text in computed:
            self._read(text, None)
        base = self.numbers[:MAX_PAIRED]
        derived: list[float] = []
        for a, b in itertools.combinations(base, 2):
            derived += [a + b, abs(a - b), a * b]
            if b:
                derived.append(a / b)
            if a:
                derived.append(b / a)
        days = sorted(self.days)
        for a, b in itertools.combinations(days, 2):
            gap = abs((b - a).days)
            derived += [gap, gap / 7, round(gap / 30.44), abs((b.year - a.year) * 12 + b.month - a.month), abs(b.year - a.year)]
        self.derived = derived

    @classmethod
    def of(cls, recall: Recall, question: str, computed: list[str] = ()) -> Evidence:  # type: ignore[assignment]
        """The evidence of one question: the question, its passages (best first) and facts, the sources' dates."""
        dated = [d for p in recall.passages if (d := _anchor(p.published)) is not None]
        # The question is read as of the newest source, as the drafts are: "in May" is a month there too.
        texts: list[tuple[str, date | None]] = [(question, max(dated) if dated else None)]
        texts += [(p.text, _anchor(p.published)) for p in sorted(recall.passages, key=lambda p: -p.score)]
        texts += [(f.content, _anchor(f.source_date)) for f in recall.facts]
        # A table's column totals are worked out from the sources, as any draft reading them is shown.
        totals = [str(t.total.total) for t in recall.tables]
        return cls(texts, dated=dated, computed=[*computed, *totals], question=question)

    def _add_day(self, day: date) -> None:
        self.days.add(day)
        self.months.add((day.year, day.month))

    def _read(self, text: str, anchor: date | None, *, sources: bool = False) -> None:
        for mention in find_dates(text, anchor=anchor):
            if mention.precision == "day":
                self._add_day(mention.day)
            elif mention.precision == "month":
                self.months.add((mention.day.year, mention.day.month))
            self.numbers.append(float(mention.day.year))
            if mention.precision == "day":
                self.numbers.append(float(mention.day.day))
        for quantity in find_quantities(text, anchor=anchor):
            self.numbers.append(quantity.value)
            if sources and (unit := length_unit(quantity.unit)) is not None:
                self.lengths.add((quantity.value, unit))
            if quantity.value >= 1000 and quantity.text.lower().find("million") < 0:
                continue
            # "3.1 million" is also written 3.1; "12%" also 0.12
            first = quantity.text.lstrip("£$€¥").split()[0].replace(",", "").rstrip("%")
            try:
                self.numbers.append(float(first))
            except ValueError:
                pass

    def states_length(self, value: float, unit: str) -> bool:
        """Whether the sources themselves write this length (not one worked out from dates)."""
        return (value, length_unit(unit)) in self.lengths

    def grounded(self, value: float) -> bool:
        if float(value).is_integer() and 0 <= value <= SMALL_COUNT:
            return True
        return any(_close(value, n) for n in self.numbers) or any(_close(value, n) for n in self.derived)

    def undated_grounded(self, day: date, precision: str) -> bool:
        """A day or month written without its year: grounded when the evidence has it in any year."""
        if precision == "day":
            return any((d.month, d.day) == (day.month, day.day) for d in self.days)
        return any(month == day.month for _, month in self.months) or any(d.month == day.month for d in self.days)

    def date_grounded(self, day: date, precision: str) -> bool:
        if precision == "day":
            return day in self.days or (day.year, day.month) in self.months and day.day == 1
        if precision == "month":
            return (day.year, day.month) in self.months or any(d.year == day.year and d.month == day.month for d in self.days)
        return any(n == day.year for n in self.numbers)


def check(draft: Draft, evidence: Evidence) -> Verdict:
    """Whether every number and date of ``draft`` is grounded (see the module docstring)."""
    anchor = max(evidence.days) if evidence.days else None
    missing: list[str] = []
    computed_numbers = [q.value for text in draft.computed for q in find_quantities(text)]
    for mention in find_dates(draft.text, anchor=anchor):
        if mention.relative and mention.precision in ("day", "month"):
            # "3 October" with no year: any year the evidence gives that day or month in
            if evidence.undated_grounded(mention.day, mention.precision):
                continue
        if not evidence.date_grounded(mention.day, mention.precision):
            missing.append(mention.text)
    quantities = find_quantities(draft.text, anchor=anchor)
    for quantity in quantities:
        if any(_close(quantity.value, c) for c in computed_numbers):
            continue
        if not evidence.grounded(quantity.value):
            missing.append(quantity.text)
    if missing:
        return Verdict(specialist=draft.specialist, passed=False, ungrounded=missing,
                       note=f"{draft.specialist}: states {', '.join(missing)}, which no source gives or computes")
    if evidence.counted:
        stated = [q for q in quantities if not any(_close(q.value, n) for n in evidence.question_numbers)]
        if stated and all(is_measure(q.unit) for q in stated):
            texts = ", ".join(q.text for q in stated)
            return Verdict(specialist=draft.specialist, passed=False, unlike=[q.text for q in stated],
                           note=f"{draft.specialist}: gives {texts} where the question counts {evidence.counted}")
    lengths = [q.text for q in quantities if evidence.states_length(q.value, q.unit)]
    return Verdict(specialist=draft.specialist, passed=True, stated_lengths=lengths,
                   note=f"{draft.specialist}: every number and date grounded")


__all__ = ["Evidence", "check"]
