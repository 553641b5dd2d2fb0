"""Tool calling for models without reliable native tool calls, by constrained JSON output.

Small local models often pick the right tool but write the call in the wrong shape (the
0.5B embedded model wraps it in a Markdown fence instead of its chat template's tags). A
provider that can constrain decoding to a JSON schema can make tool calling reliable instead:
the answer must be *either* one tool call whose arguments follow that tool's schema,
*or* a final answer (free text, or the request's output schema). This module builds that
choice schema, the short prompt that explains it, the plain-chat rendering of earlier tool
calls and results, and parses the choice back into a :class:`ModelResponse`'s parts.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from moot.errors import MalformedResponseError
from moot.models._jsonschema import validate
from moot.models.base import (
    AssistantMessage,
    Message,
    OutputSchema,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)

FINAL_ANSWER_KEY = "final_answer"
AFTER_TOOL_RESULTS = "Use the result to answer the original question in words (a full sentence), or call another tool."


@dataclass(frozen=True)
class ToolChoice:
    """What the model chose: tool calls, or a final answer (text, plus output when a schema was set)."""

    tool_calls: tuple[ToolCall, ...] = ()
    text: str = ""
    output: Any = None


def _arguments_schema(tool: ToolDefinition) -> dict[str, Any]:
    schema = dict(tool.parameters) if tool.parameters else {}
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def call_schema(tool: ToolDefinition) -> dict[str, Any]:
    """One call of ``tool``: ``{"name": <const>, "arguments": <the tool's parameters>}``."""
    return {
        "type": "object",
        "properties": {"name": {"const": tool.name}, "arguments": _arguments_schema(tool)},
        "required": ["name", "arguments"],
    }


def final_schema(output: OutputSchema | None = None) -> dict[str, Any]:
    """The final answer: ``{"final_answer": <text, or the output schema>}``.

    The output schema's ``$defs`` (pydantic puts nested models there) move to the root: its
    ``#/$defs/…`` references are resolved from the root of the whole schema, and nested one
    level down they pointed at nothing ("cannot resolve $ref" in the engine).
    """
    final: dict[str, Any] = dict(output.json_schema) if output is not None else {"type": "string"}
    defs = final.pop("$defs", None)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {FINAL_ANSWER_KEY: final},
        "required": [FINAL_ANSWER_KEY],
    }
    if defs:
        schema["$defs"] = defs
    return schema


def choice_schema(
    tools: Sequence[ToolDefinition], output: OutputSchema | None = None, *, allow_calls: bool = True
) -> dict[str, Any]:
    """The JSON schema of "call one tool, or answer".

    A call is a single ``{"name", "arguments"}`` object, the shape Qwen-style models write
    natively (a ``{"tool_calls": [...]}`` wrapper made the 0.5B model answer without tools
    every time). The name is a ``const`` per tool with that tool's own argument schema, so
    the decoder can neither invent a tool nor produce arguments of the wrong shape. With
    ``allow_calls=False`` only the final answer is possible.
    """
    final = final_schema(output)
    if not allow_calls or not tools:
        return final
    defs = final.pop("$defs", None)
    schema: dict[str, Any] = {"anyOf": [*(call_schema(tool) for tool in tools), final]}
    if defs:
        schema["$defs"] = defs
    return schema


def tools_prompt(tools: Sequence[ToolDefinition], output: OutputSchema | None = None) -> str:
    """A short system-prompt addition for models whose chat template cannot list tools."""
    lines = ["You can call these tools:"]
    for tool in tools:
        params = json.dumps(_arguments_schema(tool).get("properties", {}), separators=(",", ":"))
        description = f": {tool.description.strip()}" if tool.description.strip() else ""
        lines.append(f"- {tool.name}{description} Arguments: {params}")
    final = "the answer as JSON matching the requested schema" if output is not None else "your answer"
    lines.append(
        'Reply with JSON only. To call a tool: {"name": "<tool>", "arguments": {...}}. '
        f'To answer: {{"final_answer": {final}}}.'
    )
    return "\n".join(lines)


def tool_rounds_since_user(messages: Sequence[Message]) -> int:
    """How many assistant tool-call turns follow the last user message (the current loop depth)."""
    rounds = 0
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, AssistantMessage) and message.tool_calls:
            rounds += 1
    return rounds


