"""Comparisons: Python proposes which figures correspond, the model chooses, Python computes.

A 0.5B model writes "the numbers changed" and gets subtraction wrong; it is good at picking one
option from a short list. So a comparison step does this:

1. every input (an earlier step's result, a file it read) is searched for numbers by format
   (:mod:`moot.teams.board.facts`), each with the sentence it stands in;
2. Python proposes **rows**: a number of the first input and, from every other input, the number
   whose words read most like it (the same measure in two dated notes is written in similar
   words); only rows whose words the task uses are offered when there are such rows, the most
   relevant first (a file name in the task is no such word);
3. the model chooses the row the task compares and writes a sentence (one structured call);
4. Python writes the values and the change from the first input to the last, exactly.

With fewer than two inputs holding numbers there is nothing to compute and the step is written
as text, checked like any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.teams.board.answer_check import Source
from moot.teams.board.facts import Fact, extract_facts, number_value, sentence_of
from moot.teams.board.similarity import content_words, similarity

MAX_ROWS = 6
MAX_LABEL = 90
_FILE_NAME = re.compile(r"[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{0,4}\b")


@dataclass(frozen=True)
class Row:
    """One proposed line of a comparison: a value from each input, and how alike their sentences are."""

    values: tuple[Fact, ...]
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


NEAR_WORDS_BEFORE = 6
NEAR_WORDS_AFTER = 3


def _words_without_numbers(text: str) -> str:
    return " ".join(w for w in content_words(text) if not any(c.isdigit() for c in w))


def _near(text: str, fact: Fact) -> str:
    """The words right around a number in its sentence: what it counts is usually written there."""
    sentence = sentence_of(text, fact)
    index = sentence.find(fact.text)
    if index < 0:
        return sentence
    before = sentence[:index].split()[-NEAR_WORDS_BEFORE:]
    after = sentence[index + len(fact.text):].split()[:NEAR_WORDS_AFTER]
    return " ".join([*before, fact.text, *after]).strip(" .,;:")


def _profile(text: str, fact: Fact) -> tuple[str, str, str]:
    """(words near the number, words of its sentence, the readable snippet) for matching and labels."""
    near = _near(text, fact)
    return _words_without_numbers(near), _words_without_numbers(sentence_of(text, fact)), near


def _alike(a: tuple[str, str, str], b: tuple[str, str, str]) -> float:
    return similarity(a[0], b[0]) + 0.3 * similarity(a[1], b[1])


def propose_rows(sources: list[Source], topic: str) -> list[Row]:
    """Rows of corresponding numbers across ``sources`` (see the module docstring), best first."""
    numbered = []
    labels = []
    for source in sources:
        numbers = extract_facts(source.text).of_kind("number")
        if numbers:
            numbered.append([(n, _profile(source.text, n)) for n in numbers])
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
        # What the task is about decides the order; how alike the paired sentences are breaks ties.
        relevance = len(set(profile[0].split()) & topic_words) + 0.3 * len(set(profile[1].split()) & topic_words)
        rows.append(Row(tuple(values), tuple(labels), relevance + 0.3 * min(alike), profile[2], relevance))
    rows.sort(key=lambda r: -r.score)
    # Only rows about what the task names are offered, when some are: a 0.5B chooser picked a
    # row that shared no word with the task over the one that did.
    best = max(r.relevance for r in rows)
    if best > 0:
        rows = [r for r in rows if r.relevance >= best / 2]
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
    """The row's values, each with its input, and the change from the first to the last, computed."""
    parts = [f"{fact.text} ({label})" for fact, label in zip(row.values, row.sources)]
    line = " → ".join(parts)
    first, last = number_value(row.values[0].text), number_value(row.values[-1].text)
    if first is None or last is None:
        return line
    change = last - first
    like = row.values[-1].text if "." in row.values[-1].text or "," in row.values[-1].text else row.values[0].text
    line += f"; change: {_format(change, like)}"
    if first:
        line += f" ({_format(round(100 * change / abs(first), 1), '0.0')} %)"
    return line


def row_for(choice: Any, rows: list[Row]) -> Row:
    return next((r for r in rows if r.label() == getattr(choice, "row", None)), rows[0])


__all__ = ["Row", "choice_type", "comparison_line", "propose_rows", "row_for"]
