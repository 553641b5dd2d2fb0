"""SubAgent: the tool loop, structured output with one retry, turn limits, model errors."""

from __future__ import annotations

from pydantic import BaseModel

from moot.errors import ModelHTTPError
from moot.models.base import ModelRequest, ModelResponse
from moot.models.testing import FunctionModel, ScriptedModel, tool_call
from moot.runtime import Budget, EventBus, SubAgent, render_context, tool


class Verdict(BaseModel):
    answer: str
    confidence: float


@tool
def ping() -> str:
    """Answers pong."""
    return "pong"


async def test_structured_output_is_validated() -> None:
    model = ScriptedModel([{"answer": "yes", "confidence": 0.9}])
    result = await SubAgent("judge", "decides", "Decide.", model=model, output_type=Verdict).run("Is it?")
    assert result.ok
    assert result.output == Verdict(answer="yes", confidence=0.9)
    schema = model.requests[0].output
    assert schema is not None and schema.name == "Verdict"
    assert set(schema.json_schema["properties"]) == {"answer", "confidence"}


async def test_invalid_output_gets_one_retry_with_the_error() -> None:
    model = ScriptedModel([{"answer": "yes"}, {"answer": "yes", "confidence": 0.5}])
    result = await SubAgent("judge", "", "", model=model, output_type=Verdict).run("Is it?")
    assert result.ok and result.output.confidence == 0.5
    feedback = model.requests[1].messages[-1]
    assert feedback.role == "user" and "confidence: Field required" in feedback.content
    assert result.turns == 2


async def test_output_that_stays_invalid_fails_after_one_retry() -> None:
    model = ScriptedModel([{"answer": "yes"}, {"confidence": "high"}, "never sent"])
    result = await SubAgent("judge", "", "", model=model, output_type=Verdict).run("Is it?")
    assert not result.ok
    assert result.stop_reason.startswith("error:the answer did not match the output schema after one retry")
    assert len(model.requests) == 2


async def test_unparseable_json_counts_as_invalid_output() -> None:
    model = ScriptedModel(["not json at all", '["a", "b"]'])
    result = await SubAgent("lister", "", "", model=model, output_type=list[str]).run("Two letters")
    assert result.ok and result.output == ["a", "b"]


async def test_max_turns_stops_a_runaway_tool_loop() -> None:
    model = ScriptedModel([tool_call("ping")], repeat_last=True)
    agent = SubAgent("looper", "", "", [ping], model, max_turns=3)
    result = await agent.run("loop forever")
    assert result.stop_reason == "max_turns"
    assert len(model.requests) == 3 and result.turns == 3
    assert "max_turns=3" in (result.detail or "")
    assert result.usage.requests == 3


async def test_model_error_ends_the_agent_cleanly() -> None:
    model = ScriptedModel([ModelHTTPError("rate limited", status=429)])
    result = await SubAgent("a", "", "", model=model).run("hi")
    assert result.stop_reason == "error:rate limited"
    # The request was sent and refused: it counts as a call, with no tokens (a 429 is not billed).
    assert result.turns == 1 and result.usage.requests == 1 and result.usage.total_tokens == 0


async def test_context_is_shown_as_results_from_earlier_tasks() -> None:
    model = ScriptedModel(["ok"])
    await SubAgent("c", "", "Be brief.", model=model).run("Combine them.", {"x": "first", "y": {"n": 1}})
    system, user = model.requests[0].messages
    assert system.content == "Be brief."
    assert user.content == 'Results from earlier tasks:\n[x] first\n[y] {"n": 1}\n\nYour task: Combine them.'
    assert render_context({"a": [1, 2]}) == "Results from earlier tasks:\n[a] [1, 2]"


async def test_each_run_has_its_own_conversation() -> None:
    model = ScriptedModel(["one", "two"])
    agent = SubAgent("a", "", "S", model=model)
    first = await agent.run("first task")
    second = await agent.run("second task")
    assert [m.content for m in second.transcript] == ["S", "second task", "two"]
    assert len(first.transcript) == 3
    assert len(model.requests[1].messages) == 2


async def test_usage_is_summed_over_turns() -> None:
    from moot.models.base import Usage

    model = ScriptedModel(
        [
            ModelResponse(tool_calls=(tool_call("ping"),), usage=Usage(input_tokens=10, output_tokens=2, requests=1, cost_usd=0.01)),
            ModelResponse(text="pong!", usage=Usage(input_tokens=20, output_tokens=3, requests=1, cost_usd=0.02)),
        ]
    )
    result = await SubAgent("a", "", "", [ping], model).run("ping")
    assert result.usage == Usage(input_tokens=30, output_tokens=5, requests=2, cost_usd=0.03)