def render_messages(messages: Sequence[Message], *, extra_system: str = "") -> list[dict[str, str]]:
    """Render a conversation as plain role/content chat for a model asked to answer in JSON.

    Earlier tool calls become the assistant's own JSON (the same shape it must produce), and
    tool results become a user turn naming the tool, so the model reads its history in the
    format it writes. ``extra_system`` is appended to (or becomes) the system prompt.
    """
    rendered: list[dict[str, str]] = []
    system_done = not extra_system
    previous_was_result = False
    for message in messages:
        is_result = isinstance(message, ToolResultMessage)
        if isinstance(message, SystemMessage):
            content = message.content
            if not system_done:
                content = f"{content}\n\n{extra_system}" if content else extra_system
                system_done = True
            rendered.append({"role": "system", "content": content})
        elif isinstance(message, UserMessage):
            rendered.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            if message.tool_calls:
                content = "\n".join(
                    json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False)
                    for c in message.tool_calls
                )
            else:
                content = json.dumps({FINAL_ANSWER_KEY: message.content}, ensure_ascii=False)
            rendered.append({"role": "assistant", "content": content})
        elif isinstance(message, ToolResultMessage):
            label = "error" if message.is_error else "result"
            text = f"Tool {message.name} {label}: {message.content}"
            if previous_was_result:  # parallel calls: their results share one user turn
                rendered[-1]["content"] += "\n" + text
            else:
                rendered.append({"role": "user", "content": text})
        previous_was_result = is_result
    if not system_done:
        rendered.insert(0, {"role": "system", "content": extra_system})
    if messages and isinstance(messages[-1], ToolResultMessage):
        # Without this a small model answers with the bare tool result ("24.44") instead of
        # answering the question with it.
        rendered[-1]["content"] += "\n" + AFTER_TOOL_RESULTS
    return rendered


def _fresh_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def parse_choice(
    text: str, tools: Sequence[ToolDefinition], output: OutputSchema | None = None
) -> ToolChoice:
    """Parse the model's JSON choice back into a tool call (with a fresh id) or a final answer.

    Raises :class:`MalformedResponseError` (retryable) when the text is not a valid choice;
    with constrained decoding that only happens when the answer was cut off by ``max_tokens``.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedResponseError(
            f"tool choice is not valid JSON ({exc.msg} at char {exc.pos}); the answer may be cut off",
            fix="raise max_tokens",
        ) from exc
    problem = validate(value, choice_schema(tools, output))
    if problem:
        raise MalformedResponseError(f"tool choice does not match its schema: {problem}")
    if isinstance(value, dict) and "name" in value:
        call = ToolCall(id=_fresh_id(), name=value["name"], arguments=value.get("arguments") or {})
        return ToolChoice(tool_calls=(call,))
    final = value[FINAL_ANSWER_KEY]
    if output is not None:
        return ToolChoice(text=json.dumps(final, ensure_ascii=False), output=final)
    return ToolChoice(text=final if isinstance(final, str) else json.dumps(final, ensure_ascii=False))


_CUT_ANSWER = re.compile(r'^\s*\{\s*"' + FINAL_ANSWER_KEY + r'"\s*:\s*"')


def salvage_cut_answer(text: str) -> str | None:
    """The words of a plain-text final answer that ``max_tokens`` cut off, or ``None``.

    With constrained decoding a cut-off choice is the only malformed one. When the model was
    writing ``{"final_answer": "…`` (not a tool call, not a structured output) the text so far
    is a real, if unfinished, answer: returning it beats repeating the request, which at
    temperature 0 runs out in the same place again.
    """
    match = _CUT_ANSWER.match(text)
    if match is None:
        return None
    body = text[match.end():]
    for end in (len(body), len(body) - 1, len(body) - 2, len(body) - 5):  # drop a half-written escape
        if end < 0:
            break
        try:
            words = json.loads('"' + body[:end] + '"')
        except json.JSONDecodeError:
            continue
        return words.strip() or None
    return None


__all__ = [
    "FINAL_ANSWER_KEY",
    "salvage_cut_answer",
    "call_schema",
    "final_schema",
    "tool_rounds_since_user",
    "ToolChoice",
    "choice_schema",
    "parse_choice",
    "render_messages",
    "tools_prompt",
]
