"""Does a result answer its task? The Python checks that run before the model's goal check.

On the embedded 0.5B model a search agent completed "…then say how the passenger numbers changed
between the two notes" with *"The passenger numbers changed between the two notes."*, and the
model's goal check accepted it. Restating a task is recognisable without a model, and so is a
result that carries nothing from what it was given. Every check here compares **facts found by
format** (:mod:`moot.teams.board.facts`: numbers, dates, capitalised names) and words, never
the wording of any particular document:

1. **restatement**: at most a quarter of the result's content words are new to the task and
   goal, and it carries no fact the task does not already state;
2. **no fact from its inputs**: the inputs (files read, results of earlier steps, what a tool
   returned) hold facts the task does not state, and the result carries none of them;
3. **an input left unused**: a step that receives earlier results must carry at least one fact
   from each of them that has any (a fact only that input holds, when it has one);
4. **a comparison without its values**: a comparison must carry a fact from each compared input,
   a number from each one that holds numbers;
5. **figures left out** (:func:`coverage_problem`, for a step asked for a summary or facts): its
   inputs' figures, all of them up to :data:`COVER_FIGURES` per input.

A failed check is a sentence naming what is missing and examples of the facts it could have
used; the agent raises it as a retryable rejection, so the next attempt is told exactly that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from moot.teams.board.facts import Fact, Facts, carried, extract_facts
from moot.teams.board.similarity import content_words

RESTATEMENT_NEW_WORDS = 0.25
"""A result whose share of words new to the task is at most this (and which adds no fact) restates it."""
EXAMPLES = 4
"""How many of an input's facts a rejection names, so a retry can use them."""
COVER_FIGURES = 6
"""A summary or report of facts carries all of an input's figures, up to this many."""


@dataclass(frozen=True)
class Source:
    """One input of a step: a file it read, an earlier step's result, or what a tool returned."""

    label: str
    """``context/a.md``, ``step 2 (Summarise b.md)``, ``search_documents``."""
    text: str


def _stems(text: str) -> set[str]:
    return {w[:5] for w in content_words(text)}


def _new_facts(facts: Facts, known: Facts) -> Facts:
    keys = known.keys()
    return Facts([f for f in facts.items if (f.kind, f.key) not in keys])


def _distinctive(facts: Facts, others: list[Facts]) -> Facts:
    shared = set().union(*(o.keys() for o in others)) if others else set()
    own = Facts([f for f in facts.items if (f.kind, f.key) not in shared])
    return own if own else facts


def _examples(facts: list[Fact]) -> str:
    ranked = sorted(facts, key=lambda f: {"number": 0, "date": 1, "name": 2}[f.kind])
    return "; ".join(f.text for f in ranked[:EXAMPLES])


def restates(output: str, task_text: str) -> bool:
    """Whether ``output`` says nothing the task did not already say (check 1)."""
    words = _stems(output)
    if not words:
        return True
    new = words - _stems(task_text)
    task_facts = extract_facts(task_text)
    adds_fact = bool(_new_facts(extract_facts(output), task_facts))
    return not adds_fact and len(new) <= RESTATEMENT_NEW_WORDS * len(words)


def answer_problem(
    output: str,
    *,
    task_text: str,
    sources: Sequence[Source] = (),
    use_each: bool = False,
    comparison: bool = False,
) -> str | None:
    """Why ``output`` does not answer its task, or ``None`` when every check passes.

    ``task_text`` is what the result must not merely repeat (the task and its original goal);
    ``sources`` its inputs; ``use_each`` requires a fact from every source that has one (a
    step given earlier results); ``comparison`` requires the compared values (check 4).
    """
    known = extract_facts(task_text)
    per_source = [(s, _new_facts(extract_facts(s.text), known)) for s in sources]
    offered = [f for _, facts in per_source for f in facts.items]
    if restates(output, task_text):
        hint = f" (its inputs hold, for example: {_examples(offered)})" if offered else ""
        return f"the result restates the task instead of answering it{hint}: {_quoted(output)}"
    if offered and not carried(Facts(offered), output):
        return ("the result carries no figure, date or name from its inputs "
                f"(they hold, for example: {_examples(offered)}): {_quoted(output)}")
    if use_each or comparison:
        # A fact two inputs share (the same place named in both notes) shows no use of either:
        # each input is judged by the facts only it holds, when it has any. A comparison is
        # judged by all of them: two compared values may well be equal.
        judged = per_source if comparison else [(s, _distinctive(f, [g for t, g in per_source if t is not s]))
                                                for s, f in per_source]
        for source, facts in judged:
            if facts and not carried(facts, output):
                return (f"the result uses nothing from {source.label} "
                        f"(it holds, for example: {_examples(facts.items)}): {_quoted(output)}")
    if comparison:
        with_facts = [(s, f) for s, f in per_source if f]
        if len(with_facts) < 2 and len(sources) >= 2:
            return None  # nothing to compare by value: at most one input holds facts
        for source, facts in with_facts:
            numbers = facts.of_kind("number")
            if numbers and not carried(Facts(numbers), output):
                return (f"the comparison does not give the value from {source.label} "
                        f"(its figures: {_examples(numbers)}): {_quoted(output)}")
    return None


def coverage_problem(output: str, *, task_text: str, sources: Sequence[Source], limit: int = COVER_FIGURES) -> str | None:
    """Why a summary or a report of facts leaves out its inputs' figures, or ``None``.

    Each input's figures (numbers the task does not state) must all be carried when it holds at
    most ``limit`` of them, else at least ``limit``. The agent applies it to steps asked for a
    summary or facts (a short input's figures are what its summary is for).
    """
    known = extract_facts(task_text)
    for source in sources:
        numbers = _new_facts(extract_facts(source.text), known).of_kind("number")
        if not numbers:
            continue
        kept = carried(Facts(numbers), output)
        if len(kept) < min(len(numbers), limit):
            left = [f for f in numbers if f not in kept]
            return f"the result leaves out figures of {source.label}: {_examples(left)}: {_quoted(output)}"
    return None


def _quoted(text: str) -> str:
    flat = " ".join(str(text).split())
    return repr(flat if len(flat) <= 120 else flat[:117] + "...")


__all__ = ["COVER_FIGURES", "RESTATEMENT_NEW_WORDS", "Source", "answer_problem", "coverage_problem", "restates"]
