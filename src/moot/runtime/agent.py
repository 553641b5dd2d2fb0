"""SubAgent: one model, one system prompt, some tools, and an isolated conversation per task.

``SubAgent.run`` is a tool-calling loop with a turn limit and a budget: it sends the
conversation, runs the tools the model asks for, and stops when the model gives a final answer
(validated against ``output_type`` when one is set), when ``max_turns`` is reached, or when a
budget limit would be crossed by the next request. It returns an :class:`AgentResult` in every
case except cancellation, which propagates (read ``progress`` for the partial state).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import TypeAdapter, ValidationError

from moot.errors import MalformedResponseError, ModelError, MootError
from moot.models.base import (
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputSchema,
    StreamDone,
    SystemMessage,
    TextDelta,
    Usage,
    UserMessage,
)
from moot.models.attempts import attempts_counted_by
from moot.models.timing import RequestClock, timed_by
from moot.runtime.budget import Budget, BudgetExceeded, BudgetTracker
from moot.runtime.events import BoundEmitter, EventBus, EventType, summarize
from moot.runtime.metered import MeteredCall
from moot.runtime.prompts import load_prompt
from moot.runtime.tools import Tool, ToolSource, as_tools, render_result, run_tool_call, split_tool_sources


@dataclass
class AgentProgress:
    """The live state of one agent run; still readable after the run was cancelled."""

    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    last_text: str = ""
    top_logprobs: dict[str, float] | None = None


@dataclass(frozen=True)
class AgentResult:
    """What one agent run produced."""

    agent: str
    output: Any
    """The validated ``output_type`` value, else the final text (partial text when stopped)."""
    text: str
    """The model's last text."""
    usage: Usage
    transcript: tuple[Message, ...]
    """The whole conversation, system prompt first."""
    stop_reason: str
    """``completed``, ``max_turns``, ``budget:<calls|tokens|cost|deadline>`` or ``error:<message>``."""
    turns: int
    """Model requests made."""
    detail: str | None = None
    """A sentence a user can read about why it stopped, when it did not complete."""
    budget_scope: str | None = None
    """For a budget stop: ``run`` or the agent whose own budget was hit."""
    top_logprobs: dict[str, float] | None = None
    """The last answer's first-token odds, when the agent's settings asked for ``top_logprobs``
    and its model gives them (:attr:`moot.models.ModelResponse.top_logprobs`)."""

    @property
    def ok(self) -> bool:
        return self.stop_reason == "completed"


render_value = render_result
"""A value as text for a prompt: strings as they are, everything else as JSON (as tool results)."""


def render_context(context: Mapping[str, Any]) -> str:
    """The block that hands dependency results to a task."""
    lines = ["Results from earlier tasks:"]
    for key, value in context.items():
        lines.append(f"[{key}] {render_value(value)}")
    return "\n".join(lines)


