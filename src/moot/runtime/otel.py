"""Optional OpenTelemetry export: run, task and agent events become spans.

Off by default, and nothing leaves the machine unless you configure it: call
:func:`enable_otel` (or set ``MOOT_OTEL=1`` so every graph run does) *and* configure an
OpenTelemetry tracer provider with an exporter, as you would for any other library. Needs the
``opentelemetry-sdk`` package: ``pip install 'moot[otel]'``.

Spans carry names, ids, statuses, usage and latency; prompts and answers only when the bus
records content (``EventBus(record_content=True)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from moot.errors import ConfigError
from moot.runtime.events import Event, EventBus, EventType

_OPENS = {
    EventType.RUN_STARTED: "run",
    EventType.TASK_STARTED: "task",
    EventType.AGENT_STARTED: "agent",
}
_CLOSES = {
    EventType.RUN_FINISHED: "run",
    EventType.RUN_FAILED: "run",
    EventType.TASK_FINISHED: "task",
    EventType.TASK_FAILED: "task",
    EventType.AGENT_FINISHED: "agent",
    EventType.AGENT_FAILED: "agent",
}


def _trace_module() -> Any:
    try:
        from opentelemetry import trace
    except ImportError:
        raise ConfigError(
            "OpenTelemetry export needs the opentelemetry-sdk package",
            fix="pip install 'moot[otel]'",
        ) from None
    return trace


def _attributes(event: Event) -> dict[str, Any]:
    attrs: dict[str, Any] = {"moot.event": event.type.value}
    for key in ("run_id", "task_id", "agent"):
        value = getattr(event, key)
        if value is not None:
            attrs[f"moot.{key}"] = value
    for key, value in event.payload.items():
        if isinstance(value, (str, bool, int, float)):
            attrs[f"moot.{key}"] = value
    return attrs


class OtelSubscriber:
    """Turns events into nested spans: run → task → agent, with model and tool events on them."""

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
        return ("agent", event.run_id or "", event.task_id or "", event.agent or "")

    def _parent(self, event: Event, level: str) -> Any | None:
        chain = {"task": ["run"], "agent": ["task", "run"], "event": ["agent", "task", "run"]}[level]
        for candidate in chain:
            span = self._spans.get(self._key(candidate, event))
            if span is not None:
                return span
        return None

    def __call__(self, event: Event) -> None:
        if event.type in _OPENS:
            level = _OPENS[event.type]
            parent = self._parent(event, level) if level != "run" else None
            context = self._trace.set_span_in_context(parent) if parent is not None else None
            name = f"moot.{level} {event.task_id or event.agent or event.payload.get('name', '')}".strip()
            span = self.tracer.start_span(name, context=context, attributes=_attributes(event))
            self._spans[self._key(level, event)] = span
        elif event.type in _CLOSES:
            span = self._spans.pop(self._key(_CLOSES[event.type], event), None)
            if span is not None:
                span.set_attributes(_attributes(event))
                if event.type.value.endswith("_failed"):
                    span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(event.payload.get("error", ""))))
                span.end()
        else:
            span = self._parent(event, "event")
            if span is not None:
                span.add_event(event.type.value, attributes=_attributes(event))


def enable_otel(bus: EventBus, *, tracer: Any | None = None) -> Callable[[], None]:
    """Export this bus's events as spans; returns a function that stops the export."""
    return bus.subscribe(OtelSubscriber(tracer))


__all__ = ["OtelSubscriber", "enable_otel"]
