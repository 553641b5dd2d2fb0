"""``ModelRequest.tool_choice="none"`` (the runtime's last allowed request): every provider keeps
the tools listed, so a conversation that holds tool calls stays a valid request, and tells the
model to answer without calling one."""

from __future__ import annotations

from pathlib import Path

from moot.models.anthropic import AnthropicModel
from moot.models.base import ModelRequest, OutputSchema, ToolDefinition, UserMessage
from moot.models.local import LocalModel
from moot.models.openai import OpenAIModel

PING = ToolDefinition(name="ping", description="Answers pong.", parameters={"type": "object", "properties": {}})
VERDICT = OutputSchema(name="Verdict", json_schema={"type": "object", "properties": {"answer": {"type": "string"}},
                                                    "required": ["answer"]})


def request(choice: str, output: OutputSchema | None = None) -> ModelRequest:
    return ModelRequest(messages=(UserMessage(content="Find it."),), tools=(PING,), tool_choice=choice, output=output)  # type: ignore[arg-type]


def test_openai_sends_tool_choice_none_beside_the_tools() -> None:
    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1", api_key_env="MOOT_TEST_NO_KEY", key_required=False)
    assert "tool_choice" not in model.build_params(request("auto"))
    params = model.build_params(request("none"))
    assert params["tool_choice"] == "none" and params["tools"][0]["function"]["name"] == "ping"


def test_anthropic_sends_type_none_or_forces_its_output_tool() -> None:
    model = AnthropicModel("m", base_url="http://127.0.0.1:9", key_required=False)
    plain = model.build_params(request("none"))
    assert plain["tool_choice"] == {"type": "none"} and plain["tools"][0]["name"] == "ping"
    assert "tool_choice" not in model.build_params(request("auto"))
    forced = AnthropicModel("m", base_url="http://127.0.0.1:9", key_required=False, structured_output="tool")
    params = forced.build_params(request("none", VERDICT))
    assert params["tool_choice"] == {"type": "tool", "name": "Verdict"}
    assert forced.build_params(request("auto", VERDICT))["tool_choice"] == {"type": "any"}


def test_the_embedded_models_grammar_admits_only_the_answer() -> None:
    model = LocalModel(name="local", path=Path("unused.gguf"))  # no engine: only the request body is built
    allowed = model._body(request("auto", VERDICT))["response_format"]["json_schema"]["schema"]
    answer_only = model._body(request("none", VERDICT))["response_format"]["json_schema"]["schema"]
    assert "ping" in str(allowed) and "ping" not in str(answer_only)
    assert model._body(request("none", VERDICT))["tools"][0]["function"]["name"] == "ping"
