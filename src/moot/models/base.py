"""The model interface: typed messages in, a typed response out.

Every provider implements :class:`Model`. Wrappers (retry, concurrency limits, fallback,
usage accounting) are models too, so an agent never knows whether it talks to a bare
provider or to a stack of wrappers around one.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

# --------------------------------------------------------------------------- messages


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True)


class SystemMessage(_Message):
    """Instructions for the model."""

    role: Literal["system"] = "system"
    content: str


class UserMessage(_Message):
    """What the user (or the calling agent) says."""

    role: Literal["user"] = "user"
    content: str


class ToolCall(_Message):
    """A request from the model to run one tool."""

    id: str
    """Identifier that the matching :class:`ToolResultMessage` refers to."""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Arguments already parsed from JSON; validated later against the tool's schema."""


class AssistantMessage(_Message):
    """What the model said earlier in the conversation."""

    role: Literal["assistant"] = "assistant"
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


class ToolResultMessage(_Message):
    """The outcome of one tool call, sent back to the model."""

    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    """True when the tool failed or its arguments were invalid; the model should correct itself."""


Message = Annotated[
    Union[SystemMessage, UserMessage, AssistantMessage, ToolResultMessage],
    Field(discriminator="role"),
]


# --------------------------------------------------------------------------- request


class ToolDefinition(_Message):
    """A tool as the model sees it: a name, what it does, and a JSON schema of its arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class OutputSchema(_Message):
    """Structured output the final answer must follow (a JSON schema)."""

    name: str = "output"
    json_schema: dict[str, Any]
    description: str = ""


class ModelSettings(_Message):
    """Sampling settings; ``None`` leaves the provider's default."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    timeout_s: float | None = None
    """Per-request timeout; providers turn an overrun into :class:`moot.errors.ModelTimeoutError`."""
    top_logprobs: int | None = None
    """Ask for the first answer token's most likely alternatives with their log-probabilities
    (:attr:`ModelResponse.top_logprobs`): the model's own odds of "yes" against "no", read
    without making it choose from a list. Providers that cannot give them ignore it."""


class ModelRequest(_Message):
    """Everything a model needs for one call. Built with keyword arguments only."""

    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...] = ()
    tool_choice: Literal["auto", "none"] = "auto"
    """``none``: the tools stay listed (a conversation that holds tool calls stays valid for every
    provider) but the model must answer without calling one. The runtime sends it on an agent's
    last allowed request."""
    output: OutputSchema | None = None
    """When set, the response's ``output`` holds the parsed JSON that matches this schema."""
    settings: ModelSettings = Field(default_factory=ModelSettings)
    agent: str | None = None
    """The name of the agent that sends this request (set by the runtime for every agent
    call; ``None`` for a direct call). Providers ignore it; test models route by it, so a
    test never has to recognise an agent by its prompt text."""

    def estimated_input_tokens(self) -> int:
        """A provider-independent upper-ish estimate of the prompt size, for budget checks.

        About 3.5 characters a token for English and code, one token for every character beyond
        ASCII (Chinese, Japanese and Korean text is about a token a character, and accented
        letters cost more than plain ones), plus the tool and output schemas, plus a few tokens
        of chat template per message. Budgets use it *before* a request.
        """
        chars = 0.0
        for message in self.messages:
            chars += _weighted_chars(message.content) + 16
            if isinstance(message, AssistantMessage):
                for call in message.tool_calls:
                    chars += len(call.name) + _weighted_chars(json.dumps(call.arguments, ensure_ascii=False))
        for tool in self.tools:
            chars += len(tool.name) + _weighted_chars(tool.description) + len(json.dumps(tool.parameters))
        if self.output is not None:
            chars += len(json.dumps(self.output.json_schema))
        return int(chars / 3.5) + 1


def _weighted_chars(text: str) -> float:
    """``len(text)`` in units of 1/3.5 token: a character beyond ASCII weighs a whole token."""
    wide = len(text) - len(text.encode("ascii", "ignore"))
    return len(text) + wide * 2.5


# --------------------------------------------------------------------------- response


