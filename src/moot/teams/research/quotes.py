"""Lines of the source that answer the question: the model picks them, moot quotes them.

The index can say where a thing is defined and who calls it, but a question about behaviour
("what happens to the method on a redirect?") is answered by a few lines of code: an ``if``
on the status, a ``headers.pop(...)``, a default value. A 0.5B model paraphrases such lines
badly, and invents them when it writes from memory. Python gathers and ranks the candidate
lines (``codelines``), and the model only *chooses* among them, by number, under a schema
that admits nothing else. The answer then quotes the chosen lines verbatim from the file,
with ``path:line``, so every quoted line really occurs where it is cited; a chosen condition
is stated in words beside it, written from the syntax tree.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, create_model

from moot.models.base import ModelSettings
from moot.runtime import SubAgent, load_prompt
from moot.teams.research.codelines import CODE_IN_WORDS, CodeLine, candidate_lines, led_elsewhere, question_terms

CHOOSERS = {"model": "the model", "ranking": "moot's ranking"}
"""Who chose the quoted lines, by ``ResearchConfig.line_choice``, as the answer names them."""
MAX_PICKED = 8
"""Lines quoted in one answer from one list (single mode: one picker)."""
PICKED_PER_SUB_QUESTION = 4
"""Multi mode: lines one sub-question's picker may quote (each researcher's own list)."""
OFFERED_PER_SUB_QUESTION = 20
"""Multi mode: lines one sub-question's picker is shown (single mode: ``codelines.MAX_CANDIDATES``).
Three pickers of forty lines read about 1,600 prompt tokens each, most of a multi-mode question's
time on two cores; on the blind set (b) 14 of the 15 lines the pickers chose that its evidence
ranges hold were ranked in the first twenty."""
RANKED_MAX = 12
"""Lines the ranking quotes from one list, when it chooses (``line_choice="ranking"``). No
picker's schema bounds it, and the lines ranked after the eighth still come from the resolved
definitions: offline over the development sets, the first 12 lines make 0.265 of the claims
against 0.214 for 8, and the share of them in a relevant file stays 0.92 (0.93)."""
RANKED_PER_SUB_QUESTION = 6
"""Multi mode with the ranking choosing: lines quoted per sub-question. On two development sets
6 raised claim recall from 0.29 and 0.24 (4 lines) to 0.34 and 0.29 at the same precision; 8 made
about as many claims again (0.33, 0.33) in answers a quarter longer (docs/code-research.md)."""


class QuotePick(BaseModel):
    """The line picker's answer: numbers from the list it was shown."""

    lines: list[int] = Field(default_factory=list, max_length=MAX_PICKED)


class ConditionPick(BaseModel):
    """The picker's answer to a how-question: first the conditions that decide the answer, then
    any other lines that show it (both numbers from the list it was shown)."""

    conditions: list[int] = Field(default_factory=list, max_length=MAX_PICKED)
    lines: list[int] = Field(default_factory=list, max_length=MAX_PICKED)


def pick_type(count: int, limit: int = MAX_PICKED, *, conditions: list[int] | None = None) -> type[BaseModel]:
    """The picker's schema with line numbers limited to 1..``count`` (constrained decoding
    cannot name a line it was not shown). With ``conditions`` (the numbers of the shown lines
    that are conditions, for a how-question) the schema asks first for one or more of those,
    then for any other lines."""
    if count <= 0:
        return QuotePick
    numbers = Literal[tuple(range(1, count + 1))]  # type: ignore[valid-type]
    if conditions:
        return create_model(  # type: ignore[call-overload, no-any-return]
            "ConditionPick", __base__=ConditionPick,
            conditions=(list[Literal[tuple(conditions)]], Field(min_length=1, max_length=limit,  # type: ignore[misc]
                                                                description="numbers of the conditions that decide the answer")),
            lines=(list[numbers], Field(default_factory=list, max_length=limit,
                                        description="numbers of other lines that show the answer")),
        )
    return create_model(  # type: ignore[call-overload, no-any-return]
        "QuotePick", __base__=QuotePick,
        # Required and at least one: with an optional list the 0.5B model answered `{ }` for
        # five of six questions. "None of them" is not an option a picker of shown lines needs.
        lines=(list[numbers], Field(min_length=1, max_length=limit, description="numbers of the lines that answer the question")),
    )


def picker_agent(model: object, count: int, limit: int = MAX_PICKED, *, conditions: list[int] | None = None) -> SubAgent:
    return SubAgent("line-picker", "chooses the source lines (and, for a how-question, the conditions) that answer the question",
                    load_prompt("quote", __package__), model=model,
                    output_type=pick_type(count, limit, conditions=conditions),  # type: ignore[arg-type]
                    max_turns=2, settings=ModelSettings(max_tokens=120))


