"""The question frame: what a question asks, read once, by the model under a schema.

Every reader of the question reads the frame, never the raw string: the kind of answer asked
(a value, a date, a duration, a change between reports, a comparison, steps, a cause,
a what-if, a rule applied, an explanation), what it is about and the unit asked for. The model
*chooses* these: the kind from a closed set, the subject and the unit among the question's own
words (an enum built from the question). Python adds what is read by format: the dates and
numbers the question states. When the call fails or the budget has no room for it, a frame of
kind ``unknown`` with the question's names stands in, and the trace says so.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.models.base import Model, ModelSettings
from moot.runtime import Run, SubAgent, load_prompt
from moot.text.dates import find_dates, is_time_unit
from moot.text.names import names_in
from moot.text.numbers import find_quantities
from moot.text.words import STOPWORDS, words

Kind = Literal["value", "date", "duration", "change", "comparison", "steps", "cause", "what_if", "rule",
               "explanation", "unknown"]
KINDS: tuple[str, ...] = Kind.__args__  # type: ignore[attr-defined]
COMPUTED_KINDS = frozenset({"duration", "change", "comparison", "what_if", "rule"})
"""Kinds whose answer is worked out from figures, not read off one sentence."""

PROMPTS = "moot.teams.learning"
CHOICE_TOKENS = 300
"""The most a choice under a schema may write. A choice takes a few dozen tokens and stops when its
JSON is complete; the cap only bounds a runaway answer, and a budget holds it whole before sending."""

ASKED: dict[str, str] = {
    "fact": "value",
    "when": "date",
    "why": "cause",
    "steps": "steps",
    "how long": "duration",
    "change": "change",
    "calculation": "comparison",
    "what if": "what_if",
    "rule": "rule",
    "explain": "explanation",
}
"""What the model chooses from (short names a small model reads), and the kind each is."""

LABEL = {kind: label for label, kind in ASKED.items()}

# The form of an English question, from its closed-class words: an interrogative, an auxiliary
# that opens a yes/no question, "if" opening a condition, the calendar's units of time. None of
# these is a wording of a particular text; they say which kinds of answer a question can ask for,
# and the model chooses among those (Python proposes, the model chooses).
_OPENERS: dict[str, tuple[str, ...]] = {
    "why": ("cause",),
    "when": ("date", "duration"),
    "who": ("value",),
    "whom": ("value",),
    "whose": ("value",),
    "where": ("value",),
    "which": ("value", "steps", "comparison", "date", "change"),
    "what": ("value", "steps", "comparison", "cause", "explanation", "rule", "date", "change"),
    "how": ("explanation", "steps", "value", "change"),
}
_QUANTIFIERS = frozenset("many much far old big large long".split())
"""After "how": a question about an amount (a closed class of English degree words)."""
COMPARATIVES = frozenset("more fewer less".split())
"""After "how many/much": the question asks for a difference (a closed class of comparatives of the language)."""
_AUXILIARIES = frozenset("is are was were do does did can could would will should has have had may might must".split())
_IMPERATIVE = ("explanation", "steps", "comparison", "value")
_TIME_UNITS = frozenset("day days week weeks month months year years hour hours minute minutes".split())


_PREPOSITIONS = frozenset("for in on at by from to of under with since after before until during according".split())
"""Words that may stand before a question's interrogative ("For how many days", "In which city")."""
_CLAUSE_BREAK = re.compile(r"[,;:\u2013\u2014]|\s-\s|(?<=[.?!])\s")


def asking_word(question: str) -> tuple[str | None, int]:
    """The word that opens the clause that asks, and its index among the question's words.

    An interrogative opens its clause — at the start of the question or of a sentence, or after a
    comma, colon or dash ("If it had rained, how much …"), after at most two prepositions
    ("According to the report, what …") — and is preferred to an auxiliary opening a yes/no
    clause. A "when" or "which" inside a clause ("does it protect the hospital when the tank runs
    empty") asks nothing, and neither does a "when" that opens a clause without an auxiliary after
    it ("When closing the shop, what comes next?"): that is a time clause, and a later clause's
    interrogative asks.
    """
    clauses: list[tuple[int, list[str]]] = []
    offset = 0
    for clause in _CLAUSE_BREAK.split(question):
        tokens = words(clause)
        clauses.append((offset, tokens))
        offset += len(tokens)
    subordinate: tuple[str, int] | None = None
    for wanted in (_OPENERS, _AUXILIARIES):
        for start, tokens in clauses:
            i = 0
            while i < min(2, len(tokens)) and tokens[i] in _PREPOSITIONS:
                i += 1
            if i < len(tokens) and tokens[i] in wanted:
                if tokens[i] == "when" and tokens[i + 1:i + 2] and tokens[i + 1] not in _AUXILIARIES:
                    subordinate = subordinate or (tokens[i], start + i)
                    continue
                return tokens[i], start + i
    return subordinate or (None, -1)


