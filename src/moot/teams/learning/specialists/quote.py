"""The quote specialist: the model chooses the sentence of the sources that answers, and it is quoted.

"Why did the line close?" is answered in the sources by one sentence, and a small model writing
its own account loses the "because". Python lists the best-matching passages (``s<id>``); the
model chooses one (an enum) or ``none``; the draft is that sentence, in the source's words, with
its source and date. It never replaces the plain draft: it stands by (``stands_by``), asked only
when the plain draft and every other draft fail the checker. (It used to replace it for a cause; on the development suites that lost more answers
than it won, since the chosen sentence is often a neighbour of the one that answers: docs/eval.md.)
"""

from __future__ import annotations

from typing import Literal

from moot.teams.learning.ask.drafts import AskContext, Draft
from moot.teams.learning.ask.frame import QuestionFrame
from moot.teams.learning.ask.recall import Recall
from moot.teams.learning.specialists.common import choose, ranked_passages

KINDS = frozenset({"value", "date", "cause", "explanation"})


class Quote:
    name = "quote"
    authority = 1
    stands_by = True

    def applies(self, frame: QuestionFrame, recall: Recall) -> str | None:
        if frame.kind in KINDS and any(p.score > 0 for p in recall.passages):
            return f"quote: the sources may state the {frame.kind} in one sentence"
        return None

    async def draft(self, ctx: AskContext) -> Draft | None:
        best = ranked_passages(ctx, limit=6)
        if not best:
            return None
        menu = "\n".join(f"{p.id}: {p.text} ({p.source}{', ' + p.published if p.published else ''})" for p in best)
        picked = await choose(ctx, self.name, "choose_passage", f"Sentences:\n{menu}\n\nQuestion: {ctx.question}",
                              {"sentence": (Literal[(*(p.id for p in best), "none")], ...)}, name="Sentence")  # type: ignore[valid-type]
        if picked is None or picked.sentence == "none":
            return None
        chosen = next(p for p in best if p.id == picked.sentence)
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
