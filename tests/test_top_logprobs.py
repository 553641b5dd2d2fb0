"""A model's odds for its first answer token: asked for in the settings, sent to the engine, merged
by the word they spell, and handed to the agent's caller (the graph team reads choices from them)."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

from moot.models.base import ModelRequest, ModelResponse, ModelSettings, UserMessage
from moot.models.base import merge_token_logprobs
from moot.models.local import LocalModel
from moot.models.testing import FunctionModel
from moot.runtime import SubAgent


def test_tokens_that_spell_one_word_are_one_answer_with_their_probabilities_summed() -> None:
    odds = merge_token_logprobs([(" Yes", math.log(0.5)), ("yes", math.log(0.2)), ("No", math.log(0.25)), ("\n", -1.0),
                                 ("maybe", None), ("", -0.1)])
    assert set(odds) == {"yes", "no"}
    assert math.isclose(math.exp(odds["yes"]), 0.7) and math.isclose(math.exp(odds["no"]), 0.25)


def test_the_engine_is_asked_for_the_first_tokens_odds_only_when_the_settings_ask() -> None:
    model = LocalModel(name="local", path=Path("unused.gguf"))
    plain = ModelRequest(messages=(UserMessage(content="Is it?"),), settings=ModelSettings(max_tokens=1))
    asked = ModelRequest(messages=(UserMessage(content="Is it?"),), settings=ModelSettings(max_tokens=1, top_logprobs=5))
    assert "logprobs" not in model._body(plain) and "top_logprobs" not in model._body(plain)
    body = model._body(asked)
    assert body["logprobs"] is True and body["top_logprobs"] == 5


def test_an_agent_hands_its_models_odds_to_the_caller_and_none_when_the_model_gives_none() -> None:
    seen: list[int | None] = []

    def reply(request: ModelRequest) -> ModelResponse:
        seen.append(request.settings.top_logprobs)
        return ModelResponse(text="yes", top_logprobs={"yes": -0.1, "no": -2.4})

    agent = SubAgent("asker", "answers yes or no", "Answer with one word.", model=FunctionModel(reply),
                     settings=ModelSettings(max_tokens=1, top_logprobs=10))
    result = asyncio.run(agent.run("Is the sky blue?"))
    assert result.ok and seen == [10] and result.top_logprobs == {"yes": -0.1, "no": -2.4}
    silent = SubAgent("asker", "answers yes or no", "Answer with one word.", model=FunctionModel(lambda r: "yes"))
    assert asyncio.run(silent.run("Is the sky blue?")).top_logprobs is None


def test_an_openai_compatible_server_s_odds_come_back_from_a_request_and_a_stream() -> None:
    from moot.models.base import StreamDone
    from moot.models.registry import infer_model
    from moot.models.testing import allow_real_requests
    from openai_stub import openai_compatible_server

    bodies: list[dict] = []

    def odds(body: dict) -> dict[str, float]:
        bodies.append(body)
        return {"Yes": math.log(0.6), " yes": math.log(0.1), "No": math.log(0.3)}

    request = ModelRequest(messages=(UserMessage(content="Is it?"),), settings=ModelSettings(max_tokens=1, top_logprobs=5))

    async def ask(model_string: str) -> tuple[ModelResponse, ModelResponse, ModelResponse]:
        model = infer_model(model_string)
        streamed = [e async for e in model.stream(request)]
        assert isinstance(streamed[-1], StreamDone)
        plain = ModelRequest(messages=request.messages, settings=ModelSettings(max_tokens=1))
        return await model.request(request), streamed[-1].response, await model.request(plain)

    with openai_compatible_server(lambda body: "Yes", odds=odds) as model_string, allow_real_requests():
        asked, streamed, plain = asyncio.run(ask(model_string))
    for response in (asked, streamed):
        assert response.top_logprobs is not None and set(response.top_logprobs) == {"yes", "no"}
        assert math.isclose(math.exp(response.top_logprobs["yes"]), 0.7)
    assert plain.top_logprobs is None  # not asked for: not sent, not read
    assert [b.get("top_logprobs") for b in bodies] == [5, 5] and all(b["logprobs"] is True for b in bodies)
