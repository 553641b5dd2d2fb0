"""Tools from plain Python functions.

A function's type hints become a JSON schema (through pydantic), its docstring becomes the
description, and each call's arguments are validated before the function runs. Whatever goes
wrong in a tool — invalid arguments, an exception, a timeout — goes back to the model as a
tool error it can correct, never as a crash of the run.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic_core import to_jsonable_python

from moot.errors import ConfigError
from moot.models.base import ToolCall, ToolDefinition, ToolResultMessage

DEFAULT_TIMEOUT_S = 30.0


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The description (first paragraph) and per-parameter text from a Google-style ``Args:``."""
    if not doc:
        return "", {}
    doc = inspect.cleandoc(doc)
    description = doc.split("\n\n", 1)[0].strip()
    description = re.split(r"\n\s*(Args|Arguments|Parameters|Returns|Raises):", description)[0]
    description = " ".join(description.split())
    params: dict[str, str] = {}
    match = re.search(r"^(?:Args|Arguments|Parameters):\s*\n((?:[ \t]+.*\n?|\s*\n)*)", doc, re.M)
    if match:
        current: str | None = None
        for line in match.group(1).splitlines():
            item = re.match(r"^\s+(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line)
            if item:
                current = item.group(1).lstrip("*")
                params[current] = item.group(2).strip()
            elif current and line.strip():
                params[current] += " " + line.strip()
    return description, params


def _arguments_model(fn: Callable[..., Any], name: str, param_docs: dict[str, str]) -> type[BaseModel]:
    signature = inspect.signature(fn)
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception:  # unresolved forward references: fall back to the raw annotations
        hints = {}
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ConfigError(
                f"tool {name!r} takes *{param.name}; a tool's arguments must be named",
                fix="give the function explicit, typed parameters",
            )
        annotation = hints.get(param.name, param.annotation)
        if annotation is inspect.Parameter.empty:
            annotation = Any
        default = ... if param.default is inspect.Parameter.empty else param.default
        from pydantic import Field

        fields[param.name] = (annotation, Field(default, description=param_docs.get(param.name)))
    return create_model(  # type: ignore[call-overload,no-any-return]
        f"{name}_arguments",
        __config__=ConfigDict(extra="forbid"),
        **fields,
    )


class ToolArgumentsError(ValueError):
    """The model's arguments did not match the tool's schema."""


@dataclass
class Tool:
    """A function the model can call, with its schema, description and timeout."""

    name: str
    description: str
    function: Callable[..., Any]
    arguments_model: type[BaseModel]
    """Validates the model's arguments (pydantic), and provides the JSON schema."""
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    """Per-call limit; an overrun becomes a tool error. Sync functions run in a worker thread,
    which cannot be killed: the model gets the timeout error while the thread finishes."""
    parameters: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
    ) -> Tool:
        """Build a tool from a sync or async function with type hints and a docstring."""
        if isinstance(fn, Tool):
            return fn
        tool_name = name or getattr(fn, "__name__", None)
        if not tool_name or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]{0,63}", tool_name):
            raise ConfigError(
                f"tool name {tool_name!r} is not a valid identifier", fix="pass name='my_tool'"
            )
        doc_description, param_docs = _parse_docstring(inspect.getdoc(fn))
        model = _arguments_model(fn, tool_name, param_docs)
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        return cls(
            name=tool_name,
            description=description if description is not None else doc_description,
            function=fn,
            arguments_model=model,
            timeout_s=timeout_s,
            parameters=schema,
        )

    def definition(self) -> ToolDefinition:
        """The tool as the model sees it."""
        return ToolDefinition(name=self.name, description=self.description, parameters=self.parameters)

    def validate_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validated (and coerced) keyword arguments, or :class:`ToolArgumentsError`."""
        try:
            parsed = self.arguments_model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolArgumentsError(f"invalid arguments for tool {self.name!r}: {problems}") from None
        return {name: getattr(parsed, name) for name in type(parsed).model_fields}

    async def call(self, arguments: dict[str, Any], *, timeout_s: float | None = None) -> Any:
        """Validate and run. ``timeout_s`` further limits the tool's own timeout (a deadline)."""
        kwargs = self.validate_arguments(arguments)
        limits = [t for t in (self.timeout_s, timeout_s) if t is not None]
        limit = min(limits) if limits else None
        if inspect.iscoroutinefunction(self.function):
            job = self.function(**kwargs)
        else:
            job = asyncio.to_thread(functools.partial(self.function, **kwargs))
        try:
            async with asyncio.timeout(limit):
                result = await job
        except TimeoutError:
            raise ToolTimeoutError(f"tool {self.name!r} did not finish within {limit:g} s") from None
        if inspect.isawaitable(result):
            result = await result
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calling a tool calls the plain function, so decorated functions stay usable."""
        return self.function(*args, **kwargs)


class ToolTimeoutError(TimeoutError):
    """A tool ran past its timeout."""


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *, name: str | None = None, description: str | None = None, timeout_s: float | None = DEFAULT_TIMEOUT_S
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` from a function: ``@tool`` or ``@tool(name=..., timeout_s=...)``."""
    if fn is not None:
        return Tool.from_function(fn, name=name, description=description, timeout_s=timeout_s)
    return lambda f: Tool.from_function(f, name=name, description=description, timeout_s=timeout_s)