def amount_asked(tokens: list[str]) -> int | None:
    """Where "how much", "how many" or "how long" stands: the index of its degree word, or None."""
    return next((i + 1 for i, t in enumerate(tokens[:-1]) if t == "how" and tokens[i + 1] in _QUANTIFIERS), None)


def kind_options(question: str) -> list[str]:
    """The kinds a question's form allows, most likely first; the model chooses among them."""
    tokens = words(question)
    options: list[str] = []
    if "if" in tokens or "had" in tokens[:1]:
        options.append("what_if")
    opener, at_opener = asking_word(question)
    # "how much", "how many", "how long" wherever it stands: the word after it says what is counted
    amount_at = amount_asked(tokens)
    spans_time = amount_at is not None and (tokens[amount_at] == "long" or tokens[amount_at + 1:amount_at + 2] != []
                                            and tokens[amount_at + 1] in _TIME_UNITS)
    if opener in _AUXILIARIES:
        options += ["value", "comparison", "change", "cause", "steps"]
    elif opener == "how" and amount_at == at_opener + 1:
        if spans_time:
            options.append("duration")
        if tokens[amount_at + 1:amount_at + 2] and tokens[amount_at + 1] in COMPARATIVES:
            # "how many more", "how much less": a difference between two figures, not one figure
            options += ["comparison", "change"]
        else:
            options += ["value", "comparison", "change", "rule", "steps"]
    elif opener is not None:
        options += _OPENERS[opener]
    else:
        options += _IMPERATIVE
    # A calendar unit anywhere allows a span, unless "how much/many <thing>" says what is counted
    # ("how much more would it have paid in the first year" asks for money, not for time).
    if (spans_time or amount_at is None and _TIME_UNITS & set(tokens)) and "duration" not in options:
        options.append("duration")
    return list(dict.fromkeys(options)) or ["value"]


class TimeAnchor(BaseModel):
    """A date the question states, as far as it states it: ``2024`` is a year, not 1 January."""

    day: date
    """The date; for a month or a year, its first day."""
    precision: Literal["day", "month", "year"] = "day"

    @property
    def period(self) -> tuple[int, ...]:
        """What it covers: ``(year,)``, or ``(year, month)`` for a month or a day (reports date things
        by month more often than by day)."""
        return (self.day.year,) if self.precision == "year" else (self.day.year, self.day.month)

    def covers(self, day: date | None, precision: str = "day") -> bool:
        """Whether ``day``, known to ``precision``, falls in this anchor: its year, or its month. A
        year alone ("in 2024", kept as its 1 January) is in no month."""
        if day is None:
            return False
        if self.precision == "year":
            return day.year == self.day.year
        return precision != "year" and (day.year, day.month) == self.period

    def shown(self) -> str:
        return str(self.day.year) if self.precision == "year" else (
            self.day.strftime("%Y-%m") if self.precision == "month" else self.day.isoformat())


def periods(anchors: list[TimeAnchor]) -> list[TimeAnchor]:
    """The question's anchors, one per month, year or day they name; a year the question also names a
    month or day of is left out (the month says more)."""
    by_period = {(*a.period, *((a.day.day,) if a.precision == "day" else ())): a for a in anchors}
    return [a for p, a in by_period.items() if not (len(p) == 1 and any(q[0] == p[0] for q in by_period if len(q) > 1))]


