"""The plain draft: one agent reads the evidence and answers (single mode's whole answer, multi mode's base).

The sources are given whole when they fit the prompt, as the user gave them (oldest first, each
under its name and date), else their best-matching passages, grouped by source with each
source's date and a mark on values a later report changed. Every other
specialist may only add to it or, where its precondition holds and its result checks, replace it.
"""

from __future__ import annotations

from moot.models.base import ModelSettings
from moot.runtime import SubAgent, load_prompt
from moot.teams.learning.ask.drafts import AskContext, Draft
from moot.teams.learning.ask.frame import QuestionFrame
from moot.teams.learning.ask.recall import Recall

PROMPTS = "moot.teams.learning"


class Plain:
    name = "single"
    authority = 0
    stands_by = False

    def applies(self, frame: QuestionFrame, recall: Recall) -> str | None:
        return "the plain draft: the evidence read by one agent"

    async def draft(self, ctx: AskContext) -> Draft | None:
        agent = SubAgent("single", "answers from the evidence alone", load_prompt("answer", PROMPTS),
                         model=ctx.model_for("single"), max_turns=1, settings=ModelSettings(max_tokens=300))
        sources = ctx.recall.render_documents() if ctx.recall.documents else ctx.recall.render()
        outcome = await ctx.run.step("single", agent, f"Sources:\n\n{sources}\n\nQuestion: {ctx.question}")
        if outcome is None or not outcome.ok or not str(outcome.output or "").strip():
            return None
        return Draft(specialist=self.name, text=str(outcome.output).strip(), why=self.applies(ctx.frame, ctx.recall) or "")


SPECIALIST = Plain()
