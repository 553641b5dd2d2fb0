"""Budgets never overshoot: reproductions from issue #20 and seeded property tests.

Every case runs real :class:`TaskGraph` runs on test providers that behave like the
troublesome real ones: a tokenizer that counts 1.3 times moot's estimate, a server that
ignores ``max_tokens``, prices from the price table (known before any call). The seeds are
fixed, so a failure names the exact graph that overshot.
"""

from __future__ import annotations

import asyncio
import math
import random
from dataclasses import dataclass

import pytest

from moot.models.base import ModelRequest, ModelResponse, ModelSettings, Usage
from moot.models.pricing import Price, PricedModel
from moot.models.testing import FunctionModel, tool_call
from moot.runtime import Budget, SubAgent, SubAgentTask, TaskGraph, tool
from moot.runtime.budget import DEFAULT_OUTPUT_ALLOWANCE


@tool
def lookup(term: str) -> str:
    """Looks a term up."""
    return f"{term}: found"


@dataclass
class Provider:
    """How a fake provider counts and answers."""

    miscount: float = 1.0
    """Its prompt tokens per token of moot's estimate."""
    ignores_max_tokens: bool = False
    answer_tokens: tuple[int, int] = (1, 400)
    """The range its natural answer length is drawn from."""


def make_model(name: str, provider: Provider, rng: random.Random, turns: int, price: Price | None) -> object:
    calls = 0

    async def answer(request: ModelRequest) -> ModelResponse:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)  # let parallel agents interleave like real requests do
        natural = rng.randint(*provider.answer_tokens)
        cap = request.settings.max_tokens
        out = natural if provider.ignores_max_tokens or cap is None else min(natural, cap)
        usage = Usage(
            input_tokens=math.ceil(request.estimated_input_tokens() * provider.miscount),
            output_tokens=out,
            requests=1,
        )
        if calls < turns:
            return ModelResponse(tool_calls=(tool_call("lookup", term=f"t{calls}"),), usage=usage, finish_reason="tool_calls")
        return ModelResponse(text="done " * 5, usage=usage)

    model = FunctionModel(answer, name=name)
    return PricedModel(model, prices={name: price}) if price is not None else model


def random_graph(rng: random.Random, provider: Provider, *, priced: bool) -> tuple[TaskGraph, Budget]:
    n = rng.randint(1, 7)
    agents, tasks = [], []
    for i in range(n):
        price = Price(rng.uniform(0.1, 80), rng.uniform(0.4, 200)) if priced else None
        turns = rng.randint(1, 6)
        max_tokens = rng.choice([None, None, rng.randint(30, 2000)])
        model = make_model(f"prop:m{i}", provider, rng, turns, price)
        agents.append(SubAgent(f"a{i}", "", "Answer briefly." * rng.randint(1, 40), [lookup], model,  # type: ignore[arg-type]
                               max_turns=8, settings=ModelSettings(max_tokens=max_tokens)))
        deps = [f"a{j}" for j in range(i) if rng.random() < 0.3]
        tasks.append(SubAgentTask(f"a{i}", "work " * rng.randint(1, 60), depends_on=deps))
    kind = rng.choice(["tokens", "cost", "both"]) if priced else "tokens"
    tokens = rng.randint(1500, 15000)
    dollars = tokens * rng.uniform(2, 120) / 1_000_000
    budget = Budget(
        max_tokens=tokens if kind in ("tokens", "both") else None,
        max_cost_usd=dollars if kind in ("cost", "both") else None,
    )
    return TaskGraph(agents, tasks), budget


async def run_cases(seed: int, cases: int, provider: Provider, *, priced: bool = True) -> tuple[list[str], int]:
    rng = random.Random(seed)
    overshoots, stopped = [], 0
    for case in range(cases):
        graph, budget = random_graph(rng, provider, priced=priced)
        result = await graph.run(budget=budget)
        if result.status == "stopped":
            stopped += 1
        if budget.max_tokens is not None and result.usage.total_tokens > budget.max_tokens:
            overshoots.append(f"case {case}: {result.usage.total_tokens} tokens > {budget.max_tokens}")
        if budget.max_cost_usd is not None and result.usage.cost_usd > budget.max_cost_usd * (1 + 1e-9):
            overshoots.append(f"case {case}: ${result.usage.cost_usd:.6f} > ${budget.max_cost_usd:.6f}")
    return overshoots, stopped


@pytest.mark.parametrize(
    "provider",
    [
        pytest.param(Provider(), id="honest"),
        pytest.param(Provider(miscount=1.3), id="counts-1.3x"),
        pytest.param(Provider(ignores_max_tokens=True), id="ignores-max_tokens"),
        pytest.param(Provider(miscount=1.3, ignores_max_tokens=True), id="both"),
    ],
)
async def test_random_graphs_never_exceed_token_or_dollar_budgets(provider: Provider) -> None:
    overshoots, stopped = await run_cases(seed=20, cases=300, provider=provider)
    assert overshoots == []
    assert stopped >= 60  # the budgets were really tight: many runs hit them