class ToolSource(Protocol):
    """Something that supplies tools when a run starts (an MCP server): listed once per run."""

    name: str

    async def tools_for_run(self, run_key: str, *, timeout_s: float | None = None) -> Sequence[Tool]: ...


def split_tool_sources(items: Any) -> tuple[list[Any], list[ToolSource]]:
    """Tools and functions apart from tool sources (objects with ``tools_for_run``)."""
    plain: list[Any] = []
    sources: list[ToolSource] = []
    for item in items or ():
        (sources if callable(getattr(item, "tools_for_run", None)) else plain).append(item)
    return plain, sources


def as_tools(items: Any) -> tuple[Tool, ...]:
    """Tools from a list of tools and plain functions; duplicate names are a config error."""
    tools = tuple(Tool.from_function(item) for item in items or ())
    seen: set[str] = set()
    for t in tools:
        if t.name in seen:
            raise ConfigError(f"two tools are named {t.name!r}", fix="pass name= to one of them")
        seen.add(t.name)
    return tools


def render_result(value: Any) -> str:
    """A tool's return value as the text the model reads."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(to_jsonable_python(value), ensure_ascii=False)
    except Exception:
        return repr(value)


@dataclass(frozen=True)
class ToolOutcome:
    """What happened when one tool call ran (for the transcript and events)."""

    call: ToolCall
    message: ToolResultMessage
    result: Any = None
    error: str | None = None
    seconds: float = 0.0


async def run_tool_call(
    tools: dict[str, Tool], call: ToolCall, *, timeout_s: float | None = None
) -> ToolOutcome:
    """Run one tool call; every failure becomes an error result for the model to read."""
    started = time.perf_counter()
    tool_ = tools.get(call.name)
    result: Any = None
    error: str | None = None
    if tool_ is None:
        known = ", ".join(sorted(tools)) or "none"
        error = f"there is no tool named {call.name!r}; available tools: {known}"
    else:
        try:
            result = await tool_.call(dict(call.arguments), timeout_s=timeout_s)
        except ToolArgumentsError as exc:
            error = f"{exc}. Call the tool again with corrected arguments."
        except ToolTimeoutError as exc:
            error = str(exc)
        except Exception as exc:  # the model should see what went wrong and adapt
            error = f"tool {call.name!r} raised {type(exc).__name__}: {exc}"
    content = f"error: {error}" if error else render_result(result)
    message = ToolResultMessage(
        tool_call_id=call.id, name=call.name, content=content, is_error=error is not None
    )
    return ToolOutcome(
        call=call, message=message, result=result, error=error, seconds=time.perf_counter() - started
    )


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "Tool",
    "ToolArgumentsError",
    "ToolOutcome",
    "ToolSource",
    "ToolTimeoutError",
    "as_tools",
    "render_result",
    "run_tool_call",
    "split_tool_sources",
    "tool",
]