class Usage(BaseModel):
    """Tokens, requests and money spent. Adding two usages sums every field."""

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cost_usd: float = 0.0
    cached_input_tokens: int = 0
    """Of ``input_tokens``, those the provider reused from a cached prompt prefix instead of
    evaluating them again (llama.cpp's prompt cache; OpenAI's cached tokens)."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        # The runtime adds usages several times per model call: the core validator on a dict
        # skips keyword-argument handling in ``__init__`` (about 40 % cheaper) and still
        # validates, so the result is the same as ``Usage(...)``: every field set, coerced.
        return Usage.__pydantic_validator__.validate_python(
            {
                "input_tokens": self.input_tokens + other.input_tokens,
                "output_tokens": self.output_tokens + other.output_tokens,
                "requests": self.requests + other.requests,
                "cost_usd": self.cost_usd + other.cost_usd,
                "cached_input_tokens": self.cached_input_tokens + other.cached_input_tokens,
            }
        )

    def __sub__(self, other: Usage) -> Usage:
        """What is left of this usage after ``other`` (a part of it), never below zero in any field."""
        return Usage(
            input_tokens=max(0, self.input_tokens - other.input_tokens),
            output_tokens=max(0, self.output_tokens - other.output_tokens),
            requests=max(0, self.requests - other.requests),
            cost_usd=max(0.0, self.cost_usd - other.cost_usd),
            cached_input_tokens=max(0, self.cached_input_tokens - other.cached_input_tokens),
        )


class ModelResponse(BaseModel):
    """One answer from a model."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    output: Any = None
    """The parsed structured output when the request had an ``output`` schema, else ``None``."""
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    """The model string that actually answered (a fallback may differ from the one asked)."""
    finish_reason: str = "stop"
    """``stop``, ``length``, ``tool_calls`` or a provider-specific reason."""
    top_logprobs: dict[str, float] | None = None
    """When the request's settings asked for ``top_logprobs``: the first answer token's likeliest
    alternatives, each token's text (trimmed, lower-cased) mapped to its log-probability under
    the model before any schema applied; ``None`` when the provider gives none."""

    def to_message(self) -> AssistantMessage:
        """The response as a message to append to the conversation."""
        return AssistantMessage(content=self.text, tool_calls=self.tool_calls)


def merge_token_logprobs(tokens: Iterable[tuple[str, float | None]]) -> dict[str, float]:
    """A first token's alternatives by the word they spell: " Yes", "yes" and "YES" are one
    answer, whose probability is the sum of theirs (log-sum-exp of the log-probabilities)."""
    out: dict[str, float] = {}
    for token, logprob in tokens:
        word = token.strip().lower()
        if not word or logprob is None or not math.isfinite(logprob):
            continue
        if word in out:
            hi, lo = max(out[word], logprob), min(out[word], logprob)
            out[word] = hi + math.log1p(math.exp(lo - hi))
        else:
            out[word] = logprob
    return out


UNLISTED_LOGPROB = -30.0
"""The log-probability given to an answer that a response's likeliest first tokens do not include."""

ANSWER_ODDS = 10
"""How many likeliest first tokens a one-word question asks the model for."""


def odds_settings() -> ModelSettings:
    """Settings for a one-word answer read for its odds: one greedy token and its
    :data:`ANSWER_ODDS` likeliest alternatives (:attr:`ModelResponse.top_logprobs`)."""
    return ModelSettings(max_tokens=1, temperature=0.0, top_logprobs=ANSWER_ODDS)


