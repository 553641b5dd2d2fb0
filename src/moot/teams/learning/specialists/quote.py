"""The quote specialist: the model chooses the sentence of the sources that answers, and it is quoted.

"Why did the line close?" is answered in the sources by one sentence, and a small model writing
its own account loses the "because". Python lists the best-matching passages (``s<id>``); the
model chooses one (an enum) or ``none``; the draft is that sentence, in the source's words, with
its source and date. It never replaces the plain draft: it stands by (``stands_by``), asked only
when the plain draft and every other draft fail the checker. (It used to replace it for a cause; on the development suites that lost more answers
than it won, since the chosen sentence is often a neighbour of the one that answers: docs/eval.md.)
"""

from __future__ import annotations

from dataclasses import dataclass

from moot.teams.learning.ask.drafts import AskContext, Draft
from moot.teams.learning.ask.frame import QuestionFrame
from moot.teams.learning.ask.recall import Passage, Recall
from moot.teams.learning.specialists.common import choose_listed, ranked_passages

KINDS = frozenset({"value", "date", "cause", "explanation"})


@dataclass(frozen=True)
class Sentence:
    """A passage as the model sees it in the list."""

    id: str
    passage: Passage

    @property
    def text(self) -> str:
        return self.passage.text

    def render(self) -> str:
        p = self.passage
        return f"{self.id}: {p.text} ({p.source}{', ' + p.published if p.published else ''})"


class Quote:
    name = "quote"
    authority = 1
    stands_by = True

    def applies(self, frame: QuestionFrame, recall: Recall) -> str | None:
        if frame.kind in KINDS and any(p.score > 0 for p in recall.passages):
            return f"quote: the sources may state the {frame.kind} in one sentence"
        return None

    async def draft(self, ctx: AskContext) -> Draft | None:
        best = [Sentence(p.id, p) for p in ranked_passages(ctx, limit=6)]
        if not best:
            return None
        choice = await choose_listed(ctx, self.name, "choose_passage", "Sentences", best,
                                     lambda ids: {"sentence": (ids, ...)}, ("sentence",), name="Sentence", prefix="s",
                                     none=True)
        if choice is None or choice.picked["sentence"] is None:
            return None
        chosen = choice.picked["sentence"].passage
        # The text as the source writes it; where the sentence opens by pointing back, the one before it too.
        before = ctx.recall.passage(f"s{int(chosen.id[1:]) - 1}")
        lead = f"{before.text} " if before is not None and before.source == chosen.source and _points_back(chosen.text) else ""
        text = f"{lead}{chosen.text} ({chosen.source}{', ' + chosen.published if chosen.published else ''})"
        return Draft(specialist=self.name, text=text, quotes=[chosen.id], replaces=False,
                     why=self.applies(ctx.frame, ctx.recall) or "")


def _points_back(text: str) -> bool:
    from moot.text.words import refers_back

    return bool(refers_back(text))


SPECIALIST = Quote()
