"""Optional OpenTelemetry export: every run's events become spans.

Off by default, and nothing leaves the machine unless you ask: set ``MOOT_OTEL=1`` and every
``moot`` command sends its runs' spans over OTLP/HTTP to the collector that the standard
``OTEL_EXPORTER_OTLP_*`` variables name (:func:`configure_otlp_export`; Phoenix, Jaeger, the
OpenTelemetry Collector…). From Python, call :func:`configure_otlp_export` too, or configure
your own tracer provider as for any other library and call :func:`enable_otel` (or set
``MOOT_OTEL=1``) for the runs to use it. Needs ``pip install 'moot[otel]'``; see
docs/observability.md.

Spans nest run → task → agent → model call / tool call, and carry the OpenTelemetry GenAI
semantic-convention attributes: ``gen_ai.operation.name`` (``invoke_agent``, ``chat``,
``execute_tool``), ``gen_ai.agent.name``, ``gen_ai.provider.name``, ``gen_ai.request.model``,
``gen_ai.request.max_tokens``, ``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``,
``gen_ai.response.finish_reasons`` and ``gen_ai.tool.name``; moot's own details are under
``moot.*``. Prompts and answers are attached only when the bus records content
(``EventBus(record_content=True)``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from moot.errors import ConfigError
from moot.runtime.events import Event, EventBus, EventType

_OPENS = {
    EventType.RUN_STARTED: "run",
    EventType.TASK_STARTED: "task",
    EventType.AGENT_STARTED: "agent",
    EventType.MODEL_REQUEST: "chat",
}
_CLOSES = {
    EventType.RUN_FINISHED: "run",
    EventType.RUN_FAILED: "run",
    EventType.TASK_FINISHED: "task",
    EventType.TASK_FAILED: "task",
    EventType.AGENT_FINISHED: "agent",
    EventType.AGENT_FAILED: "agent",
    EventType.MODEL_RESPONSE: "chat",
}
_PARENTS = {
    "run": [],
    "task": ["run"],
    "agent": ["task", "run"],
    "chat": ["agent", "task", "run"],
    "event": ["chat", "agent", "task", "run"],
}


def otel_requested() -> bool:
    """Whether ``MOOT_OTEL`` asks every run to export spans."""
    return os.environ.get("MOOT_OTEL", "").strip().lower() not in ("", "0", "false", "no", "off")


def _trace_module() -> Any:
    try:
        from opentelemetry import trace
    except ImportError:
        raise ConfigError(
            "OpenTelemetry export needs the opentelemetry-sdk package",
            fix="pip install 'moot[otel]'",
        ) from None
    return trace


def _provider_and_model(model: str) -> tuple[str, str]:
    """``openai:gpt-4o`` → (``openai``, ``gpt-4o``); the embedded model is provider ``moot``."""
    provider, sep, name = model.partition(":")
    if provider == "local" or provider.startswith("local-"):
        return "moot", model
    if provider == "openai-compatible" and "#" in name:  # URL#MODEL: the model is what the server was asked for
        return provider, name.rsplit("#", 1)[1]
    return (provider, name) if sep else ("unknown", model)


def _attributes(event: Event) -> dict[str, Any]:
    attrs: dict[str, Any] = {"moot.event": event.type.value}
    for key in ("run_id", "task_id", "agent"):
        value = getattr(event, key)
        if value is not None:
            attrs[f"moot.{key}"] = value
    for key, value in event.payload.items():
        if isinstance(value, (str, bool, int, float)):
            attrs[f"moot.{key}"] = value
    if event.agent is not None:
        attrs["gen_ai.agent.name"] = event.agent
    payload = event.payload
    if event.type is EventType.AGENT_STARTED:
        attrs["gen_ai.operation.name"] = "invoke_agent"
    elif event.type is EventType.MODEL_REQUEST:
        attrs["gen_ai.operation.name"] = "chat"
        provider, model = _provider_and_model(str(payload.get("model", "")))
        attrs["gen_ai.provider.name"] = provider
        attrs["gen_ai.request.model"] = model
        if payload.get("max_tokens") is not None:
            attrs["gen_ai.request.max_tokens"] = payload["max_tokens"]
    elif event.type is EventType.MODEL_RESPONSE:
        attrs["gen_ai.operation.name"] = "chat"
        attrs["gen_ai.usage.input_tokens"] = int(payload.get("input_tokens", 0))
        attrs["gen_ai.usage.output_tokens"] = int(payload.get("output_tokens", 0))
        if payload.get("finish_reason"):
            attrs["gen_ai.response.finish_reasons"] = [str(payload["finish_reason"])]
    elif event.type in (EventType.AGENT_FINISHED, EventType.AGENT_FAILED, EventType.RUN_FINISHED, EventType.RUN_FAILED):
        if "input_tokens" in payload:
            attrs["gen_ai.usage.input_tokens"] = int(payload["input_tokens"])
            attrs["gen_ai.usage.output_tokens"] = int(payload.get("output_tokens", 0))
    elif event.type is EventType.TOOL_CALL:
        attrs["gen_ai.operation.name"] = "execute_tool"
        attrs["gen_ai.tool.name"] = str(payload.get("tool", ""))
    return attrs


class OtelSubscriber:
    """Turns events into nested spans: run → task → agent → chat / execute_tool."""

    def __init__(self, tracer: Any | None = None) -> None:
        trace = _trace_module()
        self._trace = trace
        self.tracer = tracer or trace.get_tracer("moot.runtime")
        self._spans: dict[tuple[str, ...], Any] = {}

    def _key(self, level: str, event: Event) -> tuple[str, ...]:
        if level == "run":
            return ("run", event.run_id or "")
        if level == "task":
            return ("task", event.run_id or "", event.task_id or "")
        return (level, event.run_id or "", event.task_id or "", event.agent or "")

    def _parent(self, event: Event, level: str) -> Any | None:
        for candidate in _PARENTS[level]:
            span = self._spans.get(self._key(candidate, event))
            if span is not None:
                return span
        return None

    def _name(self, level: str, event: Event) -> str:
        if level == "agent":
            return f"invoke_agent {event.agent or ''}".strip()
        if level == "chat":
            return f"chat {_provider_and_model(str(event.payload.get('model', '')))[1]}".strip()
        return f"moot.{level} {event.task_id or event.agent or event.payload.get('name', '')}".strip()

    def __call__(self, event: Event) -> None:
        if event.type in _OPENS:
            level = _OPENS[event.type]
            if level == "chat":  # a call still open got no answer it could use (not in the schema): the retry is a new call
                self._end(self._key("chat", event), event, error="the answer was not usable; the call was retried")
            parent = self._parent(event, level)
            context = self._trace.set_span_in_context(parent) if parent is not None else None
            span = self.tracer.start_span(self._name(level, event), context=context, attributes=_attributes(event),
                                          start_time=int(event.ts * 1e9))
            self._spans[self._key(level, event)] = span
        elif event.type in _CLOSES:
            level = _CLOSES[event.type]
            if level == "agent":  # a model call cut short (deadline, error) ends with its agent
                self._end(("chat", *self._key("agent", event)[1:]), event, error="the agent stopped during the call")
            self._end(self._key(level, event), event)
        elif event.type is EventType.TOOL_CALL:
            parent = self._parent(event, "agent")
            context = self._trace.set_span_in_context(parent) if parent is not None else None
            seconds = float(event.payload.get("seconds") or 0.0)
            span = self.tracer.start_span(f"execute_tool {event.payload.get('tool', '')}", context=context,
                                          attributes=_attributes(event), start_time=int((event.ts - seconds) * 1e9))
            if event.payload.get("error"):
                span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(event.payload["error"])))
            span.end(end_time=int(event.ts * 1e9))
        else:
            span = self._parent(event, "event")
            if span is not None:
                span.add_event(event.type.value, attributes=_attributes(event), timestamp=int(event.ts * 1e9))

    def _end(self, key: tuple[str, ...], event: Event, *, error: str | None = None) -> None:
        span = self._spans.pop(key, None)
        if span is None:
            return
        if error is None:
            span.set_attributes(_attributes(event))
            if event.type.value.endswith("_failed"):
                error = str(event.payload.get("error") or event.payload.get("stop_reason") or "")
        if error is not None:
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, error))
        span.end(end_time=int(event.ts * 1e9))


def enable_otel(bus: EventBus, *, tracer: Any | None = None) -> Callable[[], None]:
    """Export this bus's events as spans; returns a function that stops the export."""
    return bus.subscribe(OtelSubscriber(tracer))


