"""The steps specialist: a question about a procedure's steps is answered by position, in Python.

The sources write procedures as lists, and the order of the items is the order of the steps:
Python reads the lists whole (:class:`~moot.teams.learning.ask.recall.StepList`). The model
chooses which list (when there are several: the newest first, since a later notice may amend
a procedure), what the question asks of it (every step, the first, the last, the one after or
before a named step, a step's position, how many) and the named step, among the list's items;
Python answers by position.
"""

from __future__ import annotations

from typing import Literal

from moot.teams.learning.ask.drafts import AskContext, Draft
from moot.teams.learning.ask.frame import QuestionFrame, amount_asked
from moot.teams.learning.ask.recall import Recall, StepList
from moot.teams.learning.specialists.common import choose
from moot.text.words import content_words, stem, words

Relation = Literal["all", "first", "last", "after", "before", "position", "count"]


def _label(step_list: StepList) -> str:
    title = step_list.title or step_list.items[0]
    return f"{step_list.id}: {title[:90]} ({step_list.source}{', ' + step_list.published if step_list.published else ''}, {len(step_list.items)} steps)"


def answer_by_position(step_list: StepList, relation: str, named: int | None) -> str | None:
    """The answer for ``relation`` (``named``: the index of the step the question names)."""
    items = step_list.items
    numbered = lambda i: f"step {i + 1}: {items[i]}"  # noqa: E731
    if relation == "all":
        return " ".join(f"{i + 1}. {item}" for i, item in enumerate(items))
    if relation == "first":
        return f"The first step is {numbered(0)}"
    if relation == "last":
        return f"The last step is {numbered(len(items) - 1)}"
    if relation == "count":
        return f"There are {len(items)} steps."
    if named is None:
        return None
    if relation == "position":
        return f"It is step {named + 1} of {len(items)}: {items[named]}"
    if relation == "after":
        return f"After {numbered(named)} comes {numbered(named + 1)}" if named + 1 < len(items) else (
            f"Nothing: {numbered(named)} is the last step.")
    if relation == "before":
        return f"Before {numbered(named)} comes {numbered(named - 1)}" if named > 0 else (
            f"Nothing: {numbered(named)} is the first step.")
    return None


NAMED = frozenset({"after", "before", "position"})
"""The relations that start from a step the question names."""


def counts_steps(question: str) -> bool:
    """Whether a "how many …" question counts steps, the word this specialist's count answers with.
    "How many packets may a member borrow" counts packets, not the items of a list (their count
    is then left to the plain draft, which reads the sources)."""
    tokens = words(question)
    at = amount_asked(tokens)
    if at is None or tokens[at] != "many" or at + 1 >= len(tokens):
        return True
    return stem(tokens[at + 1]) == stem("steps")


def names_step(question: str, item: str) -> bool:
    """Whether the question shares a content word (by stem) with the step the model says it names."""
    return bool(set(content_words(question)) & set(content_words(item)))


class Steps:
    name = "steps"
    authority = 4
    stands_by = False

    def applies(self, frame: QuestionFrame, recall: Recall) -> str | None:
        if frame.kind == "steps" and recall.lists:
            return f"steps: the question asks about steps and the sources write out {len(recall.lists)} list(s)"
        return None

    async def draft(self, ctx: AskContext) -> Draft | None:
        lists = sorted(ctx.recall.lists, key=lambda s: s.published or "", reverse=True)[:6]
        steps_menu = [f"{s.id}.{i + 1}" for s in lists for i in range(len(s.items))][:40]
        menu = "\n".join(f"{_label(s)}\n" + "\n".join(f"  {s.id}.{i + 1}: {item[:100]}" for i, item in enumerate(s.items))
                         for s in lists)
        fields = {
            "procedure": (Literal[tuple(s.id for s in lists)], ...),  # type: ignore[valid-type]
            "relation": (Relation, ...),
            "step": (Literal[("", *steps_menu)], ""),  # type: ignore[valid-type]
        }
        picked = await choose(ctx, self.name, "choose_steps", f"Procedures:\n{menu}\n\nQuestion: {ctx.question}", fields,
                              name="StepQuestion")
        if picked is None:
            return None
        chosen = next(s for s in lists if s.id == picked.procedure)
        named = None
        if picked.step and picked.step.startswith(f"{chosen.id}."):
            named = int(picked.step.split(".", 1)[1]) - 1
        if named is not None and picked.relation in NAMED and not names_step(ctx.question, chosen.items[named]):
            # The model named a step the question does not: its choice rests on nothing the user wrote.
            return None
        if picked.relation == "count" and not counts_steps(ctx.question):
            return None
        text = answer_by_position(chosen, picked.relation, named)
        if text is None:
            return None
        return Draft(specialist=self.name, text=text, computed=[str(i) for i in range(1, len(chosen.items) + 1)],
                     quotes=[chosen.id], replaces=True,
                     why=self.applies(ctx.frame, ctx.recall) or "")


SPECIALIST = Steps()
