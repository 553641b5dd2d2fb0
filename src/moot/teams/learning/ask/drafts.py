"""The specialist contract: what a specialist is, what it gets, and what it gives back.

A specialist is one module under ``teams/learning/specialists/`` with:

- ``name`` — its role (``models={name: model}`` gives it its own model) and its agent's name;
- ``authority`` — how far its draft outranks others when it may replace the plain draft;
- ``stands_by`` — whether it is asked only when no other draft would answer (the plain draft and
  every other draft failed the checker), saving its call on every question a draft answers;
- ``applies(frame, recall)`` — the reason it applies (its precondition, established by the frame
  and the evidence), or ``None``;
- ``draft(ctx)`` — its :class:`Draft`, or ``None`` when it finds nothing to say.

The coordinator loops over the registry (``specialists/__init__.py``); adding a specialist is one
file and one registry line. Drafts are checked and selected in Python (``checker``, ``select``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from moot.models.base import Model
from moot.runtime import Run
from moot.teams.learning.ask.frame import QuestionFrame
from moot.teams.learning.ask.recall import Recall


class Draft(BaseModel):
    """One specialist's answer, with what it rests on."""

    specialist: str
    text: str
    """The answer as the user would read it."""
    computed: list[str] = Field(default_factory=list)
    """Values Python computed for it (they ground the numbers it states)."""
    quotes: list[str] = Field(default_factory=list)
    """The passages (``s<id>``) it rests on."""
    replaces: bool = False
    """Whether it may replace the plain draft: its precondition is established by the frame and it
    resolved the question in Python (a computed value, a step by position, each source's value)."""
    why: str = ""
    """Why it applied, in words."""
    measures: Literal["", "time"] = ""
    """What its computed value is a length of: ``time`` for a span counted between two dates."""
    adds: bool = False
    """Whether it follows the chosen answer as a note instead of replacing it (each source's value,
    where the sources differ): the answer keeps what the plain draft read, and gains what it left out."""
    states: list[str] = Field(default_factory=list)
    """The figures it states, as the sources write them (a note the answer already holds is not added)."""
    outdated: list[str] = Field(default_factory=list)
    """Of those, the ones a later report changed: an answer that gives only these is out of date."""


class Verdict(BaseModel):
    """The checker's finding on one draft."""

    specialist: str
    passed: bool
    ungrounded: list[str] = Field(default_factory=list)
    """Numbers or dates the draft states that no passage, fact, question or computation holds."""
    unlike: list[str] = Field(default_factory=list)
    """Figures of another kind than asked: measures ("300 kilograms") where the question counts things."""
    stated_lengths: list[str] = Field(default_factory=list)
    """Lengths the draft states as the sources write them ("14 hours", "12 km"): read, not worked out."""
    note: str = ""

    @property
    def fault(self) -> str:
        """What the draft got wrong, for the selector's rule."""
        if self.ungrounded:
            return f"states {', '.join(self.ungrounded)}, found in no source"
        if self.unlike:
            return f"gives {', '.join(self.unlike)}, not a count of what is asked"
        return "passed"


class Resolution(BaseModel):
    """Which draft answers, and why."""

    chosen: str
    answer: str
    rule: str
    verdicts: list[Verdict] = Field(default_factory=list)
    knows: bool = True


@dataclass
class AskContext:
    """What a specialist gets: the question read once, the evidence, the run, and its model."""

    question: str
    frame: QuestionFrame
    recall: Recall
    run: Run
    model_for: Callable[[str], Model]
    anchor: date | None = None
    """The newest source date: what "today" means for the sources."""
    notes: list[str] = field(default_factory=list)
    """What specialists report for the trace beside their drafts (a choice refused, and why)."""


class Specialist(Protocol):
    name: str
    authority: int
    stands_by: bool

    def applies(self, frame: QuestionFrame, recall: Recall) -> str | None: ...

    async def draft(self, ctx: AskContext) -> Draft | None: ...


__all__ = ["AskContext", "Draft", "Resolution", "Specialist", "Verdict"]
