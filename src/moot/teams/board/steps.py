"""Explicit steps of a goal: the steps a goal spells out, found without a model.

The planner is a model; on the embedded 0.5B model it turned "Summarise solar.md, summarise
wind.md, then compare the lifetimes …" into two summaries and silently dropped the comparison.
A goal that spells its steps out says exactly what must happen, so the breakdown agent proposes
those steps itself (:func:`moot.teams.board.plan.propose_steps`).

What counts as an explicit step (anything else is left to the planner):

- numbered or bulleted items: ``1. … 2. …``, ``1) …``, ``(1) …``, ``- …`` on their own lines;
- clauses separated by ``then``, ``;``, ``after that``, ``finally``, ``and then``;
- comma- or ``and``-separated clauses that each *start with an imperative verb* ("summarise
  solar.md, summarise wind.md"). A clause that does not start with a verb belongs to the one
  before it, so "write a guide about cats, dogs and birds" stays one step.
"""

from __future__ import annotations

import re


MAX_STEPS = 8
"""A goal with more explicit steps than this is a list of tasks, not a goal: only the first are kept."""

IMPERATIVE_VERBS = frozenset(
    """add analyse analyze answer assess build calculate check classify collect combine compare
    compile compute condense convert count create decide define describe design determine draft
    edit estimate evaluate explain extract fetch figure fill find fix format gather generate give group
    identify implement improve include investigate label list locate look make map measure merge
    note open organise organize outline plan plot predict prepare present prioritise prioritize
    propose rank rate read recommend record reformat remove rename report research review rewrite
    run save say scan search select show sort split state store suggest summarise summarize tabulate tally
    tell test translate update verify visualise visualize write""".split()
)
"""Words that open an imperative step. A fixed list keeps the check deterministic and cheap."""

_NUMBERED = re.compile(r"(?:^|\s)(?:\(?\d{1,2}[.)]|[-*•])\s+")
_SEQUENCE = re.compile(
    r"\s*(?:;|\.\s+|,?\s+and\s+then\s+|,?\s+then\s+|,?\s+after\s+that,?\s+|,?\s+afterwards,?\s+|,?\s+finally,?\s+)\s*",
    re.IGNORECASE,
)
_COMMA_OR_AND = re.compile(r"(\s*(?:,\s*(?:and\s+)?|\s+and\s+)\s*)", re.IGNORECASE)
_LEAD = re.compile(r"^(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|next|also|please|then|finally|and)[,:]?\s+", re.IGNORECASE)


def _clean(clause: str) -> str:
    text = clause.strip(" \t\n.,;:")
    while True:
        stripped = _LEAD.sub("", text)
        if stripped == text:
            return text
        text = stripped.strip()


def _starts_with_verb(clause: str) -> bool:
    words = re.findall(r"[a-z]+", clause.lower())
    return bool(words) and words[0] in IMPERATIVE_VERBS


def _numbered_items(goal: str) -> list[str]:
    parts = _NUMBERED.split(goal)
    if len(parts) < 3:  # fewer than two markers: not a list
        return []
    return [_clean(p) for p in parts[1:] if _clean(p)]


def explicit_steps(goal: str) -> list[str]:
    """The steps a goal spells out, in order; ``[]`` (or one step) when it spells out none."""
    items = _numbered_items(goal)
    if len(items) >= 2:
        return items[:MAX_STEPS]
    steps: list[str] = []
    for segment in _SEQUENCE.split(goal):
        segment = _clean(segment)
        if not segment:
            continue
        # Inside a segment, "A, B and C" are separate steps only when each opens with a verb;
        # a clause without one continues the previous clause ("cats, dogs and birds").
        merged: list[str] = []
        pieces = _COMMA_OR_AND.split(segment)  # clause, separator, clause, …
        for index in range(0, len(pieces), 2):
            clause = pieces[index].strip()
            if not clause:
                continue
            if merged and not _starts_with_verb(clause):
                merged[-1] = f"{merged[-1]}{pieces[index - 1]}{clause}"  # keep the original wording
            else:
                merged.append(_clean(clause))
        if len(merged) > 1 and not all(_starts_with_verb(c) for c in merged):
            merged = [segment]  # the segment does not read as a list of actions: keep it whole
        steps.extend(merged)
    if len(steps) < 2:
        return []
    # A sequence split whose pieces are not actions ("Ireland. It is green") is no list of steps.
    if sum(_starts_with_verb(s) for s in steps) < 2:
        return []
    return [s for s in steps if _starts_with_verb(s)][:MAX_STEPS]


def step_description(step: str) -> str:
    """A step as a subtask description: capitalised, one sentence."""
    text = step.strip().rstrip(".")
    return text[:1].upper() + text[1:] + "."


__all__ = ["IMPERATIVE_VERBS", "MAX_STEPS", "explicit_steps", "step_description"]
