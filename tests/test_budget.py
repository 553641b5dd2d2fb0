"""Budgets: checked before each request, per run and per agent, with partial results kept."""

from __future__ import annotations

import asyncio

import pytest

from moot.errors import ConfigError
from moot.models.base import ModelRequest, ModelResponse, ModelSettings, Usage
from moot.models.testing import FunctionModel, ScriptedModel, tool_call
from moot.runtime import Budget, BudgetExceeded, EventBus, EventType, SubAgent, SubAgentTask, TaskGraph, tool
from moot.runtime.budget import BudgetTracker


@tool
def lookup(term: str) -> str:
    """Looks a term up."""
    return f"{term}: found"


def test_presets_follow_seed_004_and_can_be_overridden() -> None:
    assert (Budget.preset("quick").max_calls, Budget.preset("quick").deadline_s) == (4, 15.0)
    assert (Budget.preset("standard").max_calls, Budget.preset("standard").deadline_s) == (10, 30.0)
    assert (Budget.preset("deep").max_calls, Budget.preset("deep").deadline_s) == (20, 60.0)
    custom = Budget.preset("quick").override(max_calls=8, max_tokens=5000)
    assert (custom.max_calls, custom.max_tokens, custom.deadline_s) == (8, 5000, 15.0)
    with pytest.raises(ConfigError, match="unknown budget preset 'huge'"):
        Budget.preset("huge")


async def test_call_budget_stops_before_the_request_that_would_exceed_it() -> None:
    model = ScriptedModel([tool_call("lookup", term="a"), tool_call("lookup", term="b"), "answer"])
    researcher = SubAgent("researcher", "", "", [lookup], model)
    graph = TaskGraph([researcher, SubAgent("writer", model=ScriptedModel(["unused"]))],
                      [SubAgentTask("researcher", "find"), SubAgentTask("writer", "write", depends_on=["researcher"])])
    result = await graph.run(budget=Budget(max_calls=2))
    assert len(model.requests) == 2  # the third request was never sent
    assert result.status == "stopped"
    assert result.stop_reason.startswith("stopped: the run's budget of 2 model calls would be exceeded")
    assert "1 task not started" in result.stop_reason
    task = result.results["researcher"]
    assert task.status == "stopped" and task.stop_reason == "budget:calls"
    assert task.usage.requests == 2
    assert [m.role for m in task.transcript].count("tool") == 2  # the partial work is kept
    assert result.results["writer"].status == "not_started"
    assert result.usage.requests == 2


async def test_token_budget_counts_the_estimated_prompt_before_sending() -> None:
    model = ScriptedModel(["never"])
    agent = SubAgent("a", "", "x" * 4000, model=model)
    result = await agent.run("hello", budget=Budget(max_tokens=500))
    assert model.requests == []
    assert result.stop_reason == "budget:tokens"
    assert "500 tokens would be exceeded" in (result.detail or "")


async def test_token_budget_caps_max_tokens_of_the_request() -> None:
    model = ScriptedModel(["short"])
    agent = SubAgent("a", "", "", model=model, settings=ModelSettings(max_tokens=100_000))
    await agent.run("hi", budget=Budget(max_tokens=1500))
    sent = model.requests[0]
    assert sent.settings.max_tokens is not None and sent.settings.max_tokens >= 1024
    assert sent.estimated_input_tokens() + sent.settings.max_tokens <= 1500


async def test_a_request_is_not_cut_below_the_answer_it_asked_for() -> None:
    # With no max_tokens an answer is allowed 1024 tokens; 300 tokens cannot hold that, and
    # a cut answer is mostly wasted, so nothing is sent.
    model = ScriptedModel(["short"])
    result = await SubAgent("a", "", "", model=model).run("hi", budget=Budget(max_tokens=300))
    assert model.requests == [] and result.stop_reason == "budget:tokens"


async def test_dollar_budget_uses_the_observed_price() -> None:
    priced = lambda text: ModelResponse(tool_calls=(tool_call("lookup", term=text),), usage=Usage(input_tokens=100, output_tokens=10, requests=1, cost_usd=0.01))  # noqa: E731
    model = ScriptedModel([priced("a"), priced("b"), priced("c")])
    agent = SubAgent("a", "", "", [lookup], model, settings=ModelSettings(max_tokens=10))
    result = await agent.run("go", budget=Budget(max_cost_usd=0.025))
    assert len(model.requests) == 2
    assert result.stop_reason == "budget:cost" and result.usage.cost_usd == pytest.approx(0.02)


async def test_parallel_agents_cannot_both_take_the_last_call() -> None:
    a_model, b_model = ScriptedModel(["a"], delay_s=0.01), ScriptedModel(["b"], delay_s=0.01)
    graph = TaskGraph([SubAgent("a", model=a_model), SubAgent("b", model=b_model)], [SubAgentTask("a", ""), SubAgentTask("b", "")])
    result = await graph.run(budget=Budget(max_calls=1))
    assert len(a_model.requests) + len(b_model.requests) == 1
    assert result.status == "stopped"
    assert sorted(r.status for r in result.results.values()) == ["completed", "stopped"]


async def test_per_agent_budget_stops_only_that_agent() -> None:
    chatty = ScriptedModel([tool_call("lookup", term="x")], repeat_last=True)
    graph = TaskGraph(
        [SubAgent("chatty", "", "", [lookup], chatty), SubAgent("calm", model=ScriptedModel(["calm answer"])),
         SubAgent("sink", model=ScriptedModel(["done"]))],
        [SubAgentTask("chatty", ""), SubAgentTask("calm", ""), SubAgentTask("sink", "", depends_on=["chatty", "calm"])],
    )
    result = await graph.run(budget=Budget(max_calls=10, per_agent={"chatty": Budget(max_calls=2)}))
    assert len(chatty.requests) == 2
    assert result.results["chatty"].status == "stopped"
    assert "agent 'chatty''s budget of 2 model calls" in (result.results["chatty"].error or "")
    assert result.results["calm"].status == "completed" and result.results["sink"].status == "completed"
    assert result.status == "completed"