def yes_margin(odds: Mapping[str, float]) -> float:
    """How far a one-word answer leans to "yes" over "no", read from
    :attr:`ModelResponse.top_logprobs`: a log-odds, above 0 when it leans to yes, 0 with no odds
    either way."""
    return odds.get("yes", UNLISTED_LOGPROB) - odds.get("no", UNLISTED_LOGPROB)


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed text."""

    text: str


@dataclass(frozen=True)
class StreamDone:
    """The end of a stream, carrying the complete response (text, tool calls, usage)."""

    response: ModelResponse


StreamEvent = Union[TextDelta, StreamDone]


# --------------------------------------------------------------------------- the interface


class Model(ABC):
    """A language model. Implementations must be safe to call concurrently from one event loop."""

    name: str
    """The model string that selects this model (``local``, ``openai:gpt-4o-mini`` …)."""

    @abstractmethod
    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one request and return the whole response.

        Raises :class:`moot.errors.ModelError` subclasses; ``retryable`` tells whether
        repeating may help.
        """

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream text deltas, then one :class:`StreamDone` with the full response.

        The default answers in one piece; providers that can stream override it.
        """
        response = await self.request(request)
        if response.text:
            yield TextDelta(response.text)
        yield StreamDone(response)

    async def aclose(self) -> None:
        """Release connections or loaded weights. Safe to call twice."""

    def count_input_tokens(self, request: ModelRequest) -> int | None:
        """The prompt's size in this model's own tokens, when the model can count them without a
        request (the embedded model reads its tokenizer from its weights file); ``None`` leaves
        budgets with :meth:`ModelRequest.estimated_input_tokens`."""
        return None

    def describe(self) -> dict[str, Any]:
        """Facts for ``moot models``: provider, model, where it runs."""
        return {"model": self.name}


@dataclass
class WrapperModel(Model):
    """A model that delegates to another; the base of every wrapper."""

    wrapped: Model
    name: str = field(default="", init=False)

    def __post_init__(self) -> None:
        self.name = self.wrapped.name

    async def request(self, request: ModelRequest) -> ModelResponse:
        return await self.wrapped.request(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in self.wrapped.stream(request):
            yield event

    async def aclose(self) -> None:
        await self.wrapped.aclose()

    def count_input_tokens(self, request: ModelRequest) -> int | None:
        return self.wrapped.count_input_tokens(request)

    def describe(self) -> dict[str, Any]:
        return self.wrapped.describe()

    @property
    def innermost(self) -> Model:
        """The provider model under all wrappers."""
        model: Model = self.wrapped
        while isinstance(model, WrapperModel):
            model = model.wrapped
        return model


def messages_from(
    prompt: str | Sequence[Message], *, system: str | None = None
) -> tuple[Message, ...]:
    """Build a message list from a plain prompt (and an optional system prompt)."""
    if isinstance(prompt, str):
        messages: list[Message] = [UserMessage(content=prompt)]
    else:
        messages = list(prompt)
    if system:
        messages.insert(0, SystemMessage(content=system))
    return tuple(messages)


def _unfenced(text: str) -> str:
    """``text`` without a Markdown code fence around it (some models add one even when asked not to)."""
    candidate = text.strip()
    if candidate.startswith("```"):
        candidate = candidate.split("\n", 1)[1] if "\n" in candidate else ""
        candidate = candidate.rsplit("```", 1)[0]
    return candidate


def salvage_cut_json(text: str, schema: OutputSchema) -> Any | None:
    """What a structured answer cut off by ``max_tokens`` still holds, or ``None``.

    The text is cut back to the end of its last complete list item and the open brackets are
    closed; the first cut (latest first) that parses and validates against ``schema`` is the
    value. A list of facts cut inside its seventh item keeps the first six. ``None`` when no
    list item was complete or nothing validates (an object cut before its required fields)."""
    from moot.models._jsonschema import validate

    candidate = _unfenced(text)
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []  # (end of a complete list item, the brackets that close it)
    in_string = escaped = False
    for i, ch in enumerate(candidate):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            stack.append("]" if ch == "[" else "}")
        elif ch in "]}":
            if not stack:
                return None
            stack.pop()
            if stack and stack[-1] == "]":
                cuts.append((i + 1, "".join(reversed(stack))))
        elif ch == "," and stack and stack[-1] == "]":
            cuts.append((i, "".join(reversed(stack))))
    for end, closing in reversed(cuts):
        try:
            value = json.loads(candidate[:end] + closing)
        except json.JSONDecodeError:
            continue
        if not validate(value, schema.json_schema):
            return value
    return None


@contextmanager
def charged_on_error(usage: Usage) -> Iterator[None]:
    """Attach ``usage`` to a :class:`moot.errors.ModelError` raised inside (a malformed answer, a
    refusal): the provider billed the tokens even though the answer is unusable, and a budget
    must count them."""
    from moot.errors import ModelError

    try:
        yield
    except ModelError as error:
        if error.usage is None:
            error.usage = usage
        raise


def parse_json_output(text: str, schema: OutputSchema) -> Any:
    """Parse structured output text and validate it against ``schema``.

    Tolerates a Markdown code fence around the JSON (some models add one even when asked not
    to). Raises :class:`moot.errors.MalformedResponseError` when it does not parse or validate.
    """
    from moot.errors import MalformedResponseError
    from moot.models._jsonschema import validate

    candidate = _unfenced(text)
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise MalformedResponseError(
            f"model output is not valid JSON for schema {schema.name!r}: {exc.msg} at char {exc.pos}"
        ) from exc
    problem = validate(value, schema.json_schema)
    if problem:
        raise MalformedResponseError(
            f"model output does not match schema {schema.name!r}: {problem}"
        )
    return value
