"""The learning team's facade: ``LearningTeam(kb).ask(question)`` and the answer it returns.

Every :class:`Answer` carries its own metacognition — the intent and who decided it, the mode
and the rule that chose it, the retrieval strategy, the facts used with their sources, the
sub-agents that ran (and any fallback), a confidence — and says plainly when the knowledge
base does not hold the answer, instead of letting a small model improvise one.

    from moot.teams.learning import LearningTeam
    team = LearningTeam("olympics", model="local")
    answer = team.ask_sync("How did Norway's gold medals change?", mode="multi")
    print(answer.answer, answer.trace.render())
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.memory import KnowledgeBase
from moot.models.base import Model
from moot import config
from moot.runtime import Budget, EventBus, RunStore
from moot.teams.learning.answer import Answer, AnswerTrace, FactUsed, SubAgentStep
from moot.teams.learning.ask.pipeline import answer_question, roles

ROLES = roles()
"""The answering roles a model can be given with ``models={role: model}``: the frame, the plain
draft (``single``) and each specialist."""


def _missing_kb(path: Path) -> MootError:
    return MootError(f"no knowledge base at {path}", fix="learn something first: moot learn FILE --kb NAME")


class LearningTeam:
    """The learning team over one knowledge base: learn, ask, teach.

    ``kb`` is a :class:`KnowledgeBase`, a name or a path. Asking never creates a knowledge
    base (a typo must not answer "I don't know" from an empty file); learning does.
    """

    def __init__(self, kb: KnowledgeBase | str | Path, *, model: Model | str | None = None,
                 models: Mapping[str, Model | str] | None = None,
                 budget: Budget | str = "standard", store: RunStore | None | bool = True) -> None:
        self._kb = kb if isinstance(kb, KnowledgeBase) else None
        self._kb_ref = kb
        self._model_ref = model
        self._model: Model | None = model if isinstance(model, Model) else None
        from moot.models.registry import check_roles

        check_roles(models, ROLES, team="learning")  # an unknown role: one line naming the roles
        self._role_refs: dict[str, Model | str] = dict(models or {})
        self._role_models: dict[str, Model] = {r: m for r, m in self._role_refs.items() if isinstance(m, Model)}
        # A preset's deadline fits the model: the embedded model on two cores takes 10-60 s a call.
        self.budget = (Budget.preset(budget, model=model if model is not None else config.default_model_string())
                       if isinstance(budget, str) else budget)
        self.store: RunStore | None = RunStore() if store is True else (store or None)  # type: ignore[assignment]

    # ------------------------------------------------------------------ resources

    def knowledge_base(self, *, create: bool = False) -> KnowledgeBase:
        """The knowledge base, opened on first use; refuses a missing file unless ``create``."""
        if self._kb is None:
            from moot.memory.store import resolve_path

            path = resolve_path(self._kb_ref)  # type: ignore[arg-type]
            if not create and not path.exists():
                raise _missing_kb(path)
            self._kb = KnowledgeBase.open(path)
        return self._kb

    @property
    def model(self) -> Model:
        if self._model is None:
            from moot.models.registry import infer_model

            self._model = infer_model(self._model_ref)  # type: ignore[arg-type]
        return self._model

    @property
    def models(self) -> dict[str, Model]:
        """The model of each role that does not use the default ``model``."""
        for role, ref in self._role_refs.items():
            if role not in self._role_models:
                from moot.models.registry import infer_model

                self._role_models[role] = infer_model(ref)  # type: ignore[arg-type]
        return dict(self._role_models)

    def model_names(self) -> dict[str, str]:
        """Which model plays which role (every role; the default model's name where not overridden)."""
        default = self.model.name
        return {role: (self.models[role].name if role in self._role_refs else default) for role in ROLES}

    async def aclose(self) -> None:
        """Close the knowledge base (when the team opened it) and the model (when it built it)."""
        if self._kb is not None and not isinstance(self._kb_ref, KnowledgeBase):
            self._kb.close()
            self._kb = None
        if self._model is not None and not isinstance(self._model_ref, Model):
            await self._model.aclose()
            self._model = None
        for role, ref in self._role_refs.items():
            built = self._role_models.pop(role, None)
            if built is not None and not isinstance(ref, Model):
                await built.aclose()

    # ------------------------------------------------------------------ the three jobs

    async def ask(self, question: str, *, mode: str = "auto", bus: EventBus | None = None,
                  on_phase: Any = None, parent_run_id: str | None = None) -> Answer:
        """Answer a question from the knowledge base; ``mode`` is ``auto``, ``single`` or ``multi``;
        ``parent_run_id``: the run that holds this one (an eval, a batch of questions)."""
        if not question.strip():
            raise MootError("the question is empty", fix='ask something: moot ask "QUESTION" --kb NAME')
        kb = self.knowledge_base()
        answer = await answer_question(kb, question, model=self.model, mode=mode, budget=self.budget,
                                       store=self.store, bus=bus, on_phase=on_phase, models=self.models,
                                       parent_run_id=parent_run_id)
        if self.store is not None and answer.run_id:  # the run's page shows intent, strategy and facts from this
            self.store.record_output(answer.run_id, "answer", {**answer.to_json(), "question": answer.question,
                                                               "trace": answer.trace.model_dump(mode="json")})
        return answer

    def ask_sync(self, question: str, *, mode: str = "auto") -> Answer:
        """:meth:`ask` from synchronous code."""
        return asyncio.run(self.ask(question, mode=mode))

    async def learn(self, content: str, *, source: str, published: Any = None, progress: Any = None,
                    bus: EventBus | None = None) -> Any:
        """Learn facts from content into the knowledge base (creating it if needed)."""
        from moot.teams.learning.ingest.learning import learn

        return await learn(self.knowledge_base(create=True), content, source=source, published=published,
                           model=self.model, progress=progress, budget=self.budget, bus=bus)

    def learn_sync(self, content: str, *, source: str, published: Any = None) -> Any:
        return asyncio.run(self.learn(content, source=source, published=published))

    async def teach(self, topic: str, **kwargs: Any) -> Any:
        """Run a teaching session on a topic from the knowledge base (see ``moot teach``)."""
        from moot.teams.learning.teach.session import run_teaching_session

        return await run_teaching_session(self.knowledge_base(), topic, model=self.model, **kwargs)

    def teach_sync(self, topic: str, **kwargs: Any) -> Any:
        return asyncio.run(self.teach(topic, **kwargs))


__all__ = ["ROLES", "Answer", "AnswerTrace", "FactUsed", "LearningTeam", "SubAgentStep"]
