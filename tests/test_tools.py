"""Tools from plain functions: schemas, validation, errors and timeouts reach the model, not the run."""

from __future__ import annotations

import asyncio

import pytest

from moot.errors import ConfigError
from moot.models.testing import ScriptedModel, tool_call
from moot.runtime import SubAgent, Tool, tool
from moot.runtime.tools import run_tool_call


@tool
def add(a: int, b: int = 2) -> int:
    """Add two integers.

    Longer explanation that is not part of the description.

    Args:
        a: The first number.
        b: The second number,
            which defaults to two.
    """
    return a + b


async def slow_lookup(key: str) -> str:
    """Look a key up slowly."""
    await asyncio.sleep(10)
    return key


def test_schema_and_description_come_from_hints_and_docstring() -> None:
    definition = add.definition()
    assert definition.name == "add"
    assert definition.description == "Add two integers."
    props = definition.parameters["properties"]
    assert props["a"] == {"type": "integer", "description": "The first number."}
    assert props["b"]["default"] == 2
    assert props["b"]["description"] == "The second number, which defaults to two."
    assert definition.parameters["required"] == ["a"]
    assert add(1, 5) == 6  # the decorated function is still a plain function


def test_decorator_options_and_bad_signatures() -> None:
    named = tool(name="plus", timeout_s=1.5)(lambda x: x)
    assert named.name == "plus" and named.timeout_s == 1.5

    def variadic(*items: int) -> int:
        return sum(items)

    with pytest.raises(ConfigError, match="must be named"):
        Tool.from_function(variadic)


async def test_invalid_arguments_unknown_tools_and_exceptions_become_tool_errors() -> None:
    def boom(x: int) -> int:
        """Always fails."""
        raise RuntimeError("disk on fire")

    tools = {"add": add, "boom": Tool.from_function(boom)}
    bad = await run_tool_call(tools, tool_call("add", a="not a number"))
    assert bad.message.is_error and "a: Input should be a valid integer" in bad.message.content
    missing = await run_tool_call(tools, tool_call("divide", a=1))
    assert missing.message.is_error and "available tools: add, boom" in missing.message.content
    raised = await run_tool_call(tools, tool_call("boom", x=1))
    assert raised.message.is_error and "RuntimeError: disk on fire" in raised.message.content
    extra = await run_tool_call(tools, tool_call("add", a=1, c=3))
    assert extra.message.is_error and "c: Extra inputs are not permitted" in extra.message.content
    ok = await run_tool_call(tools, tool_call("add", a="4"))
    assert not ok.message.is_error and ok.message.content == "6"


async def test_tool_timeout_is_a_tool_error() -> None:
    slow = Tool.from_function(slow_lookup, timeout_s=0.05)
    outcome = await run_tool_call({"slow_lookup": slow}, tool_call("slow_lookup", key="k"))
    assert outcome.message.is_error
    assert "did not finish within 0.05 s" in outcome.message.content


async def test_model_recovers_from_a_validation_error() -> None:
    model = ScriptedModel([tool_call("add", a="one", b=2), tool_call("add", a=1, b=2), "The sum is 3."])
    agent = SubAgent("calc", "adds numbers", "Use the add tool.", [add], model)
    result = await agent.run("What is 1 + 2?")
    assert result.stop_reason == "completed"
    assert result.output == "The sum is 3."
    # The second request carried the error back to the model, the third the real result.
    error_message = model.requests[1].messages[-1]
    assert error_message.role == "tool" and error_message.is_error
    assert "Call the tool again with corrected arguments" in error_message.content
    assert model.requests[2].messages[-1].content == "3"
    assert [t.name for t in model.requests[0].tools] == ["add"]


async def test_tool_exception_and_timeout_do_not_end_the_run() -> None:
    def explode() -> str:
        """Fails."""
        raise ValueError("no such file")

    slow = Tool.from_function(slow_lookup, timeout_s=0.05)
    model = ScriptedModel([[tool_call("explode"), tool_call("slow_lookup", key="x")], "I could not look it up."])
    agent = SubAgent("looker", "looks things up", "", [explode, slow], model)
    result = await agent.run("Look up x")
    assert result.stop_reason == "completed"
    tool_results = [m for m in result.transcript if m.role == "tool"]
    assert [m.is_error for m in tool_results] == [True, True]
    assert "ValueError: no such file" in tool_results[0].content
    assert "did not finish" in tool_results[1].content


async def test_several_tool_calls_run_concurrently() -> None:
    both_in_flight = asyncio.Event()
    arrived: list[str] = []

    async def wait_for_partner(name: str) -> str:
        """Returns once both calls are running together."""
        arrived.append(name)
        if len(arrived) == 2:
            both_in_flight.set()
        await asyncio.wait_for(both_in_flight.wait(), 5)
        return name

    model = ScriptedModel([[tool_call("wait_for_partner", name="a"), tool_call("wait_for_partner", name="b")], "done"])
    result = await SubAgent("pair", "", "", [wait_for_partner], model).run("go")
    tool_results = [m for m in result.transcript if m.role == "tool"]
    assert [m.content for m in tool_results] == ["a", "b"]
    assert not any(m.is_error for m in tool_results)
