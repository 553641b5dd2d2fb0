"""Record the provider cassettes in tests/cassettes/ from a real server.

The cassettes hold real HTTP exchanges of :class:`OpenAIModel` and :class:`AnthropicModel`
with a real llama.cpp server (the ``xllamacpp`` engine in moot's dependencies serves both the
OpenAI chat-completions API and the Anthropic Messages API on loopback). The tests in
``tests/test_cassettes.py`` replay them offline through the same provider classes, with the
same requests defined below, so a change in how we build requests or parse responses shows up
as a failing test.

Re-record (about a minute on 2 cores; needs the embedded weights)::

    .venv/bin/python tests/record_cassettes.py                    # starts xllamacpp itself
    .venv/bin/python tests/record_cassettes.py --gguf /path/model.gguf
    .venv/bin/python tests/record_cassettes.py --url http://127.0.0.1:8080   # a running server

then run ``pytest tests/test_cassettes.py`` and update its expected values if the model's
answers changed. A fake key is set while recording so the tests can prove that keys never
reach a cassette file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.models.anthropic import AnthropicModel
from moot.models.base import (
    AssistantMessage,
    Model,
    ModelRequest,
    ModelSettings,
    OutputSchema,
    StreamDone,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from moot.models.cassette import Mode, cassette_client
from moot.models.openai import OpenAIModel
from moot.models.testing import allow_real_requests

CASSETTES = Path(__file__).parent / "cassettes"
RECORDING_KEY = "sk-recording-key-that-must-never-be-stored-0123456789"
SETTINGS = ModelSettings(max_tokens=48, temperature=0.0, seed=7)

ADD_TOOL = ToolDefinition(
    name="add",
    description="Add two integers and return the sum.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
ANSWER_SCHEMA = OutputSchema(
    name="answer",
    json_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
        "additionalProperties": False,
    },
)

REQUESTS: dict[str, ModelRequest] = {
    "chat": ModelRequest(
        messages=(
            SystemMessage(content="You answer in one short sentence."),
            UserMessage(content="What is the capital of France?"),
        ),
        settings=SETTINGS,
    ),
    "tools": ModelRequest(
        messages=(
            UserMessage(content="What is 17 + 25? Use the add tool."),
            AssistantMessage(tool_calls=(ToolCall(id="call_add_1", name="add", arguments={"a": 17, "b": 25}),)),
            ToolResultMessage(tool_call_id="call_add_1", name="add", content="42"),
        ),
        tools=(ADD_TOOL,),
        settings=SETTINGS,
    ),
    "structured": ModelRequest(
        messages=(UserMessage(content="Name the capital of Japan and its country as JSON."),),
        output=ANSWER_SCHEMA,
        settings=SETTINGS,
    ),
    "stream": ModelRequest(
        messages=(UserMessage(content="Count from 1 to 5, separated by commas."),),
        settings=SETTINGS,
    ),
}
"""One request per cassette; ``tools`` sends a tool call and its result back to the model."""


def openai_model(path: Path, mode: Mode, base_url: str = "http://127.0.0.1:8080/v1") -> OpenAIModel:
    """The model the OpenAI cassettes were recorded with (the host does not matter on replay)."""
    return OpenAIModel(
        "qwen2.5-coder-0.5b-instruct",
        base_url=base_url,
        api_key_env="MOOT_OPENAI_COMPATIBLE_API_KEY",
        key_required=False,
        provider="openai-compatible",
        http_client=cassette_client(path, mode),
    )


def anthropic_model(path: Path, mode: Mode, base_url: str = "http://127.0.0.1:8080") -> AnthropicModel:
    """The model the Anthropic cassettes were recorded with."""
    return AnthropicModel(
        "qwen2.5-coder-0.5b-instruct",
        base_url=base_url,
        key_required=False,  # replays need no key; recording sets a fake one
        http_client=cassette_client(path, mode),
    )


async def run_one(model: Model, kind: str) -> Any:
    request = REQUESTS[kind]
    if kind == "stream":
        deltas: list[str] = []
        done = None
        async for event in model.stream(request):
            if isinstance(event, TextDelta):
                deltas.append(event.text)
            elif isinstance(event, StreamDone):
                done = event.response
        return deltas, done
    return await model.request(request)


async def record(base: str) -> None:
    for kind in REQUESTS:
        for provider, make, url in (
            ("openai", openai_model, f"{base}/v1"),
            ("anthropic", anthropic_model, base),
        ):
            path = CASSETTES / f"{provider}_{kind}.json"
            model = make(path, "record", url)
            try:
                result = await run_one(model, kind)
            except MootError as exc:  # recorded too: llama.cpp ignores Anthropic's output_config
                result = exc
            print(f"{path.name}: {result!r}"[:400])
            await model.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running llama.cpp server (http://HOST:PORT), else start one")
    parser.add_argument("--gguf", help="GGUF weights for the server we start (default: the embedded model)")
    args = parser.parse_args()
    os.environ["MOOT_OPENAI_COMPATIBLE_API_KEY"] = RECORDING_KEY
    os.environ["ANTHROPIC_API_KEY"] = RECORDING_KEY
    server = None
    base = args.url
    if base is None:
        import xllamacpp

        gguf = args.gguf
        if gguf is None:
            import moot.models.local as local

            find = getattr(local, "default_weights_path", None)
            if find is None:
                parser.error("pass --gguf PATH (the embedded model's .gguf) or --url of a running server")
            gguf = str(find())
        params = xllamacpp.CommonParams()
        params.model.path = gguf
        params.n_ctx = 2048
        params.warmup = False
        params.verbosity = -1
        server = xllamacpp.Server(params)  # kept alive until the end of main
        base = server.listening_address
    with allow_real_requests():
        asyncio.run(record(base.rstrip("/")))
    del server


if __name__ == "__main__":
    main()