DEFAULT_SERVICE_NAME = "moot"


def configure_otlp_export() -> Callable[[], None] | None:
    """With ``MOOT_OTEL`` set, send spans over OTLP/HTTP to the collector the standard variables
    name: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT`` (default
    ``http://localhost:4318``), ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME`` (default
    ``moot``)… — the exporter reads them itself. Every ``moot`` command calls this first; a
    Python program may too, or set its own tracer provider, which is then left alone.

    Returns the function that sends what is still buffered and closes the exporter (call it at
    exit), or ``None`` when ``MOOT_OTEL`` is not set or the application has its own provider.
    """
    if not otel_requested():
        return None
    trace = _trace_module()
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise ConfigError("MOOT_OTEL=1 sends spans over OTLP, which needs the OpenTelemetry exporter",
                          fix="pip install 'moot[otel]' (or unset MOOT_OTEL)") from None
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return None  # the application configured OpenTelemetry itself
    protocol = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf").strip()
    if protocol != "http/protobuf":
        raise ConfigError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not one moot sends",
                          fix="use http/protobuf (port 4318), which Phoenix, Jaeger and the OpenTelemetry Collector accept")
    attributes = {} if os.environ.get("OTEL_SERVICE_NAME", "").strip() else {"service.name": DEFAULT_SERVICE_NAME}
    _one_line_export_errors()
    provider = TracerProvider(resource=Resource.create(attributes), shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)

    def flush_and_close() -> None:
        provider.force_flush(timeout_millis=10_000)
        provider.shutdown()

    return flush_and_close