async def test_test_models_route_by_the_calling_agents_name() -> None:
    from moot.models.testing import FunctionModel, by_agent

    scripted = ScriptedModel(by_agent={"planner": ["plan A"], "writer": ["draft B"]})
    writer = await SubAgent("writer", "", "Same prompt.", model=scripted).run("go")
    planner = await SubAgent("planner", "", "Same prompt.", model=scripted).run("go")
    assert (planner.output, writer.output) == ("plan A", "draft B")
    assert [r.agent for r in scripted.requests] == ["writer", "planner"]
    assert len(scripted.requests_from("planner")) == 1

    function = FunctionModel(by_agent({"judge": {"answer": "no", "confidence": 0.2}}, default="plain"))
    judged = await SubAgent("judge", "", "", model=function, output_type=Verdict).run("Is it?")
    other = await SubAgent("helper", "", "", model=function).run("hi")
    assert judged.output == Verdict(answer="no", confidence=0.2) and other.output == "plain"


async def test_a_route_missing_for_an_agent_names_it() -> None:
    from moot.models.testing import FunctionModel, by_agent

    result = await SubAgent("stranger", "", "", model=FunctionModel(by_agent({"judge": "x"}))).run("hi")
    assert not result.ok and "stranger" in (result.detail or "")


def test_one_prompt_loader_serves_the_runtime_and_every_team() -> None:
    import pytest

    from moot.errors import ConfigError
    from moot.runtime import load_prompt

    assert load_prompt("fallback").startswith("You are")
    for package, name in [("moot.teams.graph", "mapper"), ("moot.teams.research", "planner"),
                          ("moot.teams.board", "executor"), ("moot.teams.deliberation", "moderator")]:
        assert load_prompt(name, package) == load_prompt(name, package).strip() != ""
    with pytest.raises(ConfigError, match="no prompt named 'nope' in moot/teams/graph/prompts/"):
        load_prompt("nope", "moot.teams.graph")


async def test_on_text_streams_the_answer_and_the_run_records_it_like_any_request() -> None:
    from moot.runtime import Budget, Run, RunStore

    heard: list[str] = []
    model = ScriptedModel(["Five, as you asked."])
    agent = SubAgent("chat", system_prompt="Answer briefly.", model=model)
    store = RunStore(":memory:")
    async with Run("chat: 2+3", Budget(max_calls=2), store=store) as run:
        outcome = await run.step("chat", agent, "What is 2+3?", on_text=heard.append)
    assert outcome is not None and outcome.ok and outcome.text == "Five, as you asked."
    assert len(heard) > 1 and "".join(heard) == "Five, as you asked."  # piece by piece, nothing lost
    record = store.get_run(run.run_id)
    assert record is not None and record.status == "completed"
    assert record.usage.requests == 1 and run.tracker.usage_by_agent["chat"].requests == 1


def _searcher(request: ModelRequest) -> object:
    """A model that keeps calling its tool while it may, and answers only when told not to."""
    if request.tool_choice == "none":
        return "pong was the answer"
    return [tool_call("ping")]


async def test_the_last_request_the_turn_limit_allows_asks_for_an_answer_not_a_tool() -> None:
    model = FunctionModel(_searcher)
    bus = EventBus()
    seen: list[dict[str, object]] = []
    bus.subscribe(lambda e: seen.append(e.payload) if e.type == "model_request" else None)
    result = await SubAgent("searcher", "", "", tools=[ping], model=model, max_turns=3).run("Find it.", bus=bus)
    assert result.ok and result.output == "pong was the answer" and result.turns == 3
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "none"]
    assert all(r.tools for r in model.requests)  # still listed: the conversation holds tool calls
    assert "tool_choice" not in seen[0] and "must answer" in str(seen[2]["tool_choice"])


async def test_an_agents_own_call_budget_also_makes_its_last_call_an_answer() -> None:
    model = FunctionModel(_searcher)
    agent = SubAgent("searcher", "", "", tools=[ping], model=model, max_turns=6, budget=Budget(max_calls=2))
    result = await agent.run("Find it.")
    assert result.ok and result.output == "pong was the answer"
    assert [r.tool_choice for r in model.requests] == ["auto", "none"]


async def test_answer_on_last_turn_off_keeps_the_old_stop() -> None:
    model = FunctionModel(_searcher)
    agent = SubAgent("searcher", "", "", tools=[ping], model=model, max_turns=2, answer_on_last_turn=False)
    result = await agent.run("Find it.")
    assert result.stop_reason == "max_turns" and not result.ok
    assert [r.tool_choice for r in model.requests] == ["auto", "auto"]