async def _streamed(model: Model, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
    """One request through the model's stream: each text delta to ``on_text``, the whole response returned."""
    final: ModelResponse | None = None
    async for event in model.stream(request):
        if isinstance(event, TextDelta):
            on_text(event.text)
        elif isinstance(event, StreamDone):
            final = event.response
    if final is None:
        raise MalformedResponseError(f"{getattr(model, 'name', 'the model')}'s stream ended without its response")
    return final


def _is_text_type(output_type: Any) -> bool:
    return output_type is None or output_type is str


@dataclass
class SubAgent:
    """A specialist: a name, a role, a system prompt, tools and a model."""

    name: str
    role: str = ""
    system_prompt: str = ""
    tools: Sequence[Tool | Any] = ()
    """:class:`Tool` objects, plain functions (turned into tools), and tool sources such as an
    :class:`~moot.runtime.mcp.MCPToolServer` (its tools are listed once per run)."""
    model: Model | str | None = None
    """A :class:`Model`, a model string (``local``, ``openai:…``), or ``None`` for the default."""
    output_type: Any = None
    """A pydantic model, TypedDict, ``list[str]``… for structured output; ``None`` for text."""
    max_turns: int = 6
    """Most model requests per task (tool rounds plus the final answer)."""
    answer_on_last_turn: bool = True
    """Send the last request that ``max_turns`` or a call budget allows with ``tool_choice="none"``,
    so the model answers with what it has gathered; otherwise a tool loop still searching on its
    last turn ends with ``max_turns`` or ``budget:calls`` and no answer."""
    settings: ModelSettings = field(default_factory=ModelSettings)
    budget: Budget | None = None
    """This agent's own limits, on top of the run's (``deadline_s`` counts from its start)."""
    _tools: tuple[Tool, ...] = field(init=False, repr=False)
    _sources: tuple[ToolSource, ...] = field(init=False, repr=False)
    _model: Model | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        plain, sources = split_tool_sources(self.tools)
        self._tools = as_tools(plain)
        self._sources = tuple(sources)
        self.tools = (*self._tools, *self._sources)
        if isinstance(self.model, Model):
            self._model = self.model

    # ------------------------------------------------------------------ helpers

    def resolved_model(self) -> Model:
        """The model object, built from the model string on first use."""
        if self._model is None:
            from moot.models.registry import infer_model  # lazy: loads providers only when needed

            self._model = infer_model(self.model)  # type: ignore[arg-type]
        return self._model

    def with_output(self, output_type: Any) -> SubAgent:
        """The same agent (name, prompt, tools, model object) answering with another output type."""
        copy = replace(self, output_type=output_type)
        copy._model = self._model
        return copy

    def output_schema(self) -> OutputSchema | None:
        if _is_text_type(self.output_type):
            return None
        schema = TypeAdapter(self.output_type).json_schema()
        name = getattr(self.output_type, "__name__", None) or "output"
        return OutputSchema(name=str(name), json_schema=schema, description=self.role)

    def instructions(self) -> str:
        return self.system_prompt or f"You are the {self.name} agent. Your role: {self.role or 'assistant'}."

    def _validate_output(self, response: ModelResponse) -> Any:
        value = response.output
        if value is None:
            text = response.text.strip()
            if text.startswith("```"):
                text = text.split("\n", 1)[1] if "\n" in text else ""
                text = text.rsplit("```", 1)[0]
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"the answer is not valid JSON ({exc.msg})") from None
        try:
            return TypeAdapter(self.output_type).validate_python(value)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
            )
            raise ValueError(problems) from None

    # ------------------------------------------------------------------ the loop

    async def run(
        self,
        task: str,
        context: Mapping[str, Any] | None = None,
        *,
        budget: Budget | BudgetTracker | None = None,
        bus: EventBus | None = None,
        progress: AgentProgress | None = None,
        run_id: str | None = None,
        task_id: str | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> AgentResult:
        """Run one task in a fresh conversation; ``context`` values are shown to the model.

        ``on_text`` hears the model's text as it is generated (``moot chat`` prints it): each
        request then goes through the model's ``stream``, and is recorded and charged the same."""
        emitter = BoundEmitter(bus, {"run_id": run_id, "task_id": task_id, "agent": self.name})
        if isinstance(budget, BudgetTracker):
            tracker = budget
        else:
            tracker = BudgetTracker(
                budget,
                on_warning=lambda scope, which, detail: emitter.emit(
                    EventType.BUDGET_WARNING, scope=scope, which=which, detail=detail
                ),
            )
        tracker.register_agent(self.name, self.budget)
        state = progress if progress is not None else AgentProgress()
        user_text = task if not context else f"{render_context(context)}\n\nYour task: {task}"
        state.messages[:] = [SystemMessage(content=self.instructions()), UserMessage(content=user_text)]
        emitter.emit(EventType.AGENT_STARTED, role=self.role, task=summarize(task))
        try:
            tools = self._tools
            if self._sources:
                tools = await self._tools_for_run(run_id or f"agent-{id(tracker)}", tracker, emitter)
            result = await self._loop(state, tracker, emitter, tools, on_text=on_text)
        except asyncio.CancelledError:
            emitter.emit(EventType.AGENT_FAILED, stop_reason="cancelled", **_usage_payload(state.usage))
            raise
        kind = EventType.AGENT_FINISHED if result.ok or result.stop_reason.startswith("budget:") else EventType.AGENT_FAILED
        emitter.emit(
            kind,
            stop_reason=result.stop_reason,
            detail=result.detail,
            turns=result.turns,
            output=summarize(render_value(result.output)) if emitter.record_content else None,
            **_usage_payload(result.usage),
        )
        return result

    async def _tools_for_run(self, run_key: str, tracker: BudgetTracker, emitter: BoundEmitter) -> tuple[Tool, ...]:
        """This agent's tools with its sources' tools (listed once per run by each source).
        A source that cannot list its tools is left out, with a failed ``tool_call`` event
        that says why; a name already taken gets the source's name in front."""
        tools = list(self._tools)
        taken = {t.name for t in tools}
        for source in self._sources:
            started = time.perf_counter()
            try:
                listed = await source.tools_for_run(run_key, timeout_s=tracker.time_left(self.name))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                emitter.emit(EventType.TOOL_CALL, tool=f"{source.name}:list_tools", arguments="{}", result=None,
                             error=str(exc) or type(exc).__name__, ok=False, seconds=round(time.perf_counter() - started, 4),
                             server=getattr(source, "source", source.name))
                continue
            for t in listed:
                if t.name in taken:
                    t = dataclasses.replace(t, name=f"{source.name}_{t.name}"[:64])
                taken.add(t.name)
                tools.append(t)
        return tuple(tools)

    async def _loop(self, state: AgentProgress, tracker: BudgetTracker, emitter: BoundEmitter,
                    tools: tuple[Tool, ...] | None = None, *, on_text: Callable[[str], None] | None = None) -> AgentResult:
        model = self.resolved_model()
        tools = self._tools if tools is None else tools
        tools_by_name = {t.name: t for t in tools}
        definitions = tuple(t.definition() for t in tools)
        output_schema = self.output_schema()
        retried_output = False

        def finish(stop_reason: str, output: Any = None, detail: str | None = None, scope: str | None = None) -> AgentResult:
            return AgentResult(
                agent=self.name,
                output=output if output is not None else (state.last_text if stop_reason != "completed" else output),
                text=state.last_text,
                usage=state.usage,
                transcript=tuple(state.messages),
                stop_reason=stop_reason,
                turns=state.turns,
                detail=detail,
                budget_scope=scope,
                top_logprobs=state.top_logprobs,
            )

        while state.turns < self.max_turns:
            last = self.answer_on_last_turn and bool(definitions) and (
                self.max_turns - state.turns == 1 or tracker.calls_left(self.name) == 1)
            request = ModelRequest(
                messages=tuple(state.messages), tools=definitions, tool_choice="none" if last else "auto",
                output=output_schema, settings=self.settings, agent=self.name,
            )
            try:
                call, request = await MeteredCall.start(tracker, self.name, request, model)
            except BudgetExceeded as exc:
                emitter.emit(EventType.BUDGET_STOP, which=exc.which, scope=exc.scope, reason=exc.message)
                return finish(exc.stop_reason, detail=exc.message, scope=exc.scope)
            reservation = call.first
            state.turns += 1
            if emitter.active:  # build event payloads only when someone listens: this is the hot path
                request_payload: dict[str, Any] = {
                    "turn": state.turns,
                    "model": getattr(model, "name", "?"),
                    "estimated_input_tokens": reservation.input_tokens or reservation.tokens - (request.settings.max_tokens or 0),
                    "max_tokens": request.settings.max_tokens,
                }
                if last:
                    request_payload["tool_choice"] = "none (the last request allowed: the agent must answer)"
                if emitter.record_content:
                    request_payload["messages"] = [m.model_dump() for m in request.messages]
                emitter.emit(EventType.MODEL_REQUEST, **request_payload)
            started = time.perf_counter()
            clock = RequestClock()
            response: ModelResponse | None = None
            # Every attempt the wrappers send (retries, fallbacks) is held and charged on the
            # tracker through `call`; what it charged in all is this turn's usage.
            try:
                with attempts_counted_by(call), timed_by(clock):
                    async with asyncio.timeout(tracker.time_left(self.name)) as deadline:
                        response = await (model.request(request) if on_text is None else _streamed(model, request, on_text))
            except TimeoutError:
                if not deadline.expired():
                    raise
                # The request was sent and the prompt processed: it counts as a call, with its
                # estimated prompt size (what it generated before the cut is unknown).
                state.usage = state.usage + call.abandon(Usage(requests=1, input_tokens=request.estimated_input_tokens()))
                exc = tracker.deadline_error(self.name)
                emitter.emit(EventType.BUDGET_STOP, which=exc.which, scope=exc.scope, reason=exc.message)
                return finish(exc.stop_reason, detail=exc.message, scope=exc.scope)
            except asyncio.CancelledError:
                state.usage = state.usage + call.abandon(Usage(requests=1, input_tokens=request.estimated_input_tokens()))
                raise
            except BudgetExceeded as exc:  # a retry or a fallback did not fit: the attempts so far count
                state.usage = state.usage + call.close(None)
                emitter.emit(EventType.BUDGET_STOP, which=exc.which, scope=exc.scope, reason=exc.message)
                return finish(exc.stop_reason, detail=exc.message, scope=exc.scope)
            except MalformedResponseError as exc:
                # The model answered, but not in the schema: count the call(s), then retry once.
                call.failed(exc)
                state.usage = state.usage + call.close(None)
                if output_schema is not None and not retried_output:
                    retried_output = True
                    state.messages.append(UserMessage(content=load_prompt("structured_retry").format(error=exc.message)))
                    continue
                return finish(f"error:{exc.message}", detail=exc.message)
            except ModelError as exc:
                call.failed(exc)
                state.usage = state.usage + call.close(None)
                return finish(f"error:{exc.message}", detail=exc.one_line())
            except MootError as exc:  # a setting or the weights (not the model's answer): keep the fix it names
                state.usage = state.usage + call.close(None)
                return finish(f"error:{exc.message}", detail=exc.one_line())
            except Exception as exc:  # a broken model must fail this task, not the process
                state.usage = state.usage + call.close(None)
                return finish(f"error:{type(exc).__name__}: {exc}", detail=f"{type(exc).__name__}: {exc}")
            charged = call.close(response.usage)
            if call.attempts > 1 or charged != response.usage:  # what the retries cost is in the answer's usage
                response = response.model_copy(update={"usage": charged})
            state.usage = state.usage + response.usage
            state.last_text = response.text
            state.top_logprobs = response.top_logprobs
            state.messages.append(response.to_message())
            if emitter.active:
                latency = time.perf_counter() - started
                response_payload: dict[str, Any] = {
                    "turn": state.turns,
                    "latency_s": round(latency, 4),
                    **clock.split(latency).as_dict(),
                    "finish_reason": response.finish_reason,
                    "tool_calls": [c.name for c in response.tool_calls],
                    **_usage_payload(response.usage),
                }
                if emitter.record_content:
                    response_payload["text"] = response.text
                emitter.emit(EventType.MODEL_RESPONSE, **response_payload)

            if response.tool_calls:
                outcomes = await asyncio.gather(
                    *(run_tool_call(tools_by_name, call, timeout_s=tracker.time_left(self.name)) for call in response.tool_calls)
                )
                for outcome in outcomes:
                    state.messages.append(outcome.message)
                    source = getattr(tools_by_name.get(outcome.call.name), "source", None)
                    emitter.emit(
                        EventType.TOOL_CALL,
                        tool=outcome.call.name,
                        arguments=summarize(json.dumps(outcome.call.arguments, default=str)),
                        result=None if outcome.error else summarize(outcome.message.content),
                        error=outcome.error,
                        ok=outcome.error is None,
                        seconds=round(outcome.seconds, 4),
                        **({"server": source} if source else {}),
                    )
                continue

            if output_schema is None:
                return finish("completed", output=response.text)
            try:
                return finish("completed", output=self._validate_output(response))
            except ValueError as exc:
                if retried_output:
                    detail = f"the answer did not match the output schema after one retry: {exc}"
                    return finish(f"error:{detail}", detail=detail)
                retried_output = True
                state.messages.append(UserMessage(content=load_prompt("structured_retry").format(error=exc)))

        detail = f"agent {self.name!r} reached max_turns={self.max_turns} without a final answer"
        return finish("max_turns", detail=detail)


def _usage_payload(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "requests": usage.requests,
        "cost_usd": usage.cost_usd,
    }


__all__ = ["AgentProgress", "AgentResult", "SubAgent", "render_context", "render_value"]
