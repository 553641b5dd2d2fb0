"""Replays of real exchanges with a llama.cpp server (recorded by tests/record_cassettes.py)
through the real provider classes, offline. A change in how requests are built makes the
cassette refuse the request; a change in how responses are parsed changes what we assert."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.errors import MalformedResponseError
from moot.models.base import ModelRequest, StreamDone, TextDelta, UserMessage
from moot.models.cassette import CassetteError, CassetteTransport, cassette_client
from moot.models.openai import OpenAIModel
from record_cassettes import CASSETTES, RECORDING_KEY, REQUESTS, anthropic_model, openai_model

pytestmark = pytest.mark.usefixtures("allow_real")
PROVIDERS = {"openai": openai_model, "anthropic": anthropic_model}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_chat_replays_the_recorded_answer(provider: str) -> None:
    model = PROVIDERS[provider](CASSETTES / f"{provider}_chat.json", "replay")
    response = await model.request(REQUESTS["chat"])
    assert response.text == "Paris is the capital of France."
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (27, 8, 1)
    assert response.model.startswith(provider if provider == "anthropic" else "openai-compatible")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_tool_call_and_result_round_trip(provider: str) -> None:
    """The request carries an earlier tool call and its result (the cassette matches the body
    exactly); the 0.5B model answers by writing the call as text, which we pass through."""
    path = CASSETTES / f"{provider}_tools.json"
    model = PROVIDERS[provider](path, "replay")
    response = await model.request(REQUESTS["tools"])
    assert response.tool_calls == ()
    assert json.loads(response.text.splitlines()[0]) == {"name": "add", "arguments": {"a": 17, "b": 25}}
    body = json.loads(path.read_text())["interactions"][0]["request"]["body"]
    sent = json.dumps(body)
    assert "call_add_1" in sent and "42" in sent
    if provider == "openai":
        assert body["messages"][1]["tool_calls"][0]["function"] == {"name": "add", "arguments": '{"a": 17, "b": 25}'}
        assert body["messages"][2] == {"role": "tool", "tool_call_id": "call_add_1", "content": "42"}
        assert body["tools"][0]["function"]["name"] == "add"
    else:
        assert body["messages"][1]["content"][0] == {
            "type": "tool_use", "id": "call_add_1", "name": "add", "input": {"a": 17, "b": 25}
        }
        assert body["messages"][2]["content"][0]["type"] == "tool_result"
        assert body["tools"][0]["input_schema"]["required"] == ["a", "b"]


async def test_openai_structured_output_is_parsed_and_validated() -> None:
    model = openai_model(CASSETTES / "openai_structured.json", "replay")
    response = await model.request(REQUESTS["structured"])
    assert response.output == {"city": "Tokyo", "country": "Japan"}
    body = json.loads((CASSETTES / "openai_structured.json").read_text())["interactions"][0]["request"]["body"]
    assert body["response_format"]["json_schema"]["strict"] is True  # closed schema: strict is safe


async def test_anthropic_structured_output_from_a_server_that_ignores_it_is_malformed() -> None:
    """llama.cpp's /v1/messages ignores output_config and answered prose around a fenced
    object with the wrong keys; the user gets a retryable MalformedResponseError, not junk."""
    model = anthropic_model(CASSETTES / "anthropic_structured.json", "replay")
    with pytest.raises(MalformedResponseError) as caught:
        await model.request(REQUESTS["structured"])
    assert caught.value.retryable
    assert "schema 'answer'" in caught.value.message


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_stream_replays_deltas_then_the_full_response(provider: str) -> None:
    model = PROVIDERS[provider](CASSETTES / f"{provider}_stream.json", "replay")
    events = [event async for event in model.stream(REQUESTS["stream"])]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 5 and "".join(deltas) == "1, 2, 3, 4, 5"
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.response.text == "1, 2, 3, 4, 5"
    assert done.response.usage.output_tokens == 14 and done.response.usage.input_tokens == 41


def test_no_cassette_holds_a_key_or_auth_header() -> None:
    files = sorted(CASSETTES.glob("*.json"))
    assert len(files) == 8
    for path in files:
        text = path.read_text().lower()
        assert RECORDING_KEY.lower() not in text
        for header in ("authorization", "x-api-key", "bearer"):
            assert header not in text, f"{header} in {path.name}"


async def test_a_changed_request_is_refused_with_a_clear_error() -> None:
    model = openai_model(CASSETTES / "openai_chat.json", "replay")
    with pytest.raises(CassetteError) as caught:
        await model.request(ModelRequest(messages=(UserMessage(content="something else"),)))
    assert "does not match cassette openai_chat.json" in caught.value.one_line()
    assert "record_cassettes.py" in caught.value.one_line()


async def test_an_unrecorded_extra_request_is_refused() -> None:
    model = openai_model(CASSETTES / "openai_chat.json", "replay")
    await model.request(REQUESTS["chat"])
    with pytest.raises(CassetteError, match="unrecorded request #2"):
        await model.request(REQUESTS["chat"])


async def test_record_mode_strips_keys_from_a_real_exchange(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recording through a mock server that echoes the key back: the file never holds it."""
    import httpx

    secret = "sk-live-abcdefghijklmnop1234"
    monkeypatch.setenv("MOOT_OPENAI_COMPATIBLE_API_KEY", secret)

    def echo(request: httpx.Request) -> httpx.Response:
        auth = request.headers["authorization"]
        return httpx.Response(200, json={
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": f"you sent {auth}"}}],
        }, headers={"set-cookie": "session=1", "x-api-key": secret})

    path = tmp_path / "echo.json"
    transport = CassetteTransport(path, "record", inner=httpx.MockTransport(echo))
    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1", api_key_env="MOOT_OPENAI_COMPATIBLE_API_KEY",
                        provider="openai-compatible", http_client=httpx.AsyncClient(transport=transport))
    response = await model.request(ModelRequest(messages=(UserMessage(content="hi"),)))
    assert secret in response.text  # the live answer is untouched; only the file is scrubbed
    text = path.read_text()
    assert secret not in text and "session=1" not in text
    assert "<redacted>" in text
    replayed = OpenAIModel("m", base_url="http://127.0.0.1:9/v1", provider="openai-compatible",
                           api_key_env=None, key_required=False, http_client=cassette_client(path))
    assert (await replayed.request(ModelRequest(messages=(UserMessage(content="hi"),)))).text == "you sent <redacted>"
