"""Phase 1, the planner: one structured call that splits the question into sub-questions."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints, create_model, model_validator

from moot.codeindex import CodeIndex

from moot.models.base import ModelSettings
from moot.runtime import SubAgent, load_prompt
from moot.teams.research.models import ResearchPlan, SubQuestion
from moot.text import question_clauses

MAX_SUB_QUESTIONS = 5
SUB_QUESTION_CHARS = 200
"""The most a planned sub-question may run to. The 0.5B planner can repeat a clause of the
question inside one string until its tokens run out (on one evaluation question: one sentence,
sixteen times, 600 tokens, 33 s, no plan). Under the grammar the string must end here, and the
plan goes on."""
ACTION_CHARS = 60
"""The most one planned search word or symbol name may run to."""


class PlannedSubQuestion(SubQuestion):
    """A sub-question as the planner writes it: each field bounded, so a loop inside a string
    cannot use up the planner's tokens (:data:`SUB_QUESTION_CHARS`). Plans from elsewhere (an
    API caller's) are plain :class:`SubQuestion` and are not bounded."""

    question: str = Field(max_length=SUB_QUESTION_CHARS, description="the sub-question, one sentence")
    target_area: str = Field(default="", max_length=120, description="folder or file most likely to hold the answer")
    initial_actions: list[Annotated[str, StringConstraints(max_length=ACTION_CHARS)]] = Field(
        default_factory=list, max_length=2, description="1-2 search queries or symbol names to try first")
    verification_hint: str = Field(default="", max_length=160, description="what the verifier should check for this part")

    @model_validator(mode="before")
    @classmethod
    def _trimmed(cls, data: Any) -> Any:
        # A model without a grammar (a provider that takes the schema as a hint) may still write
        # past a bound: the plan is trimmed to it, not refused.
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for name, field in cls.model_fields.items():
            value, most = data.get(name), _most(field)
            if isinstance(value, str) and most is not None:
                data[name] = value[:most]
            elif isinstance(value, list) and most is not None:
                data[name] = [v[:ACTION_CHARS] if isinstance(v, str) else v for v in value[:most]]
        return data


class UncheckedSubQuestion(PlannedSubQuestion):
    """A planned sub-question without a verification hint (no verifier model will read one)."""

    # The hint was about a quarter of the 0.5B planner's 160-210 answer tokens (some 2 s of every
    # multi-mode question on this machine), and without a verifier model nothing read it.

    model_config = {"json_schema_extra": lambda schema: schema["properties"].pop("verification_hint", None)}


def _most(field: Any) -> int | None:
    return next((m.max_length for m in field.metadata if getattr(m, "max_length", None) is not None), None)


class PlannerOutput(BaseModel):
    """The planner's structured answer (the grammar keeps the small model inside it).

    At least two sub-questions: the planner only runs once a question was routed to the
    pipeline (``auto`` sends one-name questions to the single agent first), and with a
    one-item minimum the 0.5B model wrote one sub-question for four of six multi-subsystem
    questions, so ``multi`` silently became ``single``. Fewer than two distinct sub-questions
    after de-duplication still falls back to the single agent (the code-research design).
    """

    sub_questions: list[PlannedSubQuestion] = Field(min_length=2, max_length=MAX_SUB_QUESTIONS)


@lru_cache(maxsize=None)
def planner_output(limit: int = MAX_SUB_QUESTIONS, *, hints: bool = True) -> type[PlannerOutput]:
    """The planner's schema with at most ``limit`` sub-questions (2 to 5, as :func:`planner_agent`
    bounds it): the grammar stops the model there, so a plan of five is not written and then cut
    (``ResearchConfig.max_sub_questions``). Without ``hints`` no verification hint is asked for
    (:class:`UncheckedSubQuestion`)."""
    if limit >= MAX_SUB_QUESTIONS and hints:
        return PlannerOutput
    item = PlannedSubQuestion if hints else UncheckedSubQuestion
    return create_model("PlannerOutput", __base__=PlannerOutput,
                        sub_questions=(list[item], Field(min_length=2, max_length=min(limit, MAX_SUB_QUESTIONS))))  # type: ignore[valid-type]


_HINT_LINE = "- verification_hint: one thing a checker should confirm in the code\n"


def planner_agent(model: object, repo_map: str, *, retry: bool = True, limit: int = MAX_SUB_QUESTIONS,
                  hints: bool = True) -> SubAgent:
    """The planner: one answer, plus one schema retry when ``retry`` (see ``ResearchConfig.planner_retry``),
    of at most ``limit`` sub-questions, each with a hint for the verifier when ``hints`` (a verifier
    model will read them)."""
    limit = max(2, min(limit, MAX_SUB_QUESTIONS))
    prompt = load_prompt("planner", __package__).replace("{repo_map}", repo_map[:1500]).replace("{most}", str(limit))
    return SubAgent(
        "planner",
        "splits a question about code into sub-questions, one per subsystem",
        prompt if hints else prompt.replace(_HINT_LINE, ""),
        model=model,  # type: ignore[arg-type]
        output_type=planner_output(limit, hints=hints),
        max_turns=2 if retry else 1,
        settings=ModelSettings(max_tokens=600),
    )


def to_plan(question: str, output: object, limit: int = MAX_SUB_QUESTIONS) -> ResearchPlan:
    """The validated plan: blank and duplicate sub-questions dropped, at most ``limit`` kept."""
    if not isinstance(output, PlannerOutput):
        return ResearchPlan(original_question=question, note=f"the planner gave no plan ({str(output)[:120]})")
    seen: set[str] = set()
    kept: list[SubQuestion] = []
    for sq in output.sub_questions:
        key = " ".join(sq.question.lower().split())
        if key and key not in seen:
            seen.add(key)
            kept.append(SubQuestion.model_validate(sq.model_dump()))
    return ResearchPlan(original_question=question, sub_questions=kept[:limit])


def question_parts(question: str) -> list[str]:
    """The question's own clauses ("which function does X", "in which file is it defined",
    "which function calls it"), each a sub-question; later ones carry the first as context,
    since their "it" means the first clause's subject."""
    parts = question_clauses(question)
    if len(parts) < 2:
        return []
    first = parts[0]
    return [f"{first}?"] + [f"{p}? (about: {first})" for p in parts[1:]]


def derived_sub_questions(question: str, index: CodeIndex, limit: int = 3,
                          most: int = MAX_SUB_QUESTIONS) -> list[SubQuestion]:
    """Sub-questions made without the model, for when the planner offers fewer than two: the
    question's clauses (at most ``most``), else one per distinct definition the first search
    finds (at most ``limit``)."""
    subs = [SubQuestion(question=p, initial_actions=[]) for p in question_parts(question)]
    if len(subs) >= 2:
        return subs[:most]
    seen: set[str] = set()
    for hit in index.search(question, limit=8):
        if hit.kind not in ("function", "class", "method") or hit.name in seen:
            continue
        seen.add(hit.name)
        short = hit.name.rsplit(".", 1)[-1]
        subs.append(SubQuestion(question=f"What does `{short}` do for this: {question.rstrip('?')}?",
                                target_area=hit.path, initial_actions=[short]))
        if len(subs) >= limit:
            break
    return subs if len(subs) >= 2 else []
