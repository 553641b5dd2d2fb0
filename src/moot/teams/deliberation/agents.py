"""The deliberation team's agents, each a :class:`~moot.runtime.SubAgent` under a JSON schema.

The model *chooses* inside these schemas: recommendations with the ids of the facts they rest on,
an impact level and a time slot (enums built per call from the specialist's own facts and the
real slots); a conflict type per numbered pair; a debater's evidence ids; the moderator's
compromise type and the evidence it keeps from each side; accept or reject; a vote in −2..+2.
Python maps ids back to text and computes everything else. Each agent's output model has its
own name, so test models can route by the schema an agent asks for.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.models.base import ModelSettings
from moot.runtime import SubAgent, load_prompt

ANY_TIME = "any time"

ACTIONS = ("rest", "sleep early", "work on the deadline", "exercise", "take a light walk", "eat well", "cut caffeine",
           "limit messages", "ask for help", "reschedule", "keep the plan")
"""What a specialist can recommend: the action is chosen from this list (the embedded model, asked for a
sentence, echoed the user's question or the prompt's wording); the detail is its own words."""


def _choice(ids: list[str]) -> Any:
    return Literal[tuple(ids)]  # type: ignore[valid-type]


def fact_ids(n: int, prefix: str = "F") -> list[str]:
    return [f"{prefix}{k}" for k in range(1, n + 1)]


def numbered(facts: list[str], prefix: str = "F") -> str:
    return "\n".join(f"{prefix}{k}: {f}" for k, f in enumerate(facts, 1))


def _settings(max_tokens: int) -> ModelSettings:
    return ModelSettings(max_tokens=max_tokens, temperature=0.0)


# --------------------------------------------------------------------------- specialists


def specialist_output(n_facts: int, slots: list[str]) -> type[BaseModel]:
    insight = create_model(
        "InsightOut",
        finding=(str, Field(max_length=160)),
        evidence=(list[_choice(fact_ids(n_facts))], Field(min_length=1, max_length=3)),  # type: ignore[misc]
        action=(Literal[ACTIONS], ...),  # type: ignore[valid-type]
        detail=(str, Field(default="", max_length=120)),
        impact=(Literal["low", "medium", "high"], ...),
        confidence=(int, ...),
        when=(_choice([*slots, ANY_TIME]), ...),
    )
    return create_model("SpecialistInsights", insights=(list[insight], Field(min_length=1, max_length=2)))  # type: ignore[valid-type]


def specialist_agent(model: Any, name: str, focus: str, n_facts: int, slots: list[str]) -> SubAgent:
    prompt = load_prompt("specialist", __package__).replace("{name}", name).replace("{focus}", focus)
    return SubAgent(name, f"the {name} specialist", prompt, model=model, output_type=specialist_output(n_facts, slots),
                    max_turns=2, settings=_settings(360))


# --------------------------------------------------------------------------- conflict judge


def judge_output(n_pairs: int) -> type[BaseModel]:
    item = create_model("PairJudgement", pair=(_choice(fact_ids(n_pairs, "P")), ...),
                        conflict=(Literal["none", "contradiction", "priority_clash", "causal_disagreement"], ...),
                        severity=(Literal["blocking", "significant", "minor"], "minor"))
    return create_model("ConflictJudgement", pairs=(list[item], Field(default_factory=list, max_length=n_pairs)))  # type: ignore[valid-type]


def judge_agent(model: Any, n_pairs: int) -> SubAgent:
    return SubAgent("conflict_judge", "decides which pairs of insights conflict", load_prompt("judge", __package__), model=model,
                    output_type=judge_output(n_pairs), max_turns=2, settings=_settings(40 + 40 * n_pairs))


# --------------------------------------------------------------------------- debate


def debater_output(n_facts: int) -> type[BaseModel]:
    return create_model("DebateEvidence", argument=(str, Field(max_length=240)),
                        evidence=(list[_choice(fact_ids(n_facts))], Field(min_length=1, max_length=3)))  # type: ignore[misc]


def debater_agent(model: Any, name: str, n_facts: int) -> SubAgent:
    return SubAgent(name, f"the {name} specialist, debating", load_prompt("debater", __package__).replace("{name}", name), model=model,
                    output_type=debater_output(n_facts), max_turns=2, settings=_settings(200))


CompromiseTypeName = Literal["full_merge", "time_split", "priority_override", "conditional"]


def moderator_output(n_a: int, n_b: int, types: list[str], slots: list[str]) -> type[BaseModel]:
    return create_model(
        "Compromise",
        resolution=(str, Field(max_length=280)),
        compromise_type=(_choice(types), ...),
        winning_perspective=(Literal["side_a", "side_b", "neither"], "neither"),
        keep_from_a=(list[_choice(fact_ids(n_a, "A"))], Field(min_length=1, max_length=3)),  # type: ignore[misc]
        keep_from_b=(list[_choice(fact_ids(n_b, "B"))], Field(min_length=1, max_length=3)),  # type: ignore[misc]
        when=(_choice([ANY_TIME, *slots]), ANY_TIME),
        reasoning=(str, Field(default="", max_length=200)),
    )


def moderator_agent(model: Any, n_a: int, n_b: int, types: list[str], slots: list[str]) -> SubAgent:
    return SubAgent("moderator", "proposes a compromise that keeps both sides' evidence", load_prompt("moderator", __package__),
                    model=model, output_type=moderator_output(n_a, n_b, types, slots), max_turns=2, settings=_settings(320))


class CompromiseVerdict(BaseModel):
    """Round 4: a side accepts or rejects the moderator's compromise."""

    accept: bool
    reason: str = Field(default="", max_length=160)


def validator_agent(model: Any, name: str) -> SubAgent:
    return SubAgent(name, f"the {name} specialist, rating a compromise", load_prompt("validator", __package__).replace("{name}", name),
                    model=model, output_type=CompromiseVerdict, max_turns=2, settings=_settings(90))


# --------------------------------------------------------------------------- consensus


def voter_output(insight_ids: list[str]) -> type[BaseModel]:
    item = create_model("Ballot", insight=(_choice(insight_ids), ...), vote=(Literal[-2, -1, 0, 1, 2], ...),
                        reasoning=(str, Field(default="", max_length=120)))
    return create_model("ConsensusBallot", votes=(list[item], Field(min_length=1, max_length=len(insight_ids))))  # type: ignore[valid-type]


def voter_agent(model: Any, name: str, focus: str, insight_ids: list[str]) -> SubAgent:
    prompt = load_prompt("voter", __package__).replace("{name}", name).replace("{focus}", focus)
    return SubAgent(name, f"the {name} specialist, voting", prompt, model=model, output_type=voter_output(insight_ids),
                    max_turns=2, settings=_settings(40 + 60 * len(insight_ids)))


__all__ = [
    "ACTIONS", "ANY_TIME", "CompromiseVerdict", "debater_agent", "fact_ids", "judge_agent", "moderator_agent",
    "numbered", "specialist_agent", "validator_agent", "voter_agent",
]