async def test_an_agents_own_budget_applies_too() -> None:
    model = ScriptedModel([tool_call("lookup", term="x")], repeat_last=True)
    agent = SubAgent("a", "", "", [lookup], model, budget=Budget(max_calls=1))
    result = await agent.run("go")
    assert len(model.requests) == 1 and result.stop_reason == "budget:calls"
    assert result.budget_scope == "a"


async def test_deadline_cancels_a_hanging_model_call() -> None:
    cancelled = asyncio.Event()

    async def hang(request: ModelRequest) -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    graph = TaskGraph(
        [SubAgent("fast", model=ScriptedModel(["fast result"])), SubAgent("stuck", model=FunctionModel(hang)),
         SubAgent("after", model=ScriptedModel(["unused"]))],
        [SubAgentTask("fast", ""), SubAgentTask("stuck", ""), SubAgentTask("after", "", depends_on=["stuck"])],
    )
    result = await graph.run(budget=Budget(deadline_s=0.2))
    assert cancelled.is_set()
    assert result.status == "stopped"
    assert "deadline of 0.2 s was reached" in result.stop_reason
    assert result.results["fast"].status == "completed" and result.results["fast"].output == "fast result"
    assert result.results["stuck"].stop_reason == "budget:deadline"
    assert result.results["after"].status == "not_started"
    # The cut call was sent, so it is counted (with its estimated prompt) in the task and the run.
    assert result.results["stuck"].usage.requests == 1 and result.results["stuck"].usage.input_tokens > 0
    assert result.usage.requests == 2


async def test_budget_warning_and_stop_events() -> None:
    bus = EventBus()
    seen: list[tuple[EventType, dict]] = []
    bus.subscribe(lambda e: seen.append((e.type, e.payload)))
    model = ScriptedModel([tool_call("lookup", term="x")], repeat_last=True)
    await SubAgent("a", "", "", [lookup], model).run("go", budget=Budget(max_calls=5), bus=bus)
    warnings = [p for t, p in seen if t is EventType.BUDGET_WARNING]
    stops = [p for t, p in seen if t is EventType.BUDGET_STOP]
    assert warnings == [{"scope": "run", "which": "calls", "detail": "4 of 5 model calls used"}]
    assert len(stops) == 1 and stops[0]["which"] == "calls"


def test_tracker_settles_reservations() -> None:
    tracker = BudgetTracker(Budget(max_calls=1))
    request = ModelRequest(messages=())
    reservation, _ = tracker.reserve("a", request)
    with pytest.raises(BudgetExceeded):
        tracker.reserve("b", request)  # the reservation holds the only call
    tracker.settle(reservation, None)  # the request failed without spending anything
    assert tracker.usage.requests == 0
    assert "budget of 1 model calls" in str(tracker.run_stop)


def test_a_preset_deadline_fits_a_model_that_runs_on_this_machine() -> None:
    from moot.models.testing import ScriptedModel
    from moot.runtime.budget import LOCAL_DEADLINE_FACTOR, runs_locally

    hosted = Budget.preset("standard", model="openai:gpt-4o-mini")
    local = Budget.preset("standard", model="local")
    assert hosted.deadline_s == 30 and local.deadline_s == 30 * LOCAL_DEADLINE_FACTOR
    assert local.max_calls == hosted.max_calls == 10  # only the time limit changes
    assert runs_locally(ScriptedModel(name="local-1.5b")) and not runs_locally(ScriptedModel(name="scripted"))
    agent_limits = Budget(deadline_s=5, per_agent={"slow": Budget(deadline_s=2)}).fit_to("local:/models/x.gguf")
    assert agent_limits.deadline_s == 5 * LOCAL_DEADLINE_FACTOR and agent_limits.per_agent["slow"].deadline_s == 40


async def test_side_by_side_requests_are_held_at_the_allowance_until_the_provider_is_known() -> None:
    """Small requests sent side by side to a provider that may ignore max_tokens: while no answer has
    shown that it keeps to max_tokens, a request beside others is held at the default allowance."""
    from moot.runtime.budget import DEFAULT_OUTPUT_ALLOWANCE

    tracker = BudgetTracker(Budget(max_tokens=2 * DEFAULT_OUTPUT_ALLOWANCE))
    small = ModelRequest(messages=(), settings=ModelSettings(max_tokens=50))
    first, _ = await tracker.acquire("a", small)
    tracker.settle(first, Usage(input_tokens=1, output_tokens=20, requests=1))  # short: says nothing about the cap
    alone, _ = await tracker.acquire("a", small)
    beside, _ = await tracker.acquire("b", small)
    third = asyncio.create_task(tracker.acquire("c", small))
    await asyncio.sleep(0.05)
    assert alone.tokens < 100 and beside.tokens >= DEFAULT_OUTPUT_ALLOWANCE
    assert not third.done()  # it waits: two more held at the allowance would pass the limit
    tracker.settle(alone, Usage(input_tokens=1, output_tokens=50, requests=1))  # cut at 50: keeps to max_tokens
    held, _ = await asyncio.wait_for(third, 1)
    assert held.tokens < 100  # proven: held at its own max_tokens again
    tracker.settle(beside, None)
    tracker.settle(held, None)