def _one_line_export_errors() -> None:
    """An unreachable collector is said once, in one line naming the fix, instead of the
    exporter's retry messages (the command itself goes on and keeps its exit status)."""
    import logging
    import sys

    class OneLine(logging.Handler):
        said = False

        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno < logging.WARNING or OneLine.said:
                return
            OneLine.said = True
            where = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
                     or "http://localhost:4318")
            sys.stderr.write(f"warning: could not send OpenTelemetry spans to {where} (fix: start the collector, "
                             "set OTEL_EXPORTER_OTLP_ENDPOINT, or unset MOOT_OTEL)\n")

    exporter_log = logging.getLogger("opentelemetry.exporter")
    if not any(type(h).__name__ == "OneLine" for h in exporter_log.handlers):
        exporter_log.addHandler(OneLine())
        exporter_log.propagate = False


_ATTACHED = "_moot_otel_attached"


def attach_if_requested(bus: EventBus) -> Callable[[], None] | None:
    """With ``MOOT_OTEL`` set, export ``bus`` once (runs sharing a bus share one exporter).

    Returns the function that detaches it, for the run that attached it; ``None`` otherwise.
    """
    if not otel_requested() or getattr(bus, _ATTACHED, False):
        return None
    remove = enable_otel(bus)
    setattr(bus, _ATTACHED, True)

    def detach() -> None:
        remove()
        setattr(bus, _ATTACHED, False)

    return detach


__all__ = ["OtelSubscriber", "attach_if_requested", "configure_otlp_export", "enable_otel", "otel_requested"]