class QuestionFrame(BaseModel):
    """What a question asks, as the team's readers see it."""

    question: str
    kind: Kind = "unknown"
    about: list[str] = Field(default_factory=list)
    """The question's words that name what it is about (names first)."""
    unit: str = ""
    """The question's word for what the answer is counted or measured in ("days", "tonnes"), or ""."""
    anchors: list[TimeAnchor] = Field(default_factory=list)
    """Dates the question states, each with its precision (read by format), years written bare
    ("the 2024 open day") among them."""
    numbers: list[float] = Field(default_factory=list)
    """Numbers the question states (read by format), e.g. a new case's length or nights; not its years."""
    times: list[str] = Field(default_factory=list)
    """Lengths of time the question states ("7 days", "a 9-hour outage"), read by format: a question
    that gives a length of time asks something else about it (a fee, an outcome), not that length."""
    decided_by: Literal["model", "fallback"] = "fallback"
    note: str = ""

    @property
    def computed(self) -> bool:
        """Whether the answer is worked out from figures rather than read off one sentence."""
        return self.kind in COMPUTED_KINDS

    def describe(self) -> str:
        parts = [f"kind {self.kind}"]
        if self.about:
            parts.append(f"about {', '.join(self.about)}")
        if self.unit:
            parts.append(f"unit {self.unit}")
        if self.anchors:
            parts.append(f"dates {', '.join(a.shown() for a in self.anchors)}")
        if self.numbers:
            parts.append(f"numbers {', '.join(f'{n:g}' for n in self.numbers)}")
        if self.times:
            parts.append(f"times {', '.join(self.times)}")
        return f"{'; '.join(parts)} (read by {self.decided_by})"


def question_options(question: str) -> tuple[list[str], list[str]]:
    """What the model may choose from: the question's names and content words (subjects), and its
    content words (units)."""
    names = [n for n, _ in names_in(question)]
    name_words = {w for n in names for w in words(n)}
    plain = [w for w in dict.fromkeys(words(question)) if w not in STOPWORDS and w not in name_words and w.isalpha()
             and len(w) > 2]
    return list(dict.fromkeys([*names, *plain]))[:16], plain[:16]


def by_format(question: str, *, anchor: date | None = None) -> dict[str, Any]:
    """The parts of the frame read by format: dates (years written bare among them) and numbers the
    question states."""
    anchors = [TimeAnchor(day=m.day, precision=m.precision) for m in find_dates(question, anchor=anchor)]
    quantities = find_quantities(question, anchor=anchor)
    anchors += [TimeAnchor(day=date(q.year, 1, 1), precision="year") for q in quantities if q.year is not None]
    anchors = sorted({(a.day, a.precision): a for a in anchors}.values(), key=lambda a: a.day)
    return {"anchors": anchors, "numbers": [q.value for q in quantities if q.year is None and q.amount],
            "times": [q.text for q in quantities if is_time_unit(q.unit)]}


def fallback_frame(question: str, note: str, *, anchor: date | None = None) -> QuestionFrame:
    names = [n for n, _ in names_in(question)]
    return QuestionFrame(question=question, about=names[:3], decided_by="fallback", note=note,
                         **by_format(question, anchor=anchor))


def frame_schema(question: str) -> type[BaseModel]:
    subjects, units = question_options(question)
    subject = Literal[tuple(subjects)] if subjects else Literal[""]  # type: ignore[valid-type]
    unit = Literal[("", *units)]  # type: ignore[valid-type]
    return create_model(
        "QuestionKind",
        asks_for=(Literal[tuple(LABEL[k] for k in kind_options(question))], ...),  # type: ignore[valid-type]
        about=(list[subject], Field(default_factory=list, max_length=3)),  # type: ignore[valid-type]
        unit=(unit, ""),  # type: ignore[valid-type]
    )


def frame_agent(model: Model) -> SubAgent:
    return SubAgent("frame", "reads what the question asks (kind, subject, unit)", load_prompt("frame", PROMPTS),
                    model=model, max_turns=2, settings=ModelSettings(max_tokens=CHOICE_TOKENS, temperature=0.0))


async def read_frame(run: Run, model: Model, question: str, *, anchor: date | None = None) -> QuestionFrame:
    """The frame of ``question``: the model's choices under the schema, else the fallback (never raises)."""
    agent = frame_agent(model).with_output(frame_schema(question))
    outcome = await run.step("frame", agent, f"Question: {question}")
    if outcome is None or not outcome.ok or outcome.output is None:
        why = "no room in the budget" if outcome is None else (outcome.detail or outcome.stop_reason)
        return fallback_frame(question, f"the model could not read the question ({why})", anchor=anchor)
    chosen = outcome.output
    about = [a for a in dict.fromkeys(chosen.about) if a]
    return QuestionFrame(question=question, kind=ASKED[chosen.asks_for], about=about, unit=chosen.unit or "", decided_by="model",
                         **by_format(question, anchor=anchor))


__all__ = ["COMPUTED_KINDS", "amount_asked", "kind_options", "KINDS", "Kind", "QuestionFrame", "TimeAnchor", "by_format", "periods", "fallback_frame", "frame_schema",
           "question_options", "read_frame"]
