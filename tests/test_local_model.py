"""The embedded model answering for real: plain, structured, tools, streaming, shared engine.

Kept few and short (small max_tokens): the whole suite runs on 2 cores.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter

from moot.errors import ConfigError, RequestBlockedError
from moot.models.base import (
    ModelRequest,
    ModelSettings,
    OutputSchema,
    StreamDone,
    Model,
    TextDelta,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
    WrapperModel,
)
from moot.models.local import LocalModel, engine_loads, load_local

pytestmark = pytest.mark.embedded

NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}
TOOLS = (
    ToolDefinition(name="add", description="Add two numbers.", parameters=NUMBERS),
    ToolDefinition(name="multiply", description="Multiply two numbers.", parameters=NUMBERS),
)


def ask(prompt: str, max_tokens: int = 16, **kwargs: object) -> ModelRequest:
    return ModelRequest(
        messages=(UserMessage(content=prompt),), settings=ModelSettings(max_tokens=max_tokens), **kwargs
    )


async def test_answers_a_simple_question(local_model: Model) -> None:
    response = await local_model.request(ask("What is 2+3? Answer with just the number.", 8))
    assert response.text.strip() == "5"
    assert response.usage.requests == 1 and response.usage.output_tokens > 0
    assert response.usage.input_tokens > 10 and response.usage.cost_usd == 0


async def test_the_first_tokens_odds_come_back_when_asked(local_model: Model) -> None:
    request = ModelRequest(messages=(UserMessage(content="Is Paris the capital of France? Answer yes or no."),),
                           settings=ModelSettings(max_tokens=1, top_logprobs=10))
    odds = (await local_model.request(request)).top_logprobs
    assert odds and all(v <= 0 for v in odds.values()) and len(odds) <= 10
    assert odds.get("yes", -99.0) > odds.get("no", -99.0)
    assert (await local_model.request(ask("Is Paris the capital of France?", 1))).top_logprobs is None


class City(BaseModel):
    city: str
    country: str


async def test_structured_output_validates(local_model: Model) -> None:
    schema = OutputSchema(name="city", json_schema=TypeAdapter(City).json_schema())
    response = await local_model.request(ask("Where is the Eiffel Tower? Reply in JSON.", 48, output=schema))
    city = TypeAdapter(City).validate_python(response.output)
    assert city.country.lower() == "france"


async def test_tool_call_round_trip(local_model: Model) -> None:
    question = UserMessage(content="What is 12 times 9?")
    first = await local_model.request(
        ModelRequest(messages=(question,), tools=TOOLS, settings=ModelSettings(max_tokens=64))
    )
    assert first.finish_reason == "tool_calls"
    [call] = first.tool_calls
    assert call.name == "multiply" and sorted(call.arguments.values()) == [9, 12]

    result = ToolResultMessage(tool_call_id=call.id, name=call.name, content="108")
    second = await local_model.request(
        ModelRequest(
            messages=(question, first.to_message(), result), tools=TOOLS, settings=ModelSettings(max_tokens=64)
        )
    )
    assert not second.tool_calls and "108" in second.text


async def test_stream_deltas_join_to_the_final_text(local_model: Model) -> None:
    deltas: list[str] = []
    done: list[StreamDone] = []
    async for event in local_model.stream(ask("Count from 1 to 5.", 24)):
        if isinstance(event, TextDelta):
            deltas.append(event.text)
        else:
            done.append(event)
    assert len(deltas) > 3 and len(done) == 1
    assert "".join(deltas) == done[0].response.text
    assert "3" in done[0].response.text


def provider(model: Model) -> LocalModel:
    """The LocalModel under whatever wrappers the registry adds."""
    inner = model.innermost if isinstance(model, WrapperModel) else model
    assert isinstance(inner, LocalModel)
    return inner


async def test_parallel_requests_share_one_in_process_engine(local_model: Model, monkeypatch: pytest.MonkeyPatch) -> None:
    """MOOT_LOCAL_ENGINE=inprocess: two models on one file share this process's one engine."""
    monkeypatch.setenv("MOOT_LOCAL_ENGINE", "inprocess")
    shared = provider(local_model)
    other = load_local("local")
    try:
        replies = await asyncio.gather(
            local_model.request(ask("Name a colour.", 6)), other.request(ask("Name a fruit.", 6))
        )
        assert all(reply.text for reply in replies)
        assert other._engine is shared._engine is not None
        assert shared.path is not None and engine_loads(shared.path) == 1
    finally:
        await other.aclose()
    assert shared._engine is not None  # closing one model keeps the engine for the other
    await shared.aclose()


async def test_real_requests_are_blocked_outside_the_fixture() -> None:
    model = load_local("local")
    with pytest.raises(RequestBlockedError):
        await model.request(ask("hi"))
    assert model._engine is None  # refused before loading anything


def test_missing_gguf_path_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_local(f"local:{tmp_path / 'nope.gguf'}")
    assert "local:/path/to/model.gguf" in info.value.one_line()
