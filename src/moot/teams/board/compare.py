"""Comparisons: Python proposes which figures correspond, the model chooses, Python computes.

A 0.5B model writes "the numbers changed" and gets subtraction wrong; it is good at picking one
option from a short list. So a comparison step does this:

1. every input (a file the step or its dependencies read) is searched for numbers by format
   (:mod:`moot.teams.board.facts`; two joined by "to" or a dash are one range, ``25 to 30``),
   each with the words around it;
2. Python proposes **rows**: a number of the first input and, from every other input, the number
   whose words read most like it (the same measure in two dated notes is written in similar
   words); a row's rank is how many of the task's words stand near its first value times how
   alike its values' words are across the inputs, and only rows within half of the best are
   offered (a file name in the task is not one of its words);
3. the model chooses the row the task compares and writes a sentence (one structured call);
4. Python writes the values and the change from the first input to the last, exactly (for a
   range, the values as written).

With fewer than two inputs holding numbers there is nothing to compute and the step is written
as text, checked like any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.teams.board.answer_check import Source
from moot.teams.board.facts import number_spans, number_value
from moot.teams.board.similarity import content_words, similarity

MAX_ROWS = 6
MAX_LABEL = 90
_FILE_NAME = re.compile(r"[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{0,4}\b")
_RANGE_JOIN = re.compile(r"\s*(?:to|–|—|-)\s*")
"""What joins two numbers into a range: ``25 to 30``, ``25–30``."""
NEAR_WORDS_BEFORE = 6
NEAR_WORDS_AFTER = 3


@dataclass(frozen=True)
class Value:
    """A number as written in an input, or a range of two (``25 to 30``), with where it stands."""

    text: str
    low: float
    high: float
    start: int
    end: int

    @property
    def is_range(self) -> bool:
        return self.low != self.high or _RANGE_JOIN.search(self.text) is not None


@dataclass(frozen=True)
class Row:
    """One proposed line of a comparison: a value from each input, and how alike their sentences are."""

    values: tuple[Value, ...]
    sources: tuple[str, ...]
    """The label of the input each value comes from."""
    score: float
    context: str
    """The words around the first value (what the row is about)."""
    relevance: float = 0.0
    """How many of the task's words stand near the first value (and, weighted less, in its sentence)."""

    def label(self) -> str:
        values = " → ".join(v.text for v in self.values)
        text = f"{values} ({self.context})"
        return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def values_of(text: str) -> list[Value]:
    """The numbers of ``text`` (dates and file names aside), two joined by "to" or a dash taken as one range."""
    spans = number_spans(text)
    out: list[Value] = []
    index = 0
    while index < len(spans):
        start, end, fact = spans[index]
        low = number_value(fact.text)
        if index + 1 < len(spans) and _RANGE_JOIN.fullmatch(text[end:spans[index + 1][0]]):
            _, end2, fact2 = spans[index + 1]
            high = number_value(fact2.text)
            if low is not None and high is not None:
                out.append(Value(text[start:end2], low, high, start, end2))
                index += 2
                continue
        if low is not None:
            out.append(Value(fact.text, low, low, start, end))
        index += 1
    return out


def _words_without_numbers(text: str) -> str:
    return " ".join(w for w in content_words(text) if not any(c.isdigit() for c in w))


def _sentence_around(text: str, start: int, end: int) -> tuple[str, int]:
    """The sentence holding ``text[start:end]`` and where the value starts in it."""
    left = max(text.rfind(". ", 0, start) + 2, text.rfind("\n", 0, start) + 1, 0)
    stops = [i for i in (text.find(". ", end), text.find("\n", end)) if i >= 0]
    right = min(stops) if stops else len(text)
    return text[left:right], start - left


def _profile(text: str, value: Value) -> tuple[str, str, str]:
    """(words near the value, words of its sentence, the readable snippet) for matching and labels.

    What a number counts is usually written right around it."""
    sentence, at = _sentence_around(text, value.start, value.end)
    before = sentence[:at].split()[-NEAR_WORDS_BEFORE:]
    after = sentence[at + len(value.text):].split()[:NEAR_WORDS_AFTER]
    near = " ".join([*before, value.text, *after]).strip(" .,;:")
    return _words_without_numbers(near), _words_without_numbers(sentence), near


def _alike(a: tuple[str, str, str], b: tuple[str, str, str]) -> float:
    return similarity(a[0], b[0]) + 0.3 * similarity(a[1], b[1])


def propose_rows(sources: list[Source], topic: str) -> list[Row]:
    """Rows of corresponding values across ``sources`` (see the module docstring), best first."""
    numbered = []
    labels = []
    for source in sources:
        values = values_of(source.text)
        if values:
            numbered.append([(v, _profile(source.text, v)) for v in values])
            labels.append(source.label)
    if len(numbered) < 2:
        return []
    rows: list[Row] = []
    topic_words = set(content_words(_FILE_NAME.sub(" ", topic)))  # a note's name is not what it counts
    for first, profile in numbered[0]:
        values = [first]
        alike = []
        for others in numbered[1:]:
            ranked = sorted(range(len(others)), key=lambda i: (-_alike(profile, others[i][1]), i))
            values.append(others[ranked[0]][0])
            alike.append(_alike(profile, others[ranked[0]][1]))
        # A good row is about what the task names *and* pairs values that are written alike in
        # every input: a place named in the task stands near many values, but the words that say
        # what a value counts are the ones repeated beside it in each note.
        relevance = len(set(profile[0].split()) & topic_words) + 0.3 * len(set(profile[1].split()) & topic_words)
        rows.append(Row(tuple(values), tuple(labels), relevance * min(alike), profile[2], relevance))
    rows.sort(key=lambda r: -r.score)
    # Only the best rows are offered, when some are about the task: a 0.5B chooser picked a row
    # that shared no word with the task over the one that did.
    best = max(r.score for r in rows)
    if best > 0:
        rows = [r for r in rows if r.score >= best / 2]
    unique: list[Row] = []
    for row in rows:
        if row.label() not in {u.label() for u in unique}:
            unique.append(row)
    return unique[:MAX_ROWS]


def choice_type(rows: list[Row]) -> type[BaseModel]:
    """The model's schema: which row the task compares, and a one- or two-sentence answer."""
    labels = tuple(row.label() for row in rows)
    return create_model(
        "Comparison",
        row=(Literal[labels], Field(description="the values the task compares")),  # type: ignore[valid-type]
        answer=(str, Field(description="one or two sentences that answer the task", max_length=500)),
    )


def _format(value: float, like: str) -> str:
    decimals = len(like.split(".")[1]) if "." in like else 0
    text = f"{abs(value):,.{decimals}f}" if "," in like else f"{abs(value):.{decimals}f}"
    return ("−" if value < 0 else "+") + text if value else "0"


def comparison_line(row: Row) -> str:
    """The row's values, each with its input, and the change from the first to the last, computed
    (not for ranges: their ends are given as written)."""
    line = " → ".join(f"{value.text} ({label})" for value, label in zip(row.values, row.sources))
    first, last = row.values[0], row.values[-1]
    if first.is_range or last.is_range:
        return line
    change = last.low - first.low
    like = last.text if "." in last.text or "," in last.text else first.text
    line += f"; change: {_format(change, like)}"
    if first.low:
        line += f" ({_format(round(100 * change / abs(first.low), 1), '0.0')} %)"
    return line


def row_for(choice: Any, rows: list[Row]) -> Row:
    return next((r for r in rows if r.label() == getattr(choice, "row", None)), rows[0])


__all__ = ["Row", "Value", "choice_type", "comparison_line", "propose_rows", "row_for", "values_of"]
