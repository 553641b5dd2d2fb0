"""The deliberation team's agents, each a :class:`~moot.runtime.SubAgent` under a JSON schema.

The model *chooses* inside these schemas: the options the request names (its own words, tied to
a calendar event and a time from enums), one position from those Python proposes and the ids of
the evidence behind it, a compromise type with its typed slots (which side, which option, which
adjustment, which free slot, which condition), a vote in −2..+2. Python maps every choice back
to its meaning and computes everything else. Each agent's output model has its own name, so test
models can route by the schema an agent asks for (or by the agent's name on the request).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.models.base import ModelSettings, odds_settings
from moot.runtime import SubAgent, load_prompt

ADJUSTMENTS = ("shorten", "move", "skip", "none")
"""What a compromise may do to the option it names (``none``: leave it as planned)."""
NONE = "none"


def _choice(ids: list[str]) -> Any:
    return Literal[tuple(ids)]  # type: ignore[valid-type]


def ids(n: int, prefix: str = "E") -> list[str]:
    return [f"{prefix}{k}" for k in range(1, n + 1)]


def _settings(max_tokens: int) -> ModelSettings:
    return ModelSettings(max_tokens=max_tokens, temperature=0.0)


# --------------------------------------------------------------------------- the request


def reader_agent(model: Any, output_type: type[BaseModel]) -> SubAgent:
    return SubAgent("reader", "reads the options and the time window of the request", load_prompt("reader", __package__),
                    model=model, output_type=output_type, max_turns=2, settings=_settings(220))


def physical_output(choices: list[str]) -> type[BaseModel]:
    return create_model("PhysicalOption", answer=(_choice(choices), ...))


def physical_agent(model: Any, choices: list[str], *, negated: bool = False) -> SubAgent:
    """Says which option is a sport or physical exercise; ``negated``: which one is not (agent ``not_physical``)."""
    return SubAgent("not_physical" if negated else "physical",
                    f"says which option is {'not ' if negated else ''}a sport or physical exercise",
                    load_prompt("physical", __package__), model=model, output_type=physical_output(choices),
                    max_turns=2, settings=_settings(40))


def physical_odds_agent(model: Any) -> SubAgent:
    """Asked plainly whether one option is a sport: one generated token, read for its odds
    (:mod:`moot.teams.deliberation.plain`)."""
    return SubAgent("physical_odds", "says whether an option is a sport or physical exercise",
                    load_prompt("physical", __package__), model=model, max_turns=1,
                    settings=odds_settings())


def rest_odds_agent(model: Any) -> SubAgent:
    """Asked plainly whether one option is resting: one generated token, read for its odds; an
    option that reads as rest is the less likely to be the physical one
    (:mod:`moot.teams.deliberation.plain`)."""
    return SubAgent("rest_odds", "says whether an option is resting or sleeping",
                    load_prompt("physical", __package__), model=model, max_turns=1,
                    settings=odds_settings())


# --------------------------------------------------------------------------- specialists


def position_output(positions: list[str], evidence_ids: list[str]) -> type[BaseModel]:
    return create_model(
        "SpecialistPosition",
        position=(_choice(positions), ...),
        evidence=(list[_choice(evidence_ids)], Field(min_length=1, max_length=3)),  # type: ignore[misc]
        impact=(Literal["low", "medium", "high"], ...),
        confidence=(int, ...),
    )


def specialist_agent(model: Any, name: str, focus: str, positions: list[str], evidence_ids: list[str]) -> SubAgent:
    prompt = load_prompt("specialist", __package__).replace("{name}", name).replace("{focus}", focus)
    return SubAgent(name, f"the {name} specialist", prompt, model=model, output_type=position_output(positions, evidence_ids),
                    max_turns=2, settings=_settings(120))


# --------------------------------------------------------------------------- debate


def compromise_output(types: list[str], options: list[str], slots: list[str], conditions: list[str]) -> type[BaseModel]:
    return create_model(
        "Compromise",
        compromise_type=(_choice(types), ...),
        side=(Literal["A", "B"], ...),
        option=(_choice(options), ...),
        adjustment=(Literal[ADJUSTMENTS], NONE),  # type: ignore[valid-type]
        slot=(_choice([*slots, NONE]), NONE),
        condition=(_choice([*conditions, NONE]), NONE),
    )


def moderator_agent(model: Any, types: list[str], options: list[str], slots: list[str], conditions: list[str]) -> SubAgent:
    return SubAgent("moderator", "proposes a typed compromise between two positions", load_prompt("moderator", __package__),
                    model=model, output_type=compromise_output(types, options, slots, conditions), max_turns=2,
                    settings=_settings(120))


class CompromiseVote(BaseModel):
    """Round 4: a side rates the moderator's compromise on the design's vote scale."""

    vote: Literal[-2, -1, 0, 1, 2]
    reason: str = Field(default="", max_length=160)


def validator_agent(model: Any, name: str) -> SubAgent:
    return SubAgent(name, f"the {name} specialist, rating a compromise", load_prompt("validator", __package__).replace("{name}", name),
                    model=model, output_type=CompromiseVote, max_turns=2, settings=_settings(90))


# --------------------------------------------------------------------------- the answer's first line


class PolishedSentence(BaseModel):
    sentence: str = Field(max_length=300)


def polisher_agent(model: Any) -> SubAgent:
    return SubAgent("polisher", "rewords one sentence without changing its facts", load_prompt("polisher", __package__),
                    model=model, output_type=PolishedSentence, max_turns=1, settings=_settings(120))


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
    "ADJUSTMENTS", "NONE", "CompromiseVote", "PolishedSentence", "compromise_output", "ids", "moderator_agent",
    "physical_agent", "physical_odds_agent", "physical_output", "rest_odds_agent",
    "polisher_agent", "position_output", "reader_agent", "specialist_agent", "validator_agent", "voter_agent",
]
