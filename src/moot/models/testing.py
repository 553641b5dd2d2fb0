"""Public test doubles: models that answer without a network or weights.

- :class:`ScriptedModel` answers from a queue of responses (or raises queued exceptions)
  and records every request it received.
- :class:`FunctionModel` lets a Python function decide each response.
- Both route by the calling agent's name (``request.agent``, set by the runtime for every
  agent call): ``ScriptedModel(by_agent={"planner": [...], "writer": [...]})`` or
  ``FunctionModel(by_agent({"planner": plan_fn, "writer": "done"}))``, so a test of a team
  never recognises an agent by its prompt text.
- :func:`block_real_requests` makes every real provider refuse to send anything, so a test
  that forgot to use a test model fails loudly instead of calling the internet.

Both test models count usage like a real one (tokens estimated from text length), so budget
and accounting code can be tested with them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Awaitable, Union

from moot.errors import RequestBlockedError
from moot.models.base import (
    Model,
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)

ScriptItem = Union[ModelResponse, str, ToolCall, list[ToolCall], dict[str, Any], BaseException]
"""What a script may hold: a full response, plain text, tool call(s), a structured-output
dict, or an exception to raise."""

_call_ids = itertools.count(1)


def _estimate_tokens(text: str) -> int:
    return max(1, int(len(text) / 3.5)) if text else 0


def to_response(item: ScriptItem, request: ModelRequest, model_name: str) -> ModelResponse:
    """Turn a script item into a complete response with usage filled in."""
    if isinstance(item, BaseException):
        raise item
    if isinstance(item, ModelResponse):
        response = item
    elif isinstance(item, str):
        response = ModelResponse(text=item)
    elif isinstance(item, ToolCall):
        response = ModelResponse(tool_calls=(item,), finish_reason="tool_calls")
    elif isinstance(item, list):
        response = ModelResponse(tool_calls=tuple(item), finish_reason="tool_calls")
    elif isinstance(item, dict):
        import json

        response = ModelResponse(text=json.dumps(item), output=item)
    else:  # pragma: no cover - guarded by the type
        raise TypeError(f"cannot script a {type(item).__name__}")
    if response.usage.requests == 0:
        out_text = response.text + "".join(str(c.arguments) + c.name for c in response.tool_calls)
        response = response.model_copy(
            update={
                "usage": Usage(
                    input_tokens=request.estimated_input_tokens(),
                    output_tokens=_estimate_tokens(out_text),
                    requests=1,
                )
            }
        )
    if response.output is None and request.output is not None and response.text and not response.tool_calls:
        from moot.models.base import charged_on_error, parse_json_output

        with charged_on_error(response.usage):  # a real provider bills a malformed answer too
            response = response.model_copy(update={"output": parse_json_output(response.text, request.output)})
    if not response.model:
        response = response.model_copy(update={"model": model_name})
    return response


def tool_call(name: str, /, **arguments: Any) -> ToolCall:
    """A tool call with a fresh id, for scripts: ``tool_call("add", a=1, b=2)``."""
    return ToolCall(id=f"call_{next(_call_ids)}", name=name, arguments=arguments)


@dataclass
class ScriptedModel(Model):
    """Answers each request with the next item of a script.

    >>> model = ScriptedModel(["Hello!", tool_call("add", a=1, b=2), "3"])

    When the script runs out it raises ``AssertionError`` (a test bug), unless ``repeat_last``
    is set. ``delay_s`` sleeps before each answer, to simulate latency.

    ``by_agent`` gives an agent its own script, chosen by the request's ``agent`` (the calling
    agent's name); requests from other agents take the shared ``script``:

    >>> model = ScriptedModel(by_agent={"planner": [{"steps": ["a"]}], "writer": ["Done."]})
    """

    script: list[ScriptItem] = field(default_factory=list)
    name: str = "scripted"
    delay_s: float = 0.0
    repeat_last: bool = False
    by_agent: dict[str, list[ScriptItem]] = field(default_factory=dict)
    """Scripts by agent name; ``repeat_last`` applies to each of them too."""
    requests: list[ModelRequest] = field(default_factory=list, init=False)
    """Every request received, in order."""

    def requests_from(self, agent: str) -> list[ModelRequest]:
        """The requests one agent sent, in order."""
        return [r for r in self.requests if r.agent == agent]

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        script = self.by_agent[request.agent] if request.agent in self.by_agent else self.script
        if not script:
            whose = f"agent {request.agent!r}'s script" if request.agent in self.by_agent else "its script"
            raise AssertionError(
                f"ScriptedModel {self.name!r} got request #{len(self.requests)} (agent {request.agent!r}) "
                f"but {whose} is empty"
            )
        item = script[0] if (self.repeat_last and len(script) == 1) else script.pop(0)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return to_response(item, request, self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = await self.request(request)
        # Stream word by word so consumers see more than one delta.
        words = response.text.split(" ")
        for i, word in enumerate(words):
            piece = word if i == 0 else " " + word
            if piece:
                yield TextDelta(piece)
        yield StreamDone(response)

    @property
    def last_request(self) -> ModelRequest:
        return self.requests[-1]


ResponseFunction = Callable[[ModelRequest], Union[ScriptItem, Awaitable[ScriptItem]]]


@dataclass
class FunctionModel(Model):
    """Lets ``function(request)`` decide every response (sync or async; may raise).

    >>> model = FunctionModel(lambda req: req.messages[-1].content.upper())

    ``request.agent`` names the calling agent; :func:`by_agent` builds a function that routes
    on it.
    """

    function: ResponseFunction
    name: str = "function"
    requests: list[ModelRequest] = field(default_factory=list, init=False)

    def requests_from(self, agent: str) -> list[ModelRequest]:
        """The requests one agent sent, in order."""
        return [r for r in self.requests if r.agent == agent]

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        item = self.function(request)
        if asyncio.iscoroutine(item) or isinstance(item, asyncio.Future):
            item = await item
        return to_response(item, request, self.name)  # type: ignore[arg-type]


def by_agent(
    routes: Mapping[str, ResponseFunction | ScriptItem],
    default: ResponseFunction | ScriptItem | None = None,
) -> ResponseFunction:
    """A :class:`FunctionModel` function that answers by the calling agent's name.

    Each route is a function of the request (sync or async) or a fixed answer (text, a dict of
    structured output, a :class:`ModelResponse`). ``default`` answers agents without a route;
    without one such a request fails the test with the agent's name::

        FunctionModel(by_agent({"mapper": map_fn, "skeptic": {"verdicts": []}}))
    """

    def route(request: ModelRequest) -> Any:
        answer = routes.get(request.agent or "", default) if request.agent in routes else default
        if answer is None:
            raise AssertionError(
                f"no scripted answer for agent {request.agent!r} (routes: {', '.join(sorted(routes))})"
            )
        return answer(request) if callable(answer) and not isinstance(answer, BaseException) else answer

    return route


# --------------------------------------------------------------------------- blocking real requests

_BLOCK_ENV = "MOOT_BLOCK_REAL_REQUESTS"
_blocked: bool | None = None


def real_requests_blocked() -> bool:
    """True when real providers must refuse to send (set by :func:`block_real_requests`
    or by the environment variable ``MOOT_BLOCK_REAL_REQUESTS=1``)."""
    if _blocked is not None:
        return _blocked
    return os.environ.get(_BLOCK_ENV, "") not in ("", "0", "false")


def check_allowed(model_name: str) -> None:
    """Called by every real provider before it sends a request."""
    if real_requests_blocked():
        raise RequestBlockedError(f"real request to model {model_name!r} blocked during tests")


@contextlib.contextmanager
def _set_blocked(value: bool) -> Iterator[None]:
    global _blocked
    previous = _blocked
    _blocked = value
    try:
        yield
    finally:
        _blocked = previous


def block_real_requests() -> contextlib.AbstractContextManager[None]:
    """Block real provider requests inside the ``with`` block (use in conftest for a whole suite)."""
    return _set_blocked(True)


def allow_real_requests() -> contextlib.AbstractContextManager[None]:
    """Allow real provider requests inside the ``with`` block (for tests of the embedded model)."""
    return _set_blocked(False)


@contextlib.contextmanager
def use_default_model(model: Model) -> Iterator[Model]:
    """Make ``model`` the default for everything inside the block that names no model (agents,
    teams, ``infer_model(None)``), as if ``MOOT_MODEL`` named it: for running code written for
    the default model, such as the README's examples, unchanged on a test model."""
    from moot.models.registry import _default_override

    _default_override.append(model)
    try:
        yield model
    finally:
        _default_override.remove(model)


__all__ = [
    "use_default_model",
    "FunctionModel",
    "by_agent",
    "ScriptedModel",
    "ScriptItem",
    "allow_real_requests",
    "block_real_requests",
    "check_allowed",
    "real_requests_blocked",
    "to_response",
    "tool_call",
]
