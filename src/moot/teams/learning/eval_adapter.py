"""The learning team as an agent of the progressive evaluation (``moot.eval``).

One :class:`LearningTeamAgent` per level, over a fresh knowledge base in the folder the
runner gives it: learning goes through the team's ``learn`` (no budget: an article is learned
whole or not at all), answers through ``LearningTeam.ask`` with the team's ``standard`` budget
per question, and the teaching level through a real teaching session whose student — starting from an empty
memory — then answers the level's quiz from its own notes.
"""

from __future__ import annotations

import dataclasses

from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.eval.adapter import AgentAnswer
from moot.eval.sampling import SeededModel
from moot.memory import KnowledgeBase
from moot.models.base import Model, Usage
from moot.runtime import RunStore, SubAgent


class LearningTeamAgent:
    """Adapter: ``learn`` / ``answer`` / ``teach_and_quiz`` over one knowledge base."""

    name = "learning team"

    def __init__(self, folder: Path, *, model: Model, temperature: float | None = None,
                 budget: str = "standard", store: RunStore | None = None, teaching_rounds: int = 8,
                 models: dict[str, Model] | None = None, parent_run_id: str | None = None,
                 extraction: str = "select") -> None:  # fmt: skip
        self.folder = Path(folder)
        self.extraction = extraction
        """How articles are learned: ``select`` (the default) or ``rewrite`` (the earlier extractor)."""
        self.parent_run_id = parent_run_id
        """The eval's run: learning and answering runs are recorded under it."""
        self.models = dict(models or {})
        self.articles: list[tuple[str, str | None, str]] = []
        """The level's articles as learned (source, date, text): the ``context`` mode's prompt."""
        self.kb = KnowledgeBase.open(self.folder / "kb.sqlite3")
        self.model = model
        self.temperature = temperature
        self.budget = budget
        self.store = store if store is not None else RunStore()
        self._own_store = store is None
        self.teaching_rounds = teaching_rounds

    def _model_for(self, seed: int | None) -> Model:
        return SeededModel(self.model, seed=seed, temperature=self.temperature)

    async def learn(self, content: str, *, source: str, published: str | None) -> Usage:
        from moot.teams.learning.ingest.learning import learn

        self.articles.append((source, published, content))
        report = await learn(self.kb, content, source=source, published=published, model=self.model, store=self.store,
                             parent_run_id=self.parent_run_id, extraction=self.extraction)  # type: ignore[arg-type]
        return report.usage

    async def answer(self, question: str, *, mode: str, seed: int | None) -> AgentAnswer:
        from moot.teams.learning.team import LearningTeam

        if mode == "context":
            return await self._answer_in_context(question, seed)
        models = {role: self._model_for_role(role, seed) for role in self.models}
        team = LearningTeam(self.kb, model=self._model_for(seed), models=models, budget=self.budget, store=self.store)
        reply = await team.ask(question, mode=mode, parent_run_id=self.parent_run_id)
        trace = {
            "intent": reply.intent,
            "mode": reply.mode,
            "sub_agents": reply.sub_agents,
            "facts": [f.content for f in reply.trace.facts],
            "notes": reply.trace.notes,
            "knows": reply.knows,
            "confidence": reply.confidence,
            # "stopped" = the budget (calls or deadline) ended the answer early; the report counts these.
            "run_status": self._run_status(reply.run_id),
        }
        return AgentAnswer(text=reply.answer, usage=reply.usage, run_id=reply.run_id, trace=trace, seconds=reply.seconds,
                           complete=reply.answered)

    def _model_for_role(self, role: str, seed: int | None) -> Model:
        return SeededModel(self.models[role], seed=seed, temperature=self.temperature)

    async def _answer_in_context(self, question: str, seed: int | None) -> AgentAnswer:
        """The baseline a user tries first: ONE call with all of the level's articles in the prompt.

        No knowledge base, no specialists, no tools. When the articles do not fit the model's
        context the answer is an error the report counts, never a silently cut prompt."""
        import time

        from moot.models.base import ModelRequest, ModelSettings, SystemMessage, UserMessage
        from moot.runtime import load_prompt

        started = time.perf_counter()
        from moot.teams.learning.ask.recall import sources_block

        articles = sources_block(self.articles)
        request = ModelRequest(messages=(SystemMessage(content=load_prompt("context", __package__)),
                                         UserMessage(content=f"Articles:\n\n{articles}\n\nQuestion: {question}")),
                               settings=ModelSettings(max_tokens=300, temperature=0.0), agent="context")
        window = getattr(getattr(self.model, "settings", None), "context", None)
        if isinstance(window, int) and request.estimated_input_tokens() + 300 > window:
            raise MootError(f"the level's articles ({request.estimated_input_tokens()} tokens) do not fit the "
                            f"model's context of {window}", fix="use a model with a larger context")
        reply = await self._model_for(seed).request(request)
        return AgentAnswer(text=reply.text.strip(), usage=reply.usage, trace={"mode": "context",
                           "articles": len(self.articles)}, seconds=time.perf_counter() - started)

    async def teach_and_quiz(self, topic: str, questions: list[str], *, seed: int | None) -> list[AgentAnswer]:
        """Teach ``topic`` to a new student, then the student alone answers ``questions``.

        The session's own cost (rounds of teaching) is spread evenly over the quiz answers,
        so the per-question cost of the teaching level includes the teaching.
        """
        from moot.teams.learning.teach.student import QUIZ_SETTINGS, QuizAnswer, answer_task, degenerate, held_to_notes
        from moot.runtime import load_prompt
        from moot.teams.learning.teach.session import run_teaching_session

        model = self._model_for(seed)
        student_path = self.folder / f"student-{seed}.sqlite3"
        student_path.unlink(missing_ok=True)
        report = await run_teaching_session(self.kb, topic, model=model, rounds=self.teaching_rounds, quiz_size=1,
                                            store=self.store, student_kb=student_path)  # fmt: skip
        share = Usage(
            input_tokens=report.usage.input_tokens // max(1, len(questions)),
            output_tokens=report.usage.output_tokens // max(1, len(questions)),
            requests=round(report.usage.requests / max(1, len(questions))),
            cost_usd=report.usage.cost_usd / max(1, len(questions)),
        )
        student = SubAgent("student", "student", load_prompt("student", __package__), model=model, output_type=QuizAnswer,
                           max_turns=2, settings=QUIZ_SETTINGS)  # fmt: skip
        answers: list[AgentAnswer] = []
        with KnowledgeBase.open(student_path) as notes_kb:
            for question in questions:
                notes = [f.content for f in notes_kb.retrieve(question, limit=8).facts] if notes_kb.count() else []
                result = await student.run(answer_task(question, notes, self_explain=False))
                said = result.output.answer if result.ok and isinstance(result.output, QuizAnswer) else ""
                if said and degenerate(said, notes, question):  # once: "json" is no answer
                    again = await student.run(answer_task(question, notes, self_explain=False, insist=True))
                    result = dataclasses.replace(again, usage=result.usage + again.usage)
                    said = again.output.answer if again.ok and isinstance(again.output, QuizAnswer) else said
                # The quiz counts only what the student's own notes hold, not what it guessed.
                text, outside = held_to_notes(said, notes, question)
                answers.append(AgentAnswer(
                    text=text, usage=result.usage + share, run_id=report.run_id,
                    trace={"student_notes": notes, "teaching_status": report.status, "stop_reason": report.stop_reason,
                           "said": said, "not_in_notes": outside},
                ))  # fmt: skip
        return answers

    def _run_status(self, run_id: str) -> str | None:
        try:
            return self.store.get_run(run_id).status
        except MootError:
            return None

    def knowledge_text(self) -> str:
        """Every fact learned (superseded ones too: they were learned), as text."""
        return "\n".join(f"{f.content} {f.value}" for f in self.kb.facts(include_superseded=True))

    def run_details(self, run_id: str) -> dict[str, Any] | None:
        try:
            return self.store.get_run(run_id).results
        except MootError:
            return None

    async def aclose(self) -> None:
        self.kb.close()
        if self._own_store:
            self.store.close()


def learning_team_factory(model: Model, *, temperature: float | None = None, budget: str = "standard",
                          store: RunStore | None = None, teaching_rounds: int = 8,
                          models: dict[str, Model] | None = None, parent_run_id: str | None = None,
                          extraction: str = "select") -> Any:  # fmt: skip
    """The runner's factory: a fresh :class:`LearningTeamAgent` in each level's folder.

    ``models`` gives answering roles their own model (see ``LearningTeam(models=…)``)."""

    def make(folder: Path) -> LearningTeamAgent:
        return LearningTeamAgent(folder, model=model, temperature=temperature, budget=budget, store=store,
                                 teaching_rounds=teaching_rounds, models=models, parent_run_id=parent_run_id,
                                 extraction=extraction)  # fmt: skip

    return make


__all__ = ["LearningTeamAgent", "learning_team_factory"]
