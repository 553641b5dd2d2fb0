"""Budget properties for every team (issue #20): what the provider billed never exceeds the limit.

The runtime's property tests (test_budget_properties.py) drive bare task graphs; these drive
the teams as a user does — learning (learn and ask) and code research — with random budgets
and a provider that counts 1.3 times moot's estimate or ignores ``max_tokens``. The total is
measured at the provider (a wrapper that adds up what every response billed), not from what
the team reports, so a call made outside the budget would be counted too.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelRequest, ModelResponse, Usage, WrapperModel
from moot.models.pricing import Price, PricedModel
from moot.models.testing import FunctionModel
from moot.runtime import Budget
from learning_support import label_units
from moot.teams.learning import LearningTeam
from moot.teams.learning.ingest.learning import LearningError, learn
from moot.teams.research import ResearchConfig, ResearchTeam
from test_learning_ask import Router
from test_research_support import PLAN_3, ResearchScript, make_repo


@dataclass
class Misbehaving(WrapperModel):
    """Bills like a troublesome provider: prompts counted ``miscount`` times moot's estimate,
    answers of a random natural length, cut at ``max_tokens`` only if ``honours_max_tokens``."""

    miscount: float = 1.0
    honours_max_tokens: bool = True
    rng: random.Random = field(default_factory=random.Random)

    async def request(self, request: ModelRequest) -> ModelResponse:
        response = await self.wrapped.request(request)
        natural = self.rng.randint(5, 300)
        cap = request.settings.max_tokens
        out = natural if cap is None or not self.honours_max_tokens else min(natural, cap)
        usage = Usage(input_tokens=math.ceil(request.estimated_input_tokens() * self.miscount), output_tokens=out,
                      requests=1)
        return response.model_copy(update={"usage": usage})


@dataclass
class Meter(WrapperModel):
    """Adds up what the provider billed, whatever the team does with it."""

    billed: Usage = field(default_factory=Usage)

    async def request(self, request: ModelRequest) -> ModelResponse:
        response = await self.wrapped.request(request)
        self.billed = self.billed + response.usage
        return response


PROVIDERS = {
    "honest": {"miscount": 1.0, "honours_max_tokens": True},
    "counts-1.3x": {"miscount": 1.3, "honours_max_tokens": True},
    "ignores-max_tokens": {"miscount": 1.0, "honours_max_tokens": False},
}


def provider(body: Any, kind: str, rng: random.Random, price: Price) -> Meter:
    misbehaving = Misbehaving(FunctionModel(body, name="prop"), rng=rng, **PROVIDERS[kind])
    return Meter(PricedModel(misbehaving, prices={"prop": price}))


def random_budget(rng: random.Random) -> Budget:
    kind = rng.choice(["calls", "tokens", "cost", "all"])
    return Budget(
        max_calls=rng.randint(1, 8) if kind in ("calls", "all") else None,
        max_tokens=rng.randint(800, 6000) if kind in ("tokens", "all") else None,
        max_cost_usd=rng.uniform(0.002, 0.05) if kind in ("cost", "all") else None,
    )


def overshoot(billed: Usage, budget: Budget) -> str | None:
    if budget.max_calls is not None and billed.requests > budget.max_calls:
        return f"{billed.requests} calls > {budget.max_calls}"
    if budget.max_tokens is not None and billed.total_tokens > budget.max_tokens:
        return f"{billed.total_tokens} tokens > {budget.max_tokens}"
    if budget.max_cost_usd is not None and billed.cost_usd > budget.max_cost_usd * (1 + 1e-9):
        return f"${billed.cost_usd:.5f} > ${budget.max_cost_usd:.5f}"
    return None


@pytest.fixture
def olympics(tmp_path: Path) -> KnowledgeBase:
    base = KnowledgeBase.open(tmp_path / "olympics.sqlite3")
    base.add_facts([
        Fact(f"Norway has {n} gold medals", entity="Norway", attribute="gold medals", value=str(n),
             source=f"Day {d} report", source_date=date(2026, 2, d))
        for n, d in ((9, 13), (12, 15), (14, 17))
    ])
    return base


QUESTIONS = ["How many gold medals does Norway have?", "How many more gold medals did Norway win since Day 7?",
             "Explain how Norway's medal count changed.", "Which country leads?"]


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_the_learning_team_never_spends_more_than_its_budget(olympics: KnowledgeBase, kind: str) -> None:
    rng = random.Random(2026)
    problems, stopped = [], 0
    for case in range(40):
        model = provider(Router(), kind, rng, Price(rng.uniform(0.5, 60), rng.uniform(2, 240)))
        budget = random_budget(rng)
        team = LearningTeam(olympics, model=model, budget=budget, store=False)
        answer = await team.ask(rng.choice(QUESTIONS), mode=rng.choice(["single", "multi", "auto"]))
        stopped += "budget" in str(answer.to_json()).lower()
        if (problem := overshoot(model.billed, budget)) is not None:
            problems.append(f"case {case} ({budget.describe()}): {problem}")
    assert problems == []
    assert stopped >= 5  # many cases really ran into their budget


def extraction(request: ModelRequest) -> Any:
    if request.agent == "fact-labeller":
        return label_units(request)
    if request.agent == "fact-extractor":
        return {"facts": [{"content": "Bridge A is 214 metres long.", "entity": "Bridge A", "attribute": "length",
                           "value": "214 metres"}]}
    return "A bridge."


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_learning_never_spends_more_than_its_budget(tmp_path: Path, kind: str) -> None:
    rng = random.Random(77)
    text = "\n\n".join(f"Bridge {i} is {100 + i} metres long. It opened in {1990 + i}." * 8 for i in range(6))
    problems, refused = [], 0
    for case in range(30):
        model = provider(extraction, kind, rng, Price(rng.uniform(0.5, 60), rng.uniform(2, 240)))
        budget = random_budget(rng)
        with KnowledgeBase.open(tmp_path / f"kb{kind}{case}.sqlite3") as kb:
            try:
                await learn(kb, text, source="bridges", model=model, budget=budget, record_run=False,
                            chunk_tokens=120, parallel=rng.randint(1, 4))
            except LearningError:
                refused += 1  # stopped by the budget: nothing stored, but nothing overspent either
        if (problem := overshoot(model.billed, budget)) is not None:
            problems.append(f"case {case} ({budget.describe()}): {problem}")
    assert problems == []
    assert refused >= 5


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_the_research_team_never_spends_more_than_its_budget(tmp_path: Path, kind: str) -> None:
    rng = random.Random(5)
    repo = make_repo(tmp_path / "repo")
    problems, stopped = [], 0
    for case in range(30):
        model = provider(ResearchScript(PLAN_3, synth="Requests are split by `parse_request` (app/server.py:4).",
                                        researcher_tool_loops=rng.randint(0, 3)),
                         kind, rng, Price(rng.uniform(0.5, 60), rng.uniform(2, 240)))
        budget = random_budget(rng)
        config = ResearchConfig(max_calls=budget.max_calls or 40, max_tokens=budget.max_tokens,
                                max_cost_usd=budget.max_cost_usd, researcher_calls=rng.randint(1, 4))
        budget = budget.override(max_calls=config.max_calls)
        team = ResearchTeam(repo, model=model, db_path=tmp_path / "index.db", config=config)
        try:
            result = await team.ask("How does a request flow end-to-end?", mode=rng.choice(["single", "multi"]))
        finally:
            team.close()
        stopped += result.status == "stopped"
        if (problem := overshoot(model.billed, budget)) is not None:
            problems.append(f"case {case} ({budget.describe()}): {problem}")
    assert problems == []
    assert stopped >= 5


async def test_a_one_call_budget_goes_to_the_answer(olympics: KnowledgeBase) -> None:
    router = Router()
    model = provider(router, "honest", random.Random(3), Price(1, 4))
    answer = await LearningTeam(olympics, model=model, budget=Budget(max_calls=1), store=False).ask("Norway?", mode="multi")
    assert model.billed.requests == 1 and "coordinator" not in router.calls
    assert "Norway" in answer.answer


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_the_graph_team_never_spends_more_than_its_budget(tmp_path: Path, kind: str) -> None:
    from moot.teams.graph import GraphConfig, GraphTeam
    from test_graph_support import GraphScript, make_sources

    rng = random.Random(11)
    sources = make_sources(tmp_path / "src")
    problems, stopped = [], 0
    for case in range(20):
        model = provider(GraphScript(), kind, rng, Price(rng.uniform(0.5, 60), rng.uniform(2, 240)))
        budget = random_budget(rng).override(max_cost_usd=None)  # the graph team takes calls and tokens
        config = GraphConfig(iterations=rng.randint(1, 3), max_calls=budget.max_calls, max_tokens=budget.max_tokens,
                             questions_per_iteration=rng.randint(1, 3), hypotheses=rng.random() < 0.5)
        result = await GraphTeam(sources, model=model, config=config).ask("How does the Ostby mill affect Lake Mira?")
        stopped += "budget" in result.stop_reason.lower() or "would be exceeded" in result.stop_reason
        if (problem := overshoot(model.billed, budget)) is not None:
            problems.append(f"case {case} ({budget.describe()}): {problem}")
    assert problems == []
    assert stopped >= 3


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_the_deliberation_team_never_makes_more_calls_than_its_budget(tmp_path: Path, kind: str) -> None:
    from deliberation_support import NOW, REQUEST, SLEEP_VS_DEADLINE, Deliberators
    from moot.teams.deliberation import DeliberationTeam

    rng = random.Random(13)
    problems = []
    for case in range(20):
        model = provider(Deliberators(), kind, rng, Price(1.0, 4.0))
        max_calls = rng.randint(1, 20)
        team = DeliberationTeam(SLEEP_VS_DEADLINE, model=model, mode=rng.choice(["quick", "standard", "deep"]),
                                max_calls=max_calls, store=None)  # type: ignore[arg-type]
        await team.deliberate(REQUEST, now=NOW)
        if model.billed.requests > max_calls:
            problems.append(f"case {case}: {model.billed.requests} calls > {max_calls}")
    assert problems == []