def condition_numbers(lines: list[CodeLine]) -> list[int]:
    """The numbers (1-based, as shown) of the lines that are conditions."""
    return [n for n, c in enumerate(lines, 1) if c.is_condition()]


def grouped(lines: list[CodeLine]) -> list[CodeLine]:
    """The lines as the picker is shown them: each definition's lines together, in the ranking's
    order, the definitions in the order of their best line. Shown in the ranking's own order the
    definitions alternate, and a heading on every row cost as much prompt as the file and line
    it replaced (blind set (b), 2026-11-29: 30 % fewer characters grouped, 1 % in rank order)."""
    first: dict[tuple[str, str], int] = {}
    for rank, c in enumerate(lines):
        first.setdefault((c.symbol, c.path), rank)
    return sorted(lines, key=lambda c: first[(c.symbol, c.path)])


def picker_task(question: str, lines: list[CodeLine], *, how: bool = False) -> str:
    """The picker's task: the lines numbered in the order given (:func:`grouped`), under a
    heading for the definition they are in whenever it changes. The file and line numbers are
    left out: the model answers with list numbers, and one more number on every row is more
    prompt to read (the pickers' prompts were most of what a multi-mode question cost on this
    machine's two cores) and one more number to confuse with the one it is asked for."""
    rows: list[str] = []
    heading: tuple[str, str] | None = None
    for n, c in enumerate(lines, 1):
        if (c.symbol, c.path) != heading:
            heading = (c.symbol, c.path)
            rows.append(f"In `{c.symbol}` ({c.path}):")
        rows.append(f"{n}. {'[condition] ' if how and c.is_condition() else ''}{c.quoted()}")
    shown = "\n".join(rows)
    ask = ("Give the numbers of the conditions that decide the answer (marked [condition]), then of any other lines "
           "that show it." if how and condition_numbers(lines) else "Give the numbers of the lines that answer the question.")
    return f"Question: {question}\n\nLines:\n{shown}\n\n{ask}"


def chosen(lines: list[CodeLine], output: object) -> list[CodeLine]:
    """The lines the model picked (conditions first), each once, in source order (file, then
    line); nothing when it picked none or gave no valid answer (nothing is guessed for it)."""
    numbers = [*getattr(output, "conditions", []), *output.lines] if isinstance(output, (QuotePick, ConditionPick)) else []
    picked = [lines[n - 1] for n in dict.fromkeys(numbers) if 1 <= n <= len(lines)][:MAX_PICKED]
    return sorted(picked, key=lambda c: (c.path, c.line))


def ranked_choice(lines: list[CodeLine], limit: int, *, how: bool = False) -> list[CodeLine]:
    """What the ranking alone would quote (``ResearchConfig(line_choice="ranking")``): the first
    ``limit`` lines, and for a how-question at least the best-ranked condition."""
    picked = list(lines[:limit])
    if how and not any(c.is_condition() for c in picked) and (first := next((c for c in lines if c.is_condition()), None)):
        picked = [first, *picked[: limit - 1]]
    return sorted(picked, key=lambda c: (c.path, c.line))


def states_more(line: CodeLine) -> str:
    """A quoted decision's words, when they state code the quoted lines do not show: the way
    through a definition ends on `return number`, and what decides the number is the lines
    before it; a branch's later steps are below its first. Stated in words by moot from the
    syntax tree. (A how-question's conditions have a section of their own, always in words.)"""
    if not line.words:
        return ""
    shown = f"{line.text} {line.then}"
    if all(code.rstrip("…") in shown for code in CODE_IN_WORDS.findall(line.words)):
        return ""
    return f" — {line.words}"


def quote_section(lines: list[CodeLine], *, chosen_by: str = "model") -> str:
    """The answer's quoted lines: verbatim from the file at the cited line. ``chosen_by`` is a
    ``CHOOSERS`` key: the answer says who chose them."""
    if not lines:
        return ""
    body = "\n".join(f"- {c.location()} (in `{c.symbol}`): {c.quoted()}{states_more(c)}" for c in lines)
    return f"Lines of the source that answer it (chosen by {CHOOSERS[chosen_by]}, quoted by moot from the files):\n" + body


__all__ = [
    "CodeLine",
    "ConditionPick",
    "QuotePick",
    "condition_numbers",
    "ranked_choice",
    "candidate_lines",
    "grouped",
    "led_elsewhere",
    "chosen",
    "pick_type",
    "picker_agent",
    "picker_task",
    "question_terms",
    "quote_section",
    "states_more",
]