async def test_unpriced_models_learn_their_rate_before_running_in_parallel() -> None:
    """A provider that reports its own cost but is missing from the price table."""
    rng = random.Random(7)
    overshoots = 0
    for _ in range(100):
        rate = rng.uniform(2, 120) / 1_000_000
        limit = rng.randint(1500, 15000) * rate

        def model(i: int) -> FunctionModel:
            turns = rng.randint(1, 6)
            calls = 0

            async def answer(request: ModelRequest) -> ModelResponse:
                nonlocal calls
                calls += 1
                await asyncio.sleep(0)
                usage = Usage(input_tokens=request.estimated_input_tokens(), output_tokens=300, requests=1)
                usage = usage.model_copy(update={"cost_usd": usage.total_tokens * rate})
                if calls < turns:
                    return ModelResponse(tool_calls=(tool_call("lookup", term="x"),), usage=usage)
                return ModelResponse(text="done", usage=usage)

            return FunctionModel(answer, name="self-priced")

        n = rng.randint(2, 6)
        graph = TaskGraph([SubAgent(f"a{i}", "", "", [lookup], model(i)) for i in range(n)],
                          [SubAgentTask(f"a{i}", "go") for i in range(n)])
        result = await graph.run(budget=Budget(max_cost_usd=limit))
        overshoots += result.usage.cost_usd > limit * (1 + 1e-9)
    assert overshoots == 0


def fixed_answers(tokens_per_answer: int, price_per_token: float, *, turns: int = 1000) -> PricedModel:
    """A model that always answers with the same number of tokens, whatever ``max_tokens`` says."""
    calls = 0

    def answer(request: ModelRequest) -> ModelResponse:
        nonlocal calls
        calls += 1
        usage = Usage(input_tokens=request.estimated_input_tokens(), output_tokens=tokens_per_answer, requests=1)
        if calls < turns:
            return ModelResponse(tool_calls=(tool_call("lookup", term=str(calls)),), usage=usage)
        return ModelResponse(text="done", usage=usage)

    per_million = price_per_token * 1_000_000
    return PricedModel(FunctionModel(answer, name="fixed"), prices={"fixed": Price(per_million, per_million)})


async def test_dollar_budget_holds_with_400_token_answers_and_no_max_tokens() -> None:
    # Issue #20: $0.50 at $1e-4 a token with 400-token answers spent $0.529.
    result = await SubAgent("a", "", "", [lookup], fixed_answers(400, 1e-4), max_turns=100).run(
        "go", budget=Budget(max_cost_usd=0.50)
    )
    assert result.stop_reason == "budget:cost"
    assert result.usage.cost_usd <= 0.50
    assert result.usage.cost_usd >= 0.40  # and the budget was used, not abandoned early


async def test_a_huge_max_tokens_is_capped_by_the_budget_instead_of_stopping_the_agent() -> None:
    # Issue #20: with max_tokens=100000 the reservation held the whole allowance: one call.
    model = fixed_answers(400, 1e-4)
    agent = SubAgent("a", "", "", [lookup], model, max_turns=100, settings=ModelSettings(max_tokens=100_000))
    result = await agent.run("go", budget=Budget(max_cost_usd=0.50))
    assert result.usage.requests >= 8
    assert result.usage.cost_usd <= 0.50
    sent = model.wrapped.requests[0].settings.max_tokens  # type: ignore[attr-defined]
    assert sent is not None and sent * 1e-4 <= 0.50


async def test_parallel_agents_are_priced_before_the_first_call() -> None:
    # Issue #20: eight agents starting together before any call was priced each held $0.
    models = [fixed_answers(400, 1e-4, turns=3) for _ in range(8)]
    graph = TaskGraph([SubAgent(f"a{i}", "", "", [lookup], m) for i, m in enumerate(models)],
                      [SubAgentTask(f"a{i}", "go") for i in range(8)])
    result = await graph.run(budget=Budget(max_cost_usd=0.30))
    assert result.usage.cost_usd <= 0.30
    assert result.usage.requests >= 4


async def test_parallel_agents_with_a_token_limit_take_turns_instead_of_stopping_the_run() -> None:
    models = [fixed_answers(100, 0.0, turns=2) for _ in range(4)]
    graph = TaskGraph([SubAgent(f"a{i}", "", "", [lookup], m) for i, m in enumerate(models)],
                      [SubAgentTask(f"a{i}", "go") for i in range(4)])
    result = await graph.run(budget=Budget(max_tokens=4 * DEFAULT_OUTPUT_ALLOWANCE))
    assert result.status == "completed", result.stop_reason
    assert result.usage.total_tokens <= 4 * DEFAULT_OUTPUT_ALLOWANCE
