"""OpenAI chat completions, and every server that speaks the same wire format.

One class serves OpenAI itself and OpenAI-compatible servers (vLLM, Ollama, llama.cpp server,
LM Studio, OpenRouter): only the base URL and the key's environment variable differ. The SDK's
own retries are off (``max_retries=0``) because :class:`moot.models.retry.RetryModel` retries
with one policy for every provider. The key is read from the environment when the model is
built and is never logged, put in an error or written to a cassette.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from typing import Any

import openai as _sdk

from moot.errors import ConfigError, MalformedResponseError, ModelError
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
    merge_token_logprobs,
    parse_json_output,
)
from moot.models.testing import check_allowed

OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT_S = 120.0


def strict_schema_ok(schema: Any) -> bool:
    """Whether OpenAI's strict mode accepts ``schema`` unchanged.

    Strict mode needs every object closed (``additionalProperties: false``) with every property
    required, and rejects some keywords. Turning strict on for a schema that breaks these rules
    makes the request fail, so we only ask for it when the schema already complies.
    """
    if isinstance(schema, list):
        return all(strict_schema_ok(item) for item in schema)
    if not isinstance(schema, dict):
        return True
    if any(key in schema for key in ("oneOf", "not", "if", "patternProperties", "dependentRequired")):
        return False
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", ())) != set(properties):
            return False
    return all(strict_schema_ok(value) for value in schema.values() if isinstance(value, (dict, list)))


def _schema_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "output"


def _parse_arguments(model_name: str, tool_name: str, raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise MalformedResponseError(
            f"{model_name} called tool {tool_name!r} with arguments that are not valid JSON: "
            f"{exc.msg} at char {exc.pos}"
        ) from exc
    if not isinstance(value, dict):
        raise MalformedResponseError(
            f"{model_name} called tool {tool_name!r} with arguments that are not a JSON object"
        )
    return value


class OpenAIModel(SDKProviderModel):
    """A chat-completions model reached over HTTP with the official ``openai`` SDK."""

    _sdk = _sdk
    _client_class = "AsyncOpenAI"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = OPENAI_BASE_URL,
        api_key_env: str | None = "OPENAI_API_KEY",
        key_required: bool = True,
        provider: str = "openai",
        name: str | None = None,
        http_client: Any = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        """
        Args:
            model: the provider's model name (``gpt-4o-mini``, ``llama3.2`` …).
            base_url: the API root, ending in ``/v1`` for most servers.
            api_key_env: the environment variable that holds the key (``None``: no key).
            key_required: raise :class:`ConfigError` at once when the key is missing, rather
                than a 401 on the first request.
            provider: ``openai``, ``ollama`` or ``openai-compatible``; used for pricing,
                concurrency limits and ``moot models``.
            name: the model string; defaults to ``provider:model``.
            http_client: an ``httpx.AsyncClient`` to send through (cassettes, tests, proxies).
            timeout_s: default per-request timeout, overridden by ``ModelSettings.timeout_s``.
        """
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.provider = provider
        self.name = name or f"{provider}:{model}"
        self.timeout_s = timeout_s
        self._api_key = os.environ.get(api_key_env, "").strip() if api_key_env else ""
        if key_required and not self._api_key:
            raise ConfigError(
                f"model {self.name!r} needs an API key but {api_key_env} is not set",
                fix=f"export {api_key_env}=... (the key is read only from the environment)",
            )
        self._http_client = http_client
        self._client = None

    # ------------------------------------------------------------------ plumbing


    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` (public for inspection)."""
        params: dict[str, Any] = {"model": self.model, "messages": [_message(m) for m in request.messages]}
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                }
                for tool in request.tools
            ]
            if request.tool_choice == "none":
                params["tool_choice"] = "none"
        if request.output is not None:
            json_schema: dict[str, Any] = {
                "name": _schema_name(request.output.name),
                "schema": request.output.json_schema,
            }
            if request.output.description:
                json_schema["description"] = request.output.description
            if strict_schema_ok(request.output.json_schema):
                json_schema["strict"] = True
            params["response_format"] = {"type": "json_schema", "json_schema": json_schema}
        settings = request.settings
        if settings.max_tokens is not None:
            # OpenAI's reasoning models refuse max_tokens; most compatible servers only know it.
            key = "max_completion_tokens" if self.provider == "openai" else "max_tokens"
            params[key] = settings.max_tokens
        if settings.temperature is not None:
            params["temperature"] = settings.temperature
        if settings.top_p is not None:
            params["top_p"] = settings.top_p
        if settings.seed is not None:
            params["seed"] = settings.seed
        if settings.stop:
            params["stop"] = list(settings.stop)
        if settings.top_logprobs:
            params["logprobs"] = True
            params["top_logprobs"] = min(settings.top_logprobs, 20)  # the API's limit
        params["timeout"] = settings.timeout_s or self.timeout_s
        return params

    def _response(
        self,
        request: ModelRequest,
        *,
        text: str,
        calls: list[tuple[str, str, str | None]],
        usage: Usage,
        finish_reason: str | None,
        refusal: str | None = None,
    ) -> ModelResponse:
        with charged_on_error(usage):  # a refusal or a malformed answer was billed all the same
            if refusal:
                raise ModelError(f"{self.name} refused: {refusal[:200]}", fix="rephrase the request")
            tool_calls = tuple(
                ToolCall(id=call_id, name=name, arguments=_parse_arguments(self.name, name, raw))
                for call_id, name, raw in calls
            )
            output = None
            if request.output is not None and not tool_calls:
                output = parse_json_output(text, request.output)
        return ModelResponse(
            text=text,
            tool_calls=tool_calls,
            output=output,
            usage=usage,
            model=self.name,
            finish_reason=finish_reason or ("tool_calls" if tool_calls else "stop"),
        )

    # ------------------------------------------------------------------ the interface

    async def request(self, request: ModelRequest) -> ModelResponse:
        check_allowed(self.name)
        try:
            completion = await self._sdk_client().chat.completions.create(**self.build_params(request))
        except Exception as exc:  # noqa: BLE001 - mapped, unknown ones re-raised unchanged
            raise self._error(exc) from exc
        if not hasattr(completion, "choices") or not completion.choices:
            raise MalformedResponseError(f"{self.name} answered without any choices")
        choice = completion.choices[0]
        message = choice.message
        usage = Usage(requests=1)
        if completion.usage is not None:
            usage = Usage(
                input_tokens=completion.usage.prompt_tokens or 0,
                output_tokens=completion.usage.completion_tokens or 0,
                requests=1,
            )
        calls = [
            (call.id, call.function.name, call.function.arguments)
            for call in (message.tool_calls or ())
            if getattr(call, "function", None) is not None
        ]
        response = self._response(
            request,
            text=message.content or "",
            calls=calls,
            usage=usage,
            finish_reason=choice.finish_reason,
            refusal=getattr(message, "refusal", None),
        )
        return _with_odds(response, request, getattr(choice, "logprobs", None))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        check_allowed(self.name)
        params = self.build_params(request)
        params.update(stream=True, stream_options={"include_usage": True})
        text_parts: list[str] = []
        calls: dict[int, list[Any]] = {}
        usage = Usage(requests=1)
        finish_reason: str | None = None
        first_logprobs: Any = None
        try:
            chunks = await self._sdk_client().chat.completions.create(**params)
            async for chunk in chunks:
                if chunk.usage is not None:
                    usage = Usage(
                        input_tokens=chunk.usage.prompt_tokens or 0,
                        output_tokens=chunk.usage.completion_tokens or 0,
                        requests=1,
                    )
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
                    if first_logprobs is None and getattr(getattr(choice, "logprobs", None), "content", None):
                        first_logprobs = choice.logprobs
                    if delta is None:
                        continue
                    if delta.content:
                        text_parts.append(delta.content)
                        yield TextDelta(delta.content)
                    for call in delta.tool_calls or ():
                        slot = calls.setdefault(call.index, ["", "", ""])
                        if call.id:
                            slot[0] = call.id
                        if call.function is not None:
                            slot[1] += call.function.name or ""
                            slot[2] += call.function.arguments or ""
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc) from exc
        response = self._response(
            request,
            text="".join(text_parts),
            calls=[(c[0] or f"call_{i}", c[1], c[2]) for i, c in sorted(calls.items())],
            usage=usage,
            finish_reason=finish_reason,
        )
        yield StreamDone(_with_odds(response, request, first_logprobs))


    def describe(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "provider": self.provider,
            "provider_model": self.model,
            "base_url": self.base_url,
            "key_env": self.api_key_env if self._api_key else None,
        }


def _message(message: Any) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, AssistantMessage):
        out: dict[str, Any] = {"role": "assistant", "content": message.content or None}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in message.tool_calls
            ]
        elif out["content"] is None:
            out["content"] = ""
        return out
    if isinstance(message, ToolResultMessage):
        content = f"error: {message.content}" if message.is_error else message.content
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}
    raise TypeError(f"cannot send a {type(message).__name__} to an OpenAI model")


def _with_odds(response: ModelResponse, request: ModelRequest, logprobs: Any) -> ModelResponse:
    """The first answer token's odds, when the request asked and the server sent them."""
    content = getattr(logprobs, "content", None)
    if not request.settings.top_logprobs or not content:
        return response
    top = getattr(content[0], "top_logprobs", None) or ()
    response.top_logprobs = merge_token_logprobs((getattr(t, "token", ""), getattr(t, "logprob", None)) for t in top)
    return response
