"""Anthropic's Messages API with the official ``anthropic`` SDK.

Same contract as :mod:`moot.models.openai`: typed messages in, one :class:`ModelResponse`
out, SDK retries off, errors mapped to :mod:`moot.errors`, key only from the environment.

Structured output has two modes. ``native`` (default) uses the API's ``output_config.format``
JSON schema (constrained decoding on current Claude models, and accepted by llama.cpp's
``/v1/messages``). ``tool`` forces a tool whose input schema is the output schema; it works
on every Claude model, including older ones that reject ``output_config``.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import AsyncIterator
from typing import Any, Literal

import anthropic as _sdk

from moot.errors import ConfigError, MalformedResponseError
from moot.models._httpx_bridge import as_httpx2_client
from moot.models._jsonschema import validate
from moot.models._sdk_provider import SDKProviderModel
from moot.models.base import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamEvent,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    charged_on_error,
    parse_json_output,
)
from moot.models.testing import check_allowed

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096
"""The Messages API requires max_tokens; this is used when ModelSettings leaves it unset."""
DEFAULT_TIMEOUT_S = 120.0
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}


def closed_schema(schema: Any) -> Any:
    """A copy of ``schema`` with every object closed, as native structured output requires."""
    if isinstance(schema, list):
        return [closed_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: closed_schema(value) for key, value in schema.items()}
    if out.get("type") == "object" or "properties" in out:
        out.setdefault("additionalProperties", False)
    return out


class AnthropicModel(SDKProviderModel):
    """A Claude model (or any server that speaks the Anthropic Messages API)."""

    _sdk = _sdk
    _client_class = "AsyncAnthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = ANTHROPIC_BASE_URL,
        api_key_env: str | None = "ANTHROPIC_API_KEY",
        key_required: bool = True,
        name: str | None = None,
        http_client: Any = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        structured_output: Literal["native", "tool"] = "native",
    ) -> None:
        """
        Args:
            model: the provider's model name (``claude-sonnet-4-5`` …).
            base_url: the API root (without ``/v1``; the SDK adds it).
            api_key_env: the environment variable that holds the key.
            key_required: fail at construction when the key is missing.
            name: the model string; defaults to ``anthropic:model``.
            http_client: an ``httpx.AsyncClient`` (or ``httpx2``) to send through (cassettes,
                tests, proxies).
            timeout_s: default per-request timeout.
            structured_output: ``native`` (``output_config``) or ``tool`` (a forced tool).
        """
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.provider = "anthropic"
        self.name = name or f"anthropic:{model}"
        self.timeout_s = timeout_s
        self.structured_output = structured_output
        self._api_key = os.environ.get(api_key_env, "").strip() if api_key_env else ""
        if key_required and not self._api_key:
            raise ConfigError(
                f"model {self.name!r} needs an API key but {api_key_env} is not set",
                fix=f"export {api_key_env}=... (the key is read only from the environment)",
            )
        # The SDK takes only httpx2 clients; moot's seam is httpx, so bridge when needed.
        self._http_client = as_httpx2_client(http_client)
        self._client = None


    def _output_tool_name(self, request: ModelRequest) -> str | None:
        if request.output is None or self.structured_output != "tool":
            return None
        return request.output.name or "output"

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for ``messages.create`` (public for inspection)."""
        system = "\n\n".join(m.content for m in request.messages if isinstance(m, SystemMessage))
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.settings.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": _messages(request),
        }
        if system:
            params["system"] = system
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
        output_tool = self._output_tool_name(request)
        if request.output is not None and output_tool is not None:
            tools.append(
                {
                    "name": output_tool,
                    "description": request.output.description or "Give the final answer.",
                    "input_schema": request.output.json_schema,
                }
            )
            # With other tools the model may still call them; it must call *some* tool.
            params["tool_choice"] = (
                {"type": "any"} if request.tools and request.tool_choice != "none"
                else {"type": "tool", "name": output_tool}
            )
        elif request.output is not None:
            params["output_config"] = {
                "format": {"type": "json_schema", "schema": closed_schema(request.output.json_schema)}
            }
        if tools:
            params["tools"] = tools
            if request.tool_choice == "none":  # the forced output tool above already answers
                params.setdefault("tool_choice", {"type": "none"})
        settings = request.settings
        if settings.stop:
            params["stop_sequences"] = list(settings.stop)
        extra: dict[str, Any] = {}
        # SDK 2.10 no longer lists sampling parameters; send them only when asked for.
        if settings.temperature is not None:
            extra["temperature"] = settings.temperature
        if settings.top_p is not None:
            extra["top_p"] = settings.top_p
        if extra:
            params["extra_body"] = extra
        params["timeout"] = settings.timeout_s or self.timeout_s
        return params

    def _response(self, request: ModelRequest, **answer: Any) -> ModelResponse:
        with charged_on_error(answer["usage"]):  # a malformed answer was billed all the same
            return self._parsed(request, **answer)

    def _parsed(
        self,
        request: ModelRequest,
        *,
        text: str,
        calls: list[tuple[str, str, Any]],
        usage: Usage,
        stop_reason: str | None,
    ) -> ModelResponse:
        output_tool = self._output_tool_name(request)
        tool_calls: list[ToolCall] = []
        output: Any = None
        for call_id, name, arguments in calls:
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments or "{}")
                except json.JSONDecodeError as exc:
                    raise MalformedResponseError(
                        f"{self.name} called tool {name!r} with input that is not valid JSON: {exc.msg}"
                    ) from exc
            if not isinstance(arguments, dict):
                raise MalformedResponseError(
                    f"{self.name} called tool {name!r} with input that is not a JSON object"
                )
            if output_tool is not None and name == output_tool and request.output is not None:
                problem = validate(arguments, request.output.json_schema)
                if problem:
                    raise MalformedResponseError(
                        f"model output does not match schema {request.output.name!r}: {problem}"
                    )
                output = arguments
                text = text or json.dumps(arguments)
                continue
            tool_calls.append(ToolCall(id=call_id, name=name, arguments=arguments))
        if request.output is not None and output is None and not tool_calls:
            output = parse_json_output(text, request.output)
        finish = _FINISH.get(stop_reason or "end_turn", stop_reason or "stop")
        if output is not None and finish == "tool_calls":
            finish = "stop"
        return ModelResponse(
            text=text,
            tool_calls=tuple(tool_calls),
            output=output,
            usage=usage,
            model=self.name,
            finish_reason=finish,
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        check_allowed(self.name)
        try:
            message = await self._sdk_client().messages.create(**self.build_params(request))
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc) from exc
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            raise MalformedResponseError(f"{self.name} answered without a content list")
        text = "".join(block.text for block in content if getattr(block, "type", "") == "text")
        calls = [
            (block.id, block.name, block.input)
            for block in content
            if getattr(block, "type", "") == "tool_use"
        ]
        return self._response(
            request, text=text, calls=calls, usage=_usage(message.usage), stop_reason=message.stop_reason
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        check_allowed(self.name)
        params = self.build_params(request)
        params["stream"] = True
        text_parts: list[str] = []
        blocks: dict[int, list[Any]] = {}
        input_tokens = output_tokens = 0
        stop_reason: str | None = None
        try:
            events = await self._sdk_client().messages.create(**params)
            async for event in events:
                kind = getattr(event, "type", "")
                if kind == "message_start":
                    input_tokens = _usage(event.message.usage).input_tokens
                elif kind == "content_block_start" and event.content_block.type == "tool_use":
                    block = event.content_block
                    blocks[event.index] = [block.id, block.name, ""]
                elif kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta" and delta.text:
                        text_parts.append(delta.text)
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta" and event.index in blocks:
                        blocks[event.index][2] += delta.partial_json
                elif kind == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
                    if event.usage is not None:
                        output_tokens = event.usage.output_tokens or output_tokens
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc) from exc
        usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, requests=1)
        calls = [(b[0], b[1], b[2]) for _, b in sorted(blocks.items())]
        yield StreamDone(
            self._response(request, text="".join(text_parts), calls=calls, usage=usage, stop_reason=stop_reason)
        )


    def describe(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "provider": self.provider,
            "provider_model": self.model,
            "base_url": self.base_url,
            "key_env": self.api_key_env if self._api_key else None,
        }


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage(requests=1)
    cached = (getattr(usage, "cache_read_input_tokens", 0) or 0) + (
        getattr(usage, "cache_creation_input_tokens", 0) or 0
    )
    return Usage(
        input_tokens=(usage.input_tokens or 0) + cached,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
        requests=1,
    )


def _messages(request: ModelRequest) -> list[dict[str, Any]]:
    """Anthropic wants alternating turns with tool results inside user turns; merge adjacent
    same-role turns so a list of tool results becomes one user message."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    for message in request.messages:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, UserMessage):
            add("user", [{"type": "text", "text": message.content}])
        elif isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            for call in message.tool_calls:
                blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
            add("assistant", blocks or [{"type": "text", "text": ""}])
        elif isinstance(message, ToolResultMessage):
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
            }
            if message.is_error:
                block["is_error"] = True
            add("user", [block])
    return copy.deepcopy(out)
